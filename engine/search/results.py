"""What a training layout search returns: the scored Plan, the SearchStats of what it looked at, and the
Infeasibility record of its closest misses (so a failed search names the binding limit with figures).

Apart from the search itself (`layouts.py`) so the records the training section and explain entries read are
defined in one short place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.performance.memory import MemoryBreakdown

__all__ = ["REASONS", "Infeasibility", "Plan", "SearchStats", "batch_report"]

# Rejection reasons, in the order they are tested.
REASONS = (
    "gpus_not_divisible",
    "pinned_dp",
    "ep_not_dividing_dp",
    "batch_not_exact",
    "global_batch",
    "cluster_cap",
    "memory",
    "deadline",
    "slower_bound",  # not scored: its lower-bound time already exceeds the best feasible plan's (never a tie)
)


@dataclass
class SearchStats:
    """What the search looked at: candidate plans, model evaluations (bisection steps included), outcomes.

    `configs_per_s` counts the candidates the search decided per second: each either scored by the step model
    (`model_evaluations`, with bisection steps) or ruled out by a rule (divisibility, batch, memory) or by an
    exact lower bound (`slower_bound`: its pipeline time alone is already slower than the chosen plan)."""

    candidates_evaluated: int = 0
    model_evaluations: int = 0
    feasible: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    seconds: float = 0.0

    def reject(self, reason: str, count: int) -> None:
        self.rejected_by_reason[reason] += int(count)

    def add(self, other: SearchStats) -> None:
        """Add another attempt's counts (a retry with offload or the nearest batch)."""
        self.candidates_evaluated += other.candidates_evaluated
        self.model_evaluations += other.model_evaluations
        self.feasible += other.feasible
        for reason, count in other.rejected_by_reason.items():
            self.rejected_by_reason[reason] += count

    def as_dict(self) -> dict[str, object]:
        return {
            "candidates_evaluated": self.candidates_evaluated,
            "model_evaluations": self.model_evaluations,
            "feasible": self.feasible,
            "rejected_by_reason": {k: v for k, v in self.rejected_by_reason.items() if v},
            "seconds": self.seconds,
            "configs_per_s": self.candidates_evaluated / self.seconds if self.seconds > 0 else 0.0,
        }


@dataclass(frozen=True)
class Plan:
    """One scored plan: the layout and every figure the training section and explain entries need."""

    tp: int
    pp: int
    dp: int
    micro_batch: int
    interleave: int
    recompute: str
    zero_stage: int
    gpus: int
    micro_batches: int
    step_time_s: float
    tokens_per_step: float
    days_ideal: float
    stage_time_s: float
    pipeline_time_s: float
    bubble_time_s: float
    tp_comm_time_s: float
    p2p_time_s: float
    dp_exposed_time_s: float
    optimizer_time_s: float
    memory: MemoryBreakdown
    ep: int = 1
    # expert tensor parallelism (MoE): tp when each expert is split over the tensor-parallel ranks, 1 when whole
    # experts are folded onto them; None for a dense model
    etp: int | None = None
    ep_comm_time_s: float = 0.0
    cp: int = 1  # context parallelism: GPUs sharing each sequence (gpus = tp x cp x pp x dp)
    stage_layers: tuple[int, ...] = ()  # transformer layers per pipeline stage, first to last
    offload: str = "none"  # memory.OFFLOAD_CODES key
    batch_exact: bool = True  # dp x micro_batch x micro_batches equals the requested global batch
    global_batch_sequences: int = 0  # what one step trains on (the nearest batch when not exact)
    fullest_stage: int = 0  # pipeline stage index whose memory is reported (the fullest)
    dp_buckets: int = 0  # collectives the data-parallel gradient reduction runs in (0: not worked out)
    cp_comm_time_s: float = 0.0  # exposed context-parallel exchange per step
    cp_comm: str | None = None  # its method (cp_comm.CP_COMM_NAMES); None without context parallelism
    cp_comm_windowed: str | None = None  # the sliding-window layers' method; None without them or without cp
    ep_overlap: bool | None = None  # expert all-to-alls under another micro-batch's compute (MoE); None when dense
    ep_unpaired_time_s: float = 0.0  # what the passes EP overlap cannot pair add a step (inside pipeline_time_s)
    offload_time_s: float = 0.0  # exposed host-link transfers of offloaded state per step
    activation_offload_layers: int = 0  # layers whose activations are kept in host memory (pp = 1)
    activation_offload_time_s: float = 0.0  # their exposed host-link copies per step (inside pipeline_time_s)
    activation_offload_host_gib: float = 0.0  # the host memory those activations fill per GPU

    @property
    def memory_gib(self) -> float:
        return self.memory.total_gib


