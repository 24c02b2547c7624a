"""Sensitivity: move each input alone to the low and the high end of its own plausible range and see how far
"cloud minus on-prem" swings.

Why not a flat +/-20 %: a vendor quote is known to a few per cent, a price we assumed to a third. Each input's
range comes from what it rests on, its price basis (quote, list_price, public_estimate, assumption; a user's own
figure counts as a quote), through the named assumptions `price_range_<basis>_low_percent` / `_high_percent`
(engine/data/assumptions/prices.toml, AACE 18R-97 estimate classes). The hardware row moves every priced part by
the range of its own basis at once, so the swing reflects how much of the capex rests on firm prices.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from engine.assumptions.registry import Assumptions
from engine.result.costs import Sensitivity, SensitivityFigures, SensitivityRow, Verdict

from .evaluation import Evaluation, evaluate
from .inputs import CostInputs, Scales
from .money import r

__all__ = [
    "BASES",
    "SENSITIVITY_INPUTS",
    "SENSITIVITY_STEP",
    "basis_range",
    "deadline_note",
    "parts_scales",
    "sensitivity",
]

SENSITIVITY_STEP = 0.20  # kept in the plan's `step` for readers of older plans; ranges now come by basis
BASES = ("quote", "list_price", "public_estimate", "assumption")
# What an input's range rests on when it is not a priced part: its cost parameter (its confidence), or a basis.
SENSITIVITY_INPUTS = (
    ("utilization", "On-prem utilisation", "param:utilization"),
    ("system_price", "Hardware prices (each part by its price basis)", "parts"),
    ("power_price", "Electricity price", "param:electricity_usd_per_kwh"),
    ("spot_price", "Spot price", "public_estimate"),
    ("mfu", "MFU (job time scales with 1 / MFU)", "public_estimate"),
)
METRIC = (
    "cloud_minus_onprem_usd = cheapest obtainable cloud job cost (each option sized for the same work) - on-prem "
    "shared job cost (positive: building is cheaper)"
)


def _basis(confidence: str | None) -> str:
    """The range a price basis takes: a user's own figure or an override counts as a quote."""
    if confidence in ("user_override", "quote"):
        return "quote"
    return confidence if confidence in BASES else "assumption"


def basis_range(a: Assumptions, basis: str) -> tuple[float, float]:
    """(low, high) multipliers of a price with this basis, from its named range assumptions."""
    low = a[f"price_range_{basis}_low_percent"] / 100
    high = a[f"price_range_{basis}_high_percent"] / 100
    return 1 - low, 1 + high


def _metrics(ev: Evaluation) -> SensitivityFigures:
    """The compared figures, from cent-rounded job costs (so the difference is exact in cents)."""
    cloud = [o.job_usd for o in ev.obtainable if o.cloud]
    best_cloud = min(cloud) if cloud else None
    onprem = ev.onprem.job_usd_shared
    return SensitivityFigures(
        onprem_job_usd_shared=onprem,
        cheapest_cloud_job_usd=best_cloud,
        cloud_minus_onprem_usd=None if onprem is None or best_cloud is None else best_cloud - onprem,
        build_obtainable=any(o.obtainable and not o.cloud for o in ev.options),
    )


def parts_scales(a: Assumptions) -> tuple[Scales, Scales, str]:
    """Every priced part at the low, then the high end of its own basis's range, and a sentence saying so (the
    hardware row here and the capex range, capex_range.py)."""
    every = (*BASES, "user_override")
    lows = tuple((b, basis_range(a, _basis(b))[0]) for b in every)
    highs = tuple((b, basis_range(a, _basis(b))[1]) for b in every)
    ranges = ", ".join(
        f"{b} -{(1 - lo) * 100:g} %/+{(hi - 1) * 100:g} %" for b, (lo, hi) in ((b, basis_range(a, b)) for b in BASES)
    )
    why = f"each part by its price basis ({ranges}; AACE 18R-97 estimate classes)"
    return replace(Scales(), part_price=lows), replace(Scales(), part_price=highs), why


def _scales(base: Evaluation, a: Assumptions, name: str, how: str) -> tuple[Scales, Scales, str]:
    """The low and high scales of one input and a sentence saying where its range comes from."""
    if how == "parts":
        return parts_scales(a)
    if how.startswith("param:"):
        used = base.params.report()[how.split(":", 1)[1]]
        basis = _basis(used.confidence)
    else:
        basis = how
    lo, hi = basis_range(a, basis)
    why = f"{basis} range -{(1 - lo) * 100:g} %/+{(hi - 1) * 100:g} % (AACE 18R-97 estimate classes)"
    return replace(Scales(), **{name: lo}), replace(Scales(), **{name: hi}), why


