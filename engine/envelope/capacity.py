"""Plan inside an envelope: the largest cluster of each system that fits every limit, the limit that binds, and
the trade-off across systems.

`fit_system` runs the count search (`search.py`) over real builds (`probe.py`); `envelope_summary` turns the
chosen fit into the plan's `envelope` section; `options` is the side-by-side table `system: auto` reports (under
50 MW: N GB200 NVL72 racks against M DGX H100 systems, with their GPUs, PFLOPS and capex). Training and
inference requests use `fit_system` too, to cap their GPU count (`chain.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Catalog, System
from engine.costing.inputs import CostInputs
from engine.envelope.probe import Built, Prober, StorageInputs, ceiling_systems
from engine.envelope.search import CEILING, FABRIC, Fit, Probe, largest_within
from engine.request.envelope import ENVELOPE_LIMITS
from engine.request.spec import PlanRequest
from engine.result.envelope import EnvelopeLimit, EnvelopeOption, EnvelopeSummary

__all__ = ["SystemFit", "binding_words", "envelope_summary", "fit_system", "option_row", "plan_systems"]

NO_PRICES = (
    "capex: the capex limit needs component prices, and none were given to the engine (the web app and the API "
    "give them; a bare engine call does not)"
)


@dataclass(frozen=True)
class SystemFit:
    """One system's answer: the fit (None when the search could not run) and the problem that stopped it."""

    system: System
    fit: Fit | None
    problem: str | None = None

    @property
    def built(self) -> Built | None:
        best = self.fit.best if self.fit is not None else None
        return best.build if best is not None else None  # type: ignore[return-value]

    @property
    def systems(self) -> int:
        best = self.fit.best if self.fit is not None else None
        return best.systems if best is not None else 0


def plan_systems(request: PlanRequest, catalog: Catalog) -> list[str]:
    """The systems a capacity plan builds: the one asked for, or every owned catalog system with `auto`."""
    if request.hardware.system != "auto":
        return [request.hardware.system]
    return [s for s in catalog.auto_systems() if not catalog.systems[s].rented]


def fit_system(
    request: PlanRequest,
    system: System,
    catalog: Catalog,
    a: Assumptions,
    prices: CostInputs | None,
    storage: StorageInputs | None = None,
) -> SystemFit:
    """The largest whole-system count of `system` inside `request.envelope` (whole SUs are the fabric's business:
    a count the fabric cannot connect is refused by the build, and the search stops below it)."""
    assert request.envelope is not None
    limits = request.envelope.given()
    if "capex_usd" in limits and prices is None:
        return SystemFit(system, None, NO_PRICES)
    prober = Prober(request, system, catalog, a, storage or StorageInputs(), prices)
    ceiling = ceiling_systems(system, a, limits.get("gpus"))
    ceiling, refused = _buildable_ceiling(prober, ceiling)
    if ceiling == 0:
        return SystemFit(system, Fit(None, refused, FABRIC, 0, 0))
    fit = largest_within(prober, limits, ceiling, first_systems=system.su_systems)
    if fit.binding == CEILING and refused is not None:
        fit = replace(fit, above=refused, binding=FABRIC)
    return SystemFit(system, fit)


def _buildable_ceiling(prober: Prober, ceiling: int) -> tuple[int, Probe | None]:
    """The largest count up to `ceiling` that can be built at all (rack limits, a fabric that connects it), by
    bisection on the cheap check, and the refused count just above it (None when the ceiling itself builds)."""
    reason = prober.refusal(ceiling)
    if not reason:
        return ceiling, None
    lo, hi, why = 0, ceiling, reason
    while hi - lo > 1:
        mid = (lo + hi) // 2
        text = prober.refusal(mid)
        if text:
            hi, why = mid, text
        else:
            lo = mid
    return lo, Probe(hi, {}, refusal=why)


def _figure(key: str, value: float) -> str:
    unit = ENVELOPE_LIMITS[key][1]
    if key == "capex_usd":
        return f"${value:,.0f}"
    if unit == "MW":
        return f"{value:,.3f} MW"
    return f"{value:,.0f} {unit}"


def _count(systems: int) -> str:
    return f"{systems:,} system" + ("" if systems == 1 else "s")


def binding_words(sf: SystemFit, limits: dict[str, float]) -> str:
    """Why growth stopped, in words: the limit and what one more system would need, or the build's own reason."""
    fit, sid = sf.fit, sf.system.id
    if fit is None:
        return sf.problem or "not searched"
    above = fit.above
    if fit.binding == CEILING:
        return (
            f"the fabric ceiling: the largest cluster whose networks the planner builds (assumption "
            f"max_cluster_gpus, {fit.ceiling_systems:,} x {sid}); larger clusters need more fabric tiers and "
            "campus-length links than are modelled"
        )
    if fit.binding == FABRIC:
        reason = above.refusal if above is not None else ""
        # Usually the compute fabric (no catalog design connects that many); a rack or cooling rule says its own.
        what = "the fabric ceiling" if reason.startswith("fabric") else "what the catalog can build"
        return f"{what}: {above.systems if above else 0:,} x {sid} cannot be built ({reason})"
    label = ENVELOPE_LIMITS[fit.binding][0]
    needed = above.measured.get(fit.binding) if above is not None else None
    more = f"; {_count(above.systems)} would need {_figure(fit.binding, needed)}" if above and needed else ""
    return f"{label} ({_figure(fit.binding, limits[fit.binding])}){more}"


