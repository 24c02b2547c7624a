"""The training stage's typed outcome: the chosen layout (`TrainingLayout`) and one system's result
(`TrainingResult`), with the plan's `training` section it writes (`as_dict`).

Why apart from `search/training.py`: that module searches and sizes; this one is the shape every output reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.performance.goodput import Goodput
from engine.performance.memory import MemoryBreakdown, MemoryOptions
from engine.performance.whole_run import WholeRun
from engine.search.layouts import Plan, SearchStats
from engine.search.results import batch_report

__all__ = ["TrainingLayout", "TrainingResult"]


@dataclass(frozen=True)
class TrainingLayout:
    """A parallel layout and the micro-batching it implies for the global batch."""

    tp: int
    pp: int
    dp: int
    micro_batch: int
    recompute: str
    micro_batches: int  # per pipeline per step (m)
    global_batch_sequences: int  # dp x micro_batch x m, what one step really trains on
    interleave: int = 1
    zero_stage: int = 1
    ep: int = 1  # expert parallelism (MoE); a sub-division of dp (or of tp x cp x dp, folded), not extra GPUs
    etp: int | None = None  # expert tensor parallelism (MoE): tp (experts split) or 1 (folded); None when dense
    cp: int = 1  # context parallelism: GPUs sharing each sequence (gpus = tp x cp x pp x dp)
    cp_comm: str | None = None  # how they exchange attention inputs (cp_comm.CP_COMM_NAMES); None at cp = 1
    cp_comm_windowed: str | None = None  # the sliding-window layers' exchange; None without them or at cp = 1
    ep_overlap: bool | None = None  # expert all-to-alls under another micro-batch's compute; None when dense
    stage_layers: tuple[int, ...] = ()
    offload: str = "none"
    activation_offload_layers: int = 0

    def parallelism(self) -> dict[str, object]:
        """The layout's degrees, as the plan's `training.parallelism` reports them."""
        return {
            "tp": self.tp,
            "pp": self.pp,
            "dp": self.dp,
            "micro_batch": self.micro_batch,
            "recompute": self.recompute,
            "interleave": self.interleave,
            "zero_stage": self.zero_stage,
            "ep": self.ep,
            "etp": self.etp,
            "cp": self.cp,
            "cp_comm": self.cp_comm,
            "cp_comm_windowed": self.cp_comm_windowed,
            "ep_overlap": self.ep_overlap,
            "stage_layers": list(self.stage_layers),
            "offload": self.offload,
            "activation_offload_layers": self.activation_offload_layers,
        }


@dataclass
class TrainingResult:
    """Outcome for one system: figures when feasible, otherwise the binding limit in `problems`."""

    feasible: bool
    problems: list[str] = field(default_factory=list)
    gpus: int = 0
    days: float = 0.0
    days_ideal: float = 0.0
    step_time_s: float = 0.0
    tokens_per_s: float = 0.0
    model_tflops_per_gpu: float = 0.0
    hardware_tflops_per_gpu: float = 0.0
    mfu: float = 0.0
    hfu: float = 0.0
    total_flops: float = 0.0
    flops_per_token: float = 0.0
    hardware_flops_per_token: float = 0.0
    layout: TrainingLayout | None = None
    hbm_gib: float = 0.0
    peak_tflops: float = 0.0
    plan: Plan | None = None
    goodput: Goodput | None = None
    whole_run: WholeRun | None = None
    whole_run_note: str | None = None
    search: SearchStats | None = None
    frontier: list[dict[str, object]] = field(default_factory=list)
    global_batch_sequences_requested: int = 0
    # The request's pinned micro-batch and batch tolerance, so a changed batch's note names its real cause.
    pinned_micro_batch: int | None = None
    batch_tolerance: float = 0.0
    # Where the requested global batch comes from, in words for the explain entry (the preset's publication or
    # the request); set by the chain, which knows the preset.
    batch_source: str = "the global batch given in the request (tokens)"
    memory_options: MemoryOptions | None = None  # the stack's host link and offload figures (for the explain)

    @property
    def memory(self) -> MemoryBreakdown | None:
        """Memory per GPU of the chosen plan."""
        return self.plan.memory if self.plan is not None else None

    def as_dict(self) -> dict[str, object]:
        """The plan's `training` section (design.md contract keys plus issue 3's keys and breakdowns)."""
        assert self.layout is not None and self.memory is not None and self.plan is not None
        lay, p = self.layout, self.plan
        return {
            "gpus": self.gpus,
            "days": self.days,
            "days_ideal": self.days_ideal,
            "days_steady_state": self.days_ideal,
            "step_time_s": self.step_time_s,
            "tokens_per_s": self.tokens_per_s,
            "model_tflops_per_gpu": self.model_tflops_per_gpu,
            "hardware_tflops_per_gpu": self.hardware_tflops_per_gpu,
            "mfu": self.mfu,
            "hfu": self.hfu,
            "parallelism": lay.parallelism(),
            "memory_per_gpu_gib": self.memory.total_gib,
            "memory_breakdown_gib": self.memory.as_dict(),
            "hbm_gib": self.hbm_gib,
            "micro_batches_per_step": lay.micro_batches,
            "global_batch_sequences": lay.global_batch_sequences,
            "pipeline_bubble_fraction": p.bubble_time_s / p.step_time_s,
            "step_breakdown_s": {
                "pipeline": p.pipeline_time_s,
                "bubble": p.bubble_time_s,
                "tensor_parallel_comm": p.tp_comm_time_s,
                "context_parallel_comm": p.cp_comm_time_s,
                "expert_all_to_all": p.ep_comm_time_s,
                "pipeline_p2p": p.p2p_time_s,
                "data_parallel_exposed": p.dp_exposed_time_s,
                "optimizer": p.optimizer_time_s,
                "activation_offload": p.activation_offload_time_s,
                "optimizer_offload": p.offload_time_s,
            },
            "goodput": self.goodput.as_dict() if self.goodput else None,
            **_whole_run_keys(self.whole_run, self.gpus, self.whole_run_note),
            "search": self.search.as_dict() if self.search else None,
            "frontier": self.frontier,
            "total_flops": self.total_flops,
            "flops_per_token": self.flops_per_token,
            "hardware_flops_per_token": self.hardware_flops_per_token,
            "peak_tflops_per_gpu": self.peak_tflops,
            **batch_report(p, self.global_batch_sequences_requested, self.pinned_micro_batch, self.batch_tolerance),
        }


def _whole_run_keys(run: WholeRun | None, gpus: int, note: str | None) -> dict[str, object]:
    """The plan's whole-run keys: the days and GPU-hours range and the factors behind it, drivers first."""
    if run is None:
        return {}
    hours = 24.0 * gpus
    return {
        "days_range": {"p10": run.days_p10, "p50": run.days_p50, "p90": run.days_p90},
        "gpu_hours": run.days_p50 * hours,
        "gpu_hours_range": {"p10": run.days_p10 * hours, "p50": run.days_p50 * hours, "p90": run.days_p90 * hours},
        "whole_run": {
            "efficiency": run.efficiency,
            "drivers": list(run.drivers),
            "factors": [
                {
                    "name": f.name,
                    "efficiency": f.efficiency,
                    "low": f.low,
                    "high": f.high,
                    "days_multiplier": f.days_multiplier,
                    "share_of_spread": run.share_of_spread(f.name),
                    "description": f.description,
                    "source": f.source,
                }
                for f in run.factors
            ],
            "note": note,
        },
    }
