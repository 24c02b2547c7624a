"""From the chain's stage outputs to the result's parts: one converter per stage, called by engine/chain.py.

Kept out of the part modules so `engine.result` itself imports no engine stage (outputs and the Django side can
read a stored plan without loading the search or the catalog).
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.assumptions.registry import Assumptions
from engine.explain.wording import explain_entry
from engine.physical.build import PhysicalBuild
from engine.physical.cluster import ClusterBuild
from engine.result.codec import decode
from engine.result.physical import ClusterSummary, HotSparesSummary
from engine.result.plan import AssumptionEntry, ExplainEntry
from engine.result.sizing import InferenceSummary, ModelSummary, MoeSummary, TrainingSummary
from engine.search.serving import InferenceResult
from engine.search.training import TrainingResult
from engine.workload.model import Workload

__all__ = [
    "assumptions_report",
    "cluster_summary",
    "explain_entries",
    "inference_summary",
    "model_summary",
    "training_summary",
]


def model_summary(work: Workload, training: bool) -> ModelSummary:
    s = work.shape
    return ModelSummary(
        preset=s.preset,
        layers=s.layers,
        hidden=s.hidden,
        heads=s.heads,
        kv_heads=s.kv_heads,
        head_dim=work.head_dim,
        ffn_hidden=s.ffn_hidden,
        vocab=s.vocab,
        seq_len=s.seq_len,
        ffn_gated=s.ffn_gated,
        moe=None if s.moe is None else MoeSummary(experts=s.moe.experts, active=s.moe.active),
        params=work.params,
        params_derived=work.params_derived,
        active_params=work.active_params,
        compute_params_active=work.compute_params_active,
        training_flops_per_token=work.training_flops_per_token() if training else None,
    )


def training_summary(tr: TrainingResult, frontier_by_system: Mapping[str, object]) -> TrainingSummary:
    """The chosen system's training section plus every feasible system's frontier (for the frontier chart)."""
    return decode(TrainingSummary, {**tr.as_dict(), "frontier_by_system": frontier_by_system}, "training")


def inference_summary(ir: InferenceResult) -> InferenceSummary:
    return decode(InferenceSummary, ir.as_dict(), "inference")


def cluster_summary(build: ClusterBuild, physical: PhysicalBuild | None) -> ClusterSummary:
    """The build's counts; with a rack layout, its scalable units (UFM may displace systems) and racks."""
    summary = ClusterSummary(
        system=build.system,
        systems=build.systems,
        gpus=build.gpus,
        job_gpus=build.job_gpus,
        scalable_units=build.scalable_units,
        racks=build.racks,
        systems_per_rack=build.systems_per_rack,
        su_systems=build.su_systems,
        hot_spares=_hot_spares(build),
    )
    if physical is None:
        return summary
    return ClusterSummary(
        **{
            **summary.__dict__,
            "scalable_units": physical.fabric.scalable_units,
            "racks": physical.compute_racks,
            "racks_total": len(physical.site.racks),
        }
    )


def _hot_spares(build: ClusterBuild) -> HotSparesSummary | None:
    spares = build.spares
    if spares is None:
        return None
    gpus_per_system = build.gpus // build.systems if build.systems else 0
    return HotSparesSummary(
        systems=spares.systems,
        gpus=spares.systems * gpus_per_system,
        job_systems=spares.job_systems,
        node_mtbf_hours=spares.node_mtbf_hours,
        repair_hours=spares.repair_hours,
        mean_systems_down=spares.mean_systems_down,
        percentile=spares.percentile,
    )


def explain_entries(entries: Mapping[str, Mapping[str, object]]) -> dict[str, ExplainEntry]:
    return {
        k: explain_entry(str(e["formula"]), dict(e["inputs"]), str(e["source"]))  # type: ignore[call-overload]
        for k, e in entries.items()
    }


def assumptions_report(a: Assumptions) -> dict[str, AssumptionEntry]:
    return {name: AssumptionEntry(**entry) for name, entry in a.report().items()}  # type: ignore[arg-type]
