"""The largest whole-system count inside an envelope: a search over counts of a built cluster.

Why a search and not a division: facility power, racks and capex of a built cluster are not proportional to the
system count (leaves and spines come in whole switches per SU, storage in whole appliances, management and
network racks in steps), so "limit / per-system power" can be off by a few systems either way. Each probe is a
real build (`probe.py`: the same physical chain a plan uses), and the search only decides which counts to build.

Every measured figure grows with the count (more systems never need fewer switches, racks or dollars), so the
fitting counts are 1..N and the answer is N; the search brackets N between a count that fits and one that does
not and closes the bracket by steps that alternate a linear interpolation on the limit that broke (a build is
close to linear in its count, so this usually lands within a system or two) with plain bisection (which bounds
the probes at about 2 log2(N) whatever the shape). It ends with N fitting and N + 1 built and refused, so the
plan can say what one more system would break.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["CEILING", "FABRIC", "Fit", "Probe", "breaks", "largest_within"]

FABRIC = "fabric"  # no catalog fabric (or rack) can build the count
CEILING = "max_cluster_gpus"  # the planner's largest cluster (assumption max_cluster_gpus)


@dataclass(frozen=True)
class Probe:
    """One count, built: its measured figures by envelope key (facility_mw, it_mw, racks, capex_usd, gpus), or
    the reason it cannot be built at all (`refusal`: fabric or rack limits)."""

    systems: int
    measured: Mapping[str, float | None]
    refusal: str | None = None
    build: object = None  # what the prober built (kept so the chosen count is not built twice)


def breaks(probe: Probe, limits: Mapping[str, float]) -> list[str]:
    """The limits this probe exceeds, by key (FABRIC when it cannot be built); none when it fits.

    A limit whose figure is unknown (capex without prices) cannot be checked; the prober refuses such a count
    instead, so it never passes silently."""
    if probe.refusal is not None:
        return [FABRIC]
    return [key for key, limit in limits.items() if (probe.measured.get(key) or 0.0) > limit * (1 + 1e-12)]


@dataclass(frozen=True)
class Fit:
    """The search's answer: `best` fits every limit (None when not even one system does), `above` is the first
    count that does not (None when `best` is the ceiling itself), `binding` the key that stops growth."""

    best: Probe | None
    above: Probe | None
    binding: str
    probes: int
    ceiling_systems: int


def _line(lo: Probe | None, hi: Probe, limits: Mapping[str, float], keys: list[str]) -> float | None:
    """The count where the first of `keys` reaches its limit on the straight line through `lo` (or zero) and
    `hi`; None when no key rises along it."""
    lo_n = lo.systems if lo is not None else 0
    guesses = []
    for key in keys:
        top = hi.measured.get(key) or 0.0
        bottom = (lo.measured.get(key) or 0.0) if lo is not None else 0.0
        if top > bottom:
            guesses.append(lo_n + (limits[key] - bottom) / (top - bottom) * (hi.systems - lo_n))
    return min(guesses) if guesses else None


def _interpolate(lo: Probe | None, hi: Probe, limits: Mapping[str, float]) -> int | None:
    """Inside a bracket: where the first limit `hi` breaks is reached (None when `hi` cannot be built at all)."""
    broken = breaks(hi, limits)
    if FABRIC in broken:
        return None
    at = _line(lo, hi, limits, broken)
    return None if at is None else math.floor(at)


def largest_within(
    prober: Callable[[int], Probe], limits: Mapping[str, float], ceiling_systems: int, first_systems: int = 1
) -> Fit:
    """Largest count in 1..ceiling_systems whose build fits every limit (see the module docstring).

    `first_systems` is the first count built (one SU is a good start). Until a count breaks a limit, the next
    count is where the straight line through the last two fitting builds (or zero and the first) reaches the
    first limit; a build is nearly linear in its count, so that lands within a system or two of the answer, and
    the count above it is built at once. Inside a bracket, interpolation alternates with bisection."""
    built: dict[int, Probe] = {}

    def probe(n: int) -> Probe:
        if n not in built:
            built[n] = prober(n)
        return built[n]

    def done(lo: Probe | None, hi: Probe) -> Fit:
        order = [FABRIC, *limits]  # the fabric first: no limit can be met by a cluster that cannot be built
        key = min(breaks(hi, limits), key=order.index)
        return Fit(lo, hi, key, len(built), ceiling_systems)

    lo: Probe | None = None
    base: Probe | None = None  # the first fitting build: the widest base for the line's slope
    hi = probe(max(1, min(ceiling_systems, first_systems)))
    while not breaks(hi, limits):  # no upper end yet: extrapolate along the fitting builds
        if hi.systems >= ceiling_systems:
            return Fit(hi, None, CEILING, len(built), ceiling_systems)
        lo = hi
        base = base or lo
        through = base if base is not lo else None
        at = _line(through, lo, limits, list(limits))
        n = lo.systems * 2 if at is None else math.floor(at)
        n = min(ceiling_systems, max(n, lo.systems + 1))
        hi = probe(n)
        if not breaks(hi, limits) and through is not None and n < ceiling_systems and at is not None:
            above = probe(n + 1)  # a line through two builds lands on the answer: the next count most likely breaks
            if breaks(above, limits):
                return done(hi, above)
            hi = above
    interpolate = True
    while hi.systems - (lo.systems if lo is not None else 0) > 1:
        lo_n = lo.systems if lo is not None else 0
        guess = _interpolate(lo, hi, limits) if interpolate else None
        n = guess if guess is not None else (lo_n + hi.systems) // 2
        n = min(max(n, lo_n + 1), hi.systems - 1)
        p = probe(n)
        if breaks(p, limits):
            hi = p
        else:
            lo = p
            if guess is not None and n + 1 < hi.systems:  # the line usually lands just below: check one more at once
                q = probe(n + 1)
                lo, hi = (lo, q) if breaks(q, limits) else (q, hi)
        interpolate = not interpolate
    return done(lo, hi)