def _limit_rows(sf: SystemFit, limits: dict[str, float], used: dict[str, float | None]) -> tuple[EnvelopeLimit, ...]:
    rows = []
    binding = sf.fit.binding if sf.fit is not None else None
    for key, limit in limits.items():
        figure = used.get(key)
        headroom = None if figure is None else limit - figure
        rows.append(
            EnvelopeLimit(
                key=key,
                label=ENVELOPE_LIMITS[key][0],
                unit=ENVELOPE_LIMITS[key][1],
                limit=float(limit),
                used=figure,
                headroom=headroom,
                headroom_percent=None if headroom is None else round(100.0 * headroom / limit, 3),
                binding=key == binding,
            )
        )
    return tuple(rows)


def option_row(sf: SystemFit, catalog: Catalog, limits: dict[str, float], chosen: bool) -> EnvelopeOption:
    """A row of the trade-off table: the system's largest cluster inside the envelope and what stopped it."""
    gpu = catalog.gpu_of(sf.system)
    built = sf.built
    fit = sf.fit
    if built is None:
        return EnvelopeOption(
            system=sf.system.id,
            gpu=gpu.id,
            feasible=False,
            chosen=False,
            binding=fit.binding if fit is not None else "request",
            reason=f"not even one {sf.system.id} fits: {binding_words(sf, limits)}",
        )
    measured = fit.best.measured  # type: ignore[union-attr]
    return EnvelopeOption(
        system=sf.system.id,
        gpu=gpu.id,
        feasible=True,
        chosen=chosen,
        binding=fit.binding,  # type: ignore[union-attr]
        reason=binding_words(sf, limits),
        systems=built.cluster.systems,
        gpus=built.cluster.gpus,
        bf16_dense_pflops=round(built.cluster.gpus * gpu.bf16_dense_tflops / 1000.0, 3),
        it_mw=round(built.facility.it_kw / 1000.0, 6),
        facility_mw=round(built.facility.facility_kw / 1000.0, 6),
        racks=int(measured["racks"] or 0),
        capex_usd=None if built.capex_usd is None else float(built.capex_usd),
        next_breaks=_next_breaks(sf, limits),
    )


def _next_breaks(sf: SystemFit, limits: dict[str, float]) -> str | None:
    fit = sf.fit
    if fit is None or fit.above is None:
        return None
    above = fit.above
    if above.refusal is not None:
        return f"{_count(above.systems)}: {above.refusal}"
    broken = [k for k in limits if (above.measured.get(k) or 0.0) > limits[k]]
    shown = ", ".join(f"{ENVELOPE_LIMITS[k][0]} {_figure(k, above.measured[k] or 0.0)}" for k in broken)
    return f"{_count(above.systems)}: {shown}"


def envelope_summary(
    sf: SystemFit | None,
    limits: dict[str, float],
    used: dict[str, float | None],
    options: tuple[EnvelopeOption, ...] = (),
    capacity: bool = True,
) -> EnvelopeSummary:
    """The plan's `envelope` section. `used` is the plan's own figures by key (the chosen build for a capacity
    plan, the planned cluster for a training or inference plan)."""
    within = bool(used) and all(used.get(k) is None or (used[k] or 0.0) <= v * (1 + 1e-12) for k, v in limits.items())
    if sf is None or sf.fit is None:
        binding = "request" if sf is None else (sf.fit.binding if sf.fit is not None else "request")
        words = sf.problem if sf is not None and sf.problem else "no system could be planned inside the envelope"
        return EnvelopeSummary(limits=_limit_rows(sf, limits, used) if sf else (), binding=binding, sentence=words,
                               within=False, options=options)  # fmt: skip
    rows = _limit_rows(sf, limits, used)
    slack = "; ".join(
        f"{r.label} {_figure(r.key, r.used or 0.0)} of {_figure(r.key, r.limit)} ({r.headroom_percent:.1f} % left)"
        for r in rows
        if not r.binding and r.used is not None
    )
    sid = sf.system.name
    if sf.built is None:
        sentence = f"Not even one {sid} fits the envelope: {binding_words(sf, limits)}."
    elif capacity:
        built = sf.built
        sentence = (
            f"The largest {sid} cluster inside the envelope is {built.cluster.systems:,} systems "
            f"({built.cluster.gpus:,} GPUs). Binding limit: {binding_words(sf, limits)}."
        )
    else:
        sentence = (
            f"Inside the envelope the largest {sid} cluster is {sf.systems:,} systems "
            f"({sf.systems * sf.system.gpus_per_system:,} GPUs); binding limit: {binding_words(sf, limits)}."
        )
    if slack:
        sentence += f" Headroom on the others: {slack}."
    return EnvelopeSummary(
        limits=rows,
        binding=sf.fit.binding,
        sentence=sentence,
        within=within,
        options=options,
        largest_systems=sf.systems,
        largest_gpus=sf.systems * sf.system.gpus_per_system,
    )