@dataclass
class Infeasibility:
    """The closest misses, so a failed search can name the binding limit with figures."""

    min_memory_gib: float | None = None
    min_memory_layout: tuple[int, int] | None = None
    best_days: float | None = None
    best_days_gpus: int | None = None
    best_days_limit: str | None = None  # "global batch" | "cluster size"
    batch_cap_gpus: int | None = None
    no_exact_batch: bool = False  # no layout can take the global batch exactly (the nearest batch was tried)


def batch_report(
    plan: Plan, requested_sequences: int, pinned_micro_batch: int | None = None, tolerance: float = 0.0
) -> dict[str, object]:
    """The plan's batch keys: the requested global batch and, when the plan trains on another one, a note saying
    plainly why, what it used and what would train on the requested batch (the plan page shows it beside the
    training figures). Three causes, each with its own remedy: a pinned micro-batch larger than each
    data-parallel rank's share, a deadline plan that saved GPUs within `global_batch_tolerance`, or a GPU count
    whose layouts cannot split the batch evenly."""
    if plan.batch_exact or requested_sequences <= 0:
        return {"global_batch_sequences_requested": requested_sequences or None, "batch_note": None}
    used = plan.global_batch_sequences
    off = used / requested_sequences - 1.0
    head = (
        f"global batch: the plan trains on {used:,} sequences per step, {off:+.1%} from the requested "
        f"{requested_sequences:,}"
    )
    if pinned_micro_batch is not None and plan.dp * pinned_micro_batch > requested_sequences:
        share = requested_sequences // plan.dp
        remedy = (
            f"pin a micro-batch of at most {share} or leave it to the search"
            if share >= 1
            else "use fewer GPUs or a larger batch"
        )
        note = (
            f"{head}: the pinned micro-batch of {pinned_micro_batch} on {plan.dp:,} data-parallel ranks needs at "
            f"least {plan.dp * pinned_micro_batch:,} sequences per step, more than the requested batch gives each "
            f"rank ({requested_sequences:,} / {plan.dp:,}). To train on the requested batch, {remedy}."
        )
    elif 0 < abs(off) <= tolerance:
        note = (
            f"{head}, within the {tolerance:.0%} the assumption global_batch_tolerance allows: data-parallel size "
            f"{plan.dp:,} x micro-batch {plan.micro_batch} splits it evenly ({plan.micro_batches} micro-batches per "
            f"step) on fewer GPUs than an exact split needs. With the tolerance at 0 a deadline plan keeps the exact "
            f"batch."
        )
    else:
        note = (
            f"{head}: no layout on {plan.gpus:,} GPUs splits {requested_sequences:,} sequences evenly (data-parallel "
            f"size x micro-batch must divide it), so the plan uses the nearest batch that data-parallel size "
            f"{plan.dp:,} x micro-batch {plan.micro_batch} splits ({plan.micro_batches} micro-batches per step). A "
            f"GPU count whose data-parallel size divides the batch, or a batch with more factors of 2, trains on it "
            f"exactly."
        )
    return {"global_batch_sequences_requested": requested_sequences, "batch_note": note}