def _factor(base: Evaluation, moved: Evaluation, name: str, scale: Scales) -> float:
    """The input's effective multiplier: the hardware total's for the parts row, else the scale itself."""
    if name == "system_price":
        b, m = base.onprem.hardware_usd, moved.onprem.hardware_usd
        return r(float(m / b), 4) if b and m else 1.0
    return float(getattr(scale, name))


def _row(
    base: Evaluation, inputs: CostInputs, a: Assumptions, spec: tuple[str, str, str]
) -> tuple[Decimal, SensitivityRow]:
    name, label, how = spec
    low_scale, high_scale, why = _scales(base, a, name, how)
    low_ev, high_ev = evaluate(base.job, inputs, low_scale), evaluate(base.job, inputs, high_scale)
    lo, hi = _metrics(low_ev), _metrics(high_ev)
    swing = None
    if lo.cloud_minus_onprem_usd is not None and hi.cloud_minus_onprem_usd is not None:
        swing = abs(hi.cloud_minus_onprem_usd - lo.cloud_minus_onprem_usd)
    row = SensitivityRow(
        input=name,
        label=label,
        low_factor=_factor(base, low_ev, name, low_scale),
        high_factor=_factor(base, high_ev, name, high_scale),
        low=lo,
        high=hi,
        swing_usd=swing,
        range_basis=why,
    )
    return (swing if swing is not None else Decimal(-1)), row


def sensitivity(base: Evaluation, inputs: CostInputs) -> Sensitivity:
    """Rows sorted by swing, largest first (ties by input name); rows without a swing last."""
    a = Assumptions(overrides=dict(base.job.assumption_overrides))
    ranked = sorted(
        (_row(base, inputs, a, spec) for spec in SENSITIVITY_INPUTS),
        key=lambda item: (-item[0], item[1].input),
    )
    rows = tuple(row for _swing, row in ranked)
    return Sensitivity(
        metric=METRIC,
        step=SENSITIVITY_STEP,
        base=_metrics(base),
        rows=rows,
        most_sensitive_to=rows[0].input if rows and rows[0].swing_usd is not None else None,
    )


def _joined(labels: list[str]) -> str:
    """ "a", "a and b", "a, b and c": the rows named in a sentence."""
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def deadline_note(table: Sensitivity, ev: Evaluation, verdict: Verdict | None) -> Sensitivity:
    """The table with a note when the verdict is decided by the deadline (`verdict.decided_by`): its rows move the
    cost difference only, so a reader must not take "building is cheaper" in every row for a contradiction."""
    if verdict is None or verdict.decided_by != "deadline" or ev.job.deadline_days is None:
        return table
    onprem = [o for o in ev.options if not o.cloud]
    build = min(onprem, key=lambda o: (o.job_usd, o.done_days))
    differences = [e.cloud_minus_onprem_usd for row in table.rows for e in (row.low, row.high)]
    moved = [x for x in differences if x is not None]
    cost = (
        "Every row below has building cheaper at both ends of its range"
        if moved and all(x > 0 for x in moved)
        else "The rows below move the cost difference alone"
    )
    days = ev.job.deadline_days
    deadline = f"{days:,.0f}" if float(days).is_integer() else f"{days:,.1f}"
    # an input that shortens the job (the achieved speed) can bring the build inside the deadline at an end of its
    # range: each end was evaluated whole, obtainability included, so the note names such rows instead of claiming
    # that none changes the answer
    inside = [row.label for row in table.rows if row.low.build_obtainable or row.high.build_obtainable]
    claim = (
        f"{cost}; at an end of its range {_joined(inside)} brings the build inside the deadline, where its cost "
        "decides; otherwise only a later deadline or a cluster ready sooner changes the answer"
        if inside
        else f"{cost}, and no input here changes the answer: only a later deadline or a cluster ready sooner would"
    )
    note = (
        f"The verdict is rent because of the deadline, not cost: building cannot start before day "
        f"{build.start_days:,.0f} (procurement lead time, build and burn-in), so it would end on day "
        f"{build.done_days:,.1f}, past the {deadline}-day deadline. {claim} (the verdict says by how much)."
    )
    return replace(table, note=note)
