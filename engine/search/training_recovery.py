"""The plan's words on failure recovery: which checkpointing/recovery mode it uses and why (performance/recovery.py).

Why: `training.checkpointing = auto` resolves per plan, and a user must see the choice and the alternatives' goodput
beside it (at 100K GPUs restarting from storage would keep 39 % of the time, elastic replicas 93 %).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.assumptions.registry import Assumptions
from engine.performance.goodput import Goodput
from engine.performance.whole_run import WholeRun, WholeRunInputs
from engine.request.spec import TrainingSpec
from engine.workload.model import Workload

if TYPE_CHECKING:
    from engine.search.layouts import TrainingSearch

__all__ = ["FAILURE_NOTE_BELOW", "failure_note", "recovery_reason"]

# A pinned mode gets the note when failures cost more than a fifth of the run.
FAILURE_NOTE_BELOW = 0.8


def recovery_reason(work: Workload, gpus: int, search: TrainingSearch, a: Assumptions) -> str:
    """Why the plan uses its recovery mode: pinned, or `auto`'s choice with every candidate's goodput beside it
    (and, for a pinned mode that loses more than a fifth of the run, what the alternatives would keep)."""
    inputs = search.run
    pinned = len(inputs.modes) == 1
    if pinned:
        inputs = WholeRunInputs.resolve(
            params=work.params,
            checkpointing="auto",
            node_mtbf_hours=inputs.node_mtbf_hours,
            gpus_per_system=inputs.gpus_per_system,
            a=a,
        )
    systems = float(inputs.systems(gpus))
    kept = inputs.mode_goodputs_at(gpus)
    options = "; ".join(
        f"{_mode_words(m.name)} {max(float(g), 0.0):.0%} (about {float(m.restart_seconds(systems)) / 60:.1f} minutes "
        "lost per "
        f"failure)" + ("" if gpus >= m.min_gpus else f", not possible: needs {m.min_gpus:,.0f}+ GPUs' host memory")
        for m, g in zip(inputs.modes, kept, strict=True)
    )
    context = (
        f"on {systems:,.0f} systems a failure comes about every {_interval(inputs.node_mtbf_hours / systems)}; "
        f"share of time kept by recovery mode: {options}"
    )
    if pinned:
        return f"{_mode_words(search.run.modes[0].name)}, as the request's checkpointing option sets; {context}."
    chosen = _mode_words(inputs.mode_at(gpus).name)
    target = inputs.goodput_target
    why = (
        f"the least elaborate to keep at least {target:.0%} (the goodput target)"
        if max(kept) >= target
        else f"none keeps {target:.0%} (the goodput target), so the one that keeps the most"
    )
    return f"{chosen}, chosen automatically (checkpointing: auto) as {why}; {context}."


def _mode_words(name: str) -> str:
    """A recovery mode's id as a reader writes it (`in_memory` -> in-memory)."""
    return name.replace("_", "-")


def _interval(hours: float) -> str:
    """A mean time between failures in the unit a reader thinks in: minutes under two hours, hours under two days,
    days beyond."""
    if hours < 2.0:
        return f"{hours * 60.0:,.1f} minutes"
    if hours < 48.0:
        return f"{hours:,.1f} hours"
    return f"{hours / 24.0:,.1f} days"


def failure_note(spec: TrainingSpec, run: WholeRun, good: Goodput) -> str | None:
    """The whole-run note on recovery: which mode the plan uses and why, when `auto` chose it or when a pinned
    mode loses more than a fifth of the run to failures (at 100K GPUs a failure comes every half hour)."""
    failures = next(f for f in run.factors if f.name == "failures and checkpoints")
    if spec.checkpointing != "auto" and failures.efficiency >= FAILURE_NOTE_BELOW:
        return None
    lost = 1 - failures.efficiency
    cost = f"{lost:.0%} of the run" if lost >= 0.005 else "under 1% of the run"  # never "0% of the run"
    return f"Failures cost {cost}. Recovery: {good.checkpointing_reason}"
