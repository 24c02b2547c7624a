"""The explain entries of a plan inside an envelope: how the largest cluster was found and which limit binds."""

from __future__ import annotations

from engine.catalog.hardware import System
from engine.envelope.capacity import SystemFit, binding_words
from engine.envelope.search import FABRIC
from engine.request.envelope import ENVELOPE_LIMITS

__all__ = ["envelope_explain"]

Entry = dict[str, object]

_SOURCE = (
    "Each count is built as a plan builds it: system power from the vendor's datasheet ({system_source}); switch, "
    "transceiver and storage power from their datasheets (counted in IT power); PUE as defined by The Green "
    "Grid (White Paper 49, 2012); capex by the plan's costing rules (the plan's capex)"
)


def _measured(label: str, probe: object) -> dict[str, object]:
    """One build's figures as flat inputs ("one_system_more.facility_mw": 50.131): what the page lists."""
    refusal = getattr(probe, "refusal", None)
    out: dict[str, object] = {f"{label}.systems": getattr(probe, "systems", 0)}
    if refusal:
        out[f"{label}.cannot_be_built"] = refusal
        return out
    measured = getattr(probe, "measured", {}) or {}
    out.update({f"{label}.{k}": round(v, 6) for k, v in measured.items() if v is not None})
    return out


def envelope_explain(sf: SystemFit, limits: dict[str, float], system: System) -> dict[str, Entry]:
    """`envelope.binding`: the search, its inputs and the measured build at the answer and one system above it."""
    fit = sf.fit
    if fit is None:
        return {}
    checks = " and ".join(
        f"{key}(n) <= {key}" + (" (facility_kw(n) = it_kw(n) x PUE)" if key == "facility_mw" else "") for key in limits
    )
    inputs: dict[str, object] = {
        f"limit.{key} ({ENVELOPE_LIMITS[key][0]}, {ENVELOPE_LIMITS[key][1]})": limits[key] for key in limits
    }
    inputs.update(
        {
            "largest_systems": sf.systems,
            "ceiling_systems": fit.ceiling_systems,
            "binding": fit.binding,
            "binding_in_words": binding_words(sf, limits),
            "builds_probed": fit.probes,
        }
    )
    if fit.best is not None:
        inputs.update(_measured("at_largest", fit.best))
    if fit.above is not None:
        inputs.update(_measured("one_system_more", fit.above))
    formula = (
        f"largest n in 1..ceiling_systems whose built cluster (whole systems; racks, network, optics, storage and "
        f"management as laid out) meets {checks}; n + 1 systems break {fit.binding}"
        + (" (no catalog design builds them)" if fit.binding == FABRIC else "")
        + ". Search: interpolation on the broken limit alternating with bisection over built counts."
    )
    return {"envelope.binding": {"formula": formula, "inputs": inputs, "source": _SOURCE.format(
        system_source=system.source)}}  # fmt: skip
