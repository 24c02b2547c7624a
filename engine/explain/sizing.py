"""`explain` entries: for each headline figure, the formula, the inputs it was computed from, and the source.

Kept apart from the stages so the wording a user reads can be reviewed in one place.
"""

from __future__ import annotations

from engine.catalog.hardware import Gpu, System
from engine.physical.cluster import ClusterBuild
from engine.physical.cooling import KW_PER_TON
from engine.physical.facility import FacilityResult
from engine.request.spec import InferenceSpec, TrainingSpec
from engine.search.serving import InferenceResult, effective_mbu
from engine.search.training import SECONDS_PER_DAY, TrainingResult
from engine.workload.model import Workload

__all__ = ["build_explain", "facility_explain", "inference_explain", "training_explain"]

Entry = dict[str, object]


def _entry(formula: str, inputs: dict[str, object], source: str) -> Entry:
    return {"formula": formula, "inputs": inputs, "source": source}


_MODEL_SOURCE = (
    "engine/performance/step_time.py per-operation roofline; efficiency constants calibrated per GPU generation "
    "(docs/accuracy.md, assumptions gemm_efficiency_*)"
)


def training_explain(tr: TrainingResult, work: Workload, spec: TrainingSpec, gpu: Gpu) -> dict[str, Entry]:
    """Every training headline figure: how fast a step runs, then what that means for time, memory and GPUs."""
    return {**_training_speed(tr, work, spec, gpu), **_training_time_and_memory(tr, spec, gpu)}


def _training_speed(tr: TrainingResult, work: Workload, spec: TrainingSpec, gpu: Gpu) -> dict[str, Entry]:
    assert tr.layout is not None and tr.plan is not None
    lay, p = tr.layout, tr.plan
    s = work.shape
    flops_src = "training-calibration.md section 2 (6ND + 12 l s h D; GPT-3 check 3.14e23 FLOPs)"
    model_src = _MODEL_SOURCE
    return {
        "training.total_flops": _entry(
            "tokens x (6 x compute_params_active + 12 x layers x seq_len x hidden)",
            {
                "tokens": spec.tokens,
                "compute_params_active": work.compute_params_active,
                "layers": s.layers,
                "seq_len": s.seq_len,
                "hidden": s.hidden,
                "flops_per_token": tr.flops_per_token,
            },
            flops_src,
        ),
        "training.step_time_s": _entry(
            "micro_batches x (stage_time + p2p) + (pp - 1) / interleave x body_stage_time (1F1B bubble) + exposed "
            "data-parallel collectives + optimizer step; stage_time = layers/pp x per-layer roofline (GEMMs at "
            "gemm_efficiency x peak + kernel overhead, attention, HBM-bound element-wise ops, TP collectives on "
            "NVLink, MoE expert all-to-alls (4 per layer, each tokens x active x hidden x 2 B x (ep - 1)/ep, on NVLink "
            "when ep x tp fits the NVLink domain, else the scale-out NICs), recompute) + LM head on the last stage",
            {
                "micro_batches": lay.micro_batches,
                "stage_time_s": p.stage_time_s,
                "pipeline_time_s": p.pipeline_time_s,
                "bubble_time_s": p.bubble_time_s,
                "tensor_parallel_comm_s": p.tp_comm_time_s,
                "expert_all_to_all_s": p.ep_comm_time_s,
                "pipeline_p2p_s": p.p2p_time_s,
                "data_parallel_exposed_s": p.dp_exposed_time_s,
                "optimizer_s": p.optimizer_time_s,
                "interleave": lay.interleave,
                "zero_stage": lay.zero_stage,
            },
            model_src + "; Narayanan et al. 2021 (bubble, TP/PP communication), Korthikanti et al. 2022 (recompute)",
        ),
        "training.mfu": _entry(
            "tokens_per_s x flops_per_token / (gpus x peak); HFU also counts recomputed forward FLOPs",
            {
                "tokens_per_s": tr.tokens_per_s,
                "flops_per_token": tr.flops_per_token,
                "hardware_flops_per_token": tr.hardware_flops_per_token,
                "gpus": tr.gpus,
                "peak_tflops_per_gpu": tr.peak_tflops,
                "precision": spec.precision,
                "mfu": tr.mfu,
                "hfu": tr.hfu,
                "gpu": gpu.id,
            },
            "training-calibration.md section 1 (MFU vs HFU); an output of the step-time model, not an input",
        ),
        "training.model_tflops_per_gpu": _entry(
            "mfu x peak_tflops_per_gpu", {"peak_tflops_per_gpu": tr.peak_tflops, "mfu": tr.mfu}, gpu.source
        ),
        "training.tokens_per_s": _entry(
            "tokens_per_step / step_time_s",
            {"tokens_per_step": p.tokens_per_step, "step_time_s": tr.step_time_s},
            _MODEL_SOURCE,
        ),
    }


def _whole_run_inputs(tr: TrainingResult) -> dict[str, object]:
    """The whole-run entry's inputs: steady-state days, each factor with its range, the p10-p90 days."""
    run = tr.whole_run
    if run is None:
        return {"days_ideal": tr.days_ideal}
    out: dict[str, object] = {"days_ideal (steady state)": tr.days_ideal}
    for f in run.factors:
        out[f.name] = f"{f.efficiency:.3f} (range {f.low:.3f} - {f.high:.3f})"
    out["days p10 / p50 / p90"] = f"{run.days_p10:.1f} / {run.days_p50:.1f} / {run.days_p90:.1f}"
    out["main drivers of the range"] = ", ".join(run.drivers[:2])
    return out


def _training_time_and_memory(tr: TrainingResult, spec: TrainingSpec, gpu: Gpu) -> dict[str, Entry]:
    assert tr.layout is not None and tr.memory is not None and tr.goodput is not None
    lay, mem, g = tr.layout, tr.memory, tr.goodput
    out: dict[str, Entry] = {
        "training.days_ideal": _entry(
            "tokens / tokens_per_s / 86400 (no failures)",
            {"tokens": spec.tokens, "tokens_per_s": tr.tokens_per_s, "seconds_per_day": SECONDS_PER_DAY},
            _MODEL_SOURCE,
        ),
        "training.goodput": _entry(
            "tau / (tau + delta) x (1 - ((tau + delta) / 2 + restart) / job_mtbf); job_mtbf = node_mtbf / systems; "
            "delta = checkpoint_bytes / (storage_write_gbyte_s_per_gpu x gpus); tau = Daly's optimum "
            "sqrt(2 delta M) x (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta (M when delta >= 2M)",
            g.as_dict(),
            "Young 1974 / Daly 2006 checkpoint interval; MTBF: " + (g.mtbf_source or "catalog"),
        ),
        "training.days": _entry(
            "expected whole run (p50) = days_ideal / (goodput x production_efficiency x (1 - eval_and_stall_fraction) "
            "/ (1 + straggler_slowdown_per_doubling x log2(systems))); p10-p90 from each factor's plausible range "
            "(log-normal, variances added)",
            _whole_run_inputs(tr),
            "Failures: Daly 2006 checkpoint interval with the systems' MTBF; production efficiency fitted on published "
            "whole runs (Touvron et al. 2023 'Llama 2'; Biderman et al. 2023 'Pythia'; MosaicML 'Introducing "
            "MPT-7B' 2023); stragglers and restarts: Jiang et al. 2024 'MegaScale' (arXiv 2402.15627)",
        ),
        "training.days_range": _entry(
            "p10 / p90 = p50 x exp(-/+ 1.2816 x sqrt(sum of each factor's sigma^2)); sigma = (ln high - ln low) / "
            "(2 x 1.2816) for each whole-run efficiency's plausible range",
            _whole_run_inputs(tr),
            "Each range is the named assumption's low/high (production efficiency: the values the published whole runs "
            "imply, one source at a time); failures: node MTBF / and x mtbf_range_factor",
        ),
        "training.gpu_hours": _entry(
            "gpus x days x 24 (expected whole run, p50; the range scales with the days range)",
            {"gpus": tr.gpus, "days": tr.days, "hours_per_day": 24},
            "Follows from training.days",
        ),
        "training.parallelism": _entry(
            "exhaustive search over tp (inside the NVLink domain, dividing heads and kv_heads), pp (dividing layers), "
            "micro_batch, interleave, recompute, ZeRO stage, ep (MoE only: divisors of the expert count, dividing dp) "
            "and dp; infeasible candidates rejected by reason; "
            "the fastest feasible plan wins (deadline mode: the fewest GPUs first)",
            {
                **lay.parallelism(),
                "micro_batches": lay.micro_batches,
                "search": tr.search.as_dict() if tr.search else None,
            },
            "engine/search/layouts.py; Narayanan et al. 2021 (Megatron-LM) for the layout space",
        ),
        "training.memory_per_gpu_gib": _entry(
            "params_per_gpu x (2 weights + 2 grads + 12 optimizer, each / dp when its ZeRO stage shards it; MoE "
            "expert params / ep per GPU, sharded over dp / ep) + "
            "activations_per_layer x layers / pp x min(pp, micro_batches) x (1 + (pp - 1) / (pp x interleave)) "
            "+ working set + reserve_fraction x HBM",
            {
                "memory_breakdown_gib": mem.as_dict(),
                "dp": lay.dp,
                "tp": lay.tp,
                "pp": lay.pp,
                "ep": lay.ep,
                "zero_stage": lay.zero_stage,
                "recompute": lay.recompute,
                "hbm_gib": gpu.hbm_gib,
            },
            "ZeRO paper accounting and Korthikanti et al. 2022 activation terms (training-calibration.md section 2)",
        ),
    }
    if spec.deadline_days is not None:
        out["training.gpus"] = _entry(
            "smallest whole-system GPU count whose fastest plan fits memory and finishes the expected whole run (p50 "
            "days) within deadline_days, found by bisection per layout",
            {"deadline_days": spec.deadline_days, "days": tr.days, "tp": lay.tp, "pp": lay.pp, "dp": lay.dp},
            "The planner's layout search over the Megatron-LM layout space (Narayanan et al. 2021)",
        )
    else:
        out["training.gpus"] = _entry("given in the request (training.gpus)", {"gpus": tr.gpus}, "request")
    return out


def inference_explain(ir: InferenceResult, work: Workload, spec: InferenceSpec, gpu: Gpu) -> dict[str, Entry]:
    """Every serving headline figure. Long because it is one table (one entry per figure, read top to bottom like
    the page shows them); splitting it would scatter a single table over several functions."""
    assert ir.shape is not None and ir.point is not None and ir.shape.capacity is not None
    sh, pt, cap, m = ir.shape, ir.point, ir.shape.capacity, ir.shape.model
    c = m.c
    src = "inference-calibration.md section 2"
    fitted = "constants fitted on inference-calibration.md C1-C9, 5b, 5c (docs/accuracy.md)"
    mem = ir.memory_breakdown_gib()
    return {
        "inference.ttft_ms": _entry(
            "prefill(prompt) + half a scheduling round + prefill queueing (M/D/1: busy x prefill / (2 (1 - busy))); "
            "prefill = max((2 x compute_params_active x prompt + 4 x layers x prompt^2 x hidden) / (tp x peak x "
            "prefill_mfu x n / (n + prefill_half_mfu_tokens)), weights / tp / (HBM x decode_mbu)) + 2 x layers TP "
            "all-reduces, n = min(prompt, prefill_chunk_tokens)",
            {
                "prefill_alone_ms": m.prefill_s(spec.prompt_tokens) * 1000.0,
                "prefill_busy_fraction": pt.prefill_busy_fraction,
                "compute_params_active": work.compute_params_active,
                "prompt_tokens": spec.prompt_tokens,
                "tp": sh.tp,
                "peak_tflops_per_gpu": ir.peak_tflops,
                "compute_precision": ir.compute_precision,
                "prefill_mfu": c.prefill_mfu,
                "prefill_half_mfu_tokens": c.half_mfu_tokens,
            },
            f"{src} items 5-6; {fitted}",
        ),
        "inference.tpot_ms": _entry(
            "decode step x (1 + batch x batched prefill time / (output_tokens x decode step)) at the operating batch; "
            "decode step = max((weights_read / tp + batch x (prompt + output/2) x kv_bytes_per_token / (min(tp, "
            "kv_heads) x pp)) / (HBM x decode_mbu), batch x decode FLOPs / (tp x pp x peak x GEMM efficiency)) + 2 x "
            "layers x (inference_allreduce_latency_us + all-reduce bytes / NVLink) + decode_step_overhead_ms",
            {
                "batch": pt.batch,
                "decode_step_ms": pt.tpot_decode_s * 1000.0,
                "tp": sh.tp,
                "pp": sh.pp,
                "hbm_tbps": ir.hbm_tbps,
                "decode_mbu": c.decode_mbu,
                "effective_mbu": _effective(ir),
                "weight_bytes_per_param": ir.weight_bytes_per_param,
                "kv_bytes_per_token": ir.kv_bytes_per_token,
                "floor_ms_weights_over_tp_x_hbm": m.bandwidth_floor_tpot_s() * 1000.0,
            },
            f"{src} items 3-4; {fitted}",
        ),
        "inference.kv_bytes_per_token": _entry(
            "2 x layers x kv_heads x head_dim x kv_cache_bytes_per_element",
            {
                "layers": work.shape.layers,
                "kv_heads": work.shape.kv_heads,
                "head_dim": work.head_dim,
                "kv_cache_bytes_per_element": ir.kv_bytes_per_element,
            },
            src + " item 1",
        ),
        "inference.kv_cache_gib_per_replica": _entry(
            "(HBM x inference_memory_utilization - weights / (tp x pp) - activation workspace) x tp x pp",
            {**{f"{k}_gib_per_gpu": v for k, v in mem.items()}, "gpus_per_replica": sh.gpus},
            src + " items 1-2",
        ),
        "inference.batch": _entry(
            "concurrency by Little's law at the load each replica carries: batch = (requests_per_s / replicas) x "
            "output_tokens x TPOT(batch), solved by bisection; capacity batch = the largest batch <= min("
            "max_batch_per_replica, KV budget / (kv_bytes_per_token_per_gpu x (prompt + output))) meeting both targets",
            {
                "capacity_batch": sh.capacity_batch,
                "max_sequences_by_memory": sh.max_sequences_by_memory,
                "limit": sh.limit,
                "ttft_target_ms": spec.ttft_ms,
                "tpot_target_ms": spec.tpot_ms,
            },
            src + " items 1 and 6",
        ),
        "inference.replicas": _entry(
            "ceil(requests_per_s / (serving_utilization_target x capacity requests/s per replica)); capacity = "
            "tokens/s at the capacity batch / output_tokens",
            {
                "requests_per_s": spec.requests_per_s,
                "serving_utilization_target": ir.utilization_target,
                "capacity_requests_per_s_per_replica": cap.requests_per_s,
            },
            src + " item 6 (Little's law)",
        ),
        "inference.gpus": _entry(
            "replicas x tp x pp; the replica shape needing the fewest GPUs in total wins (ties: no pipeline, then the "
            "smaller replica); pipeline stages only when no tensor-parallel replica inside the NVLink domain fits",
            {"replicas": ir.replicas, "tp": sh.tp, "pp": sh.pp, "spans_systems": ir.spans_systems},
            "engine rule (issue 4)",
        ),
        "inference.tokens_per_s": _entry(
            "replicas x replica capacity; replica capacity = 1 / (decode step / batch + batched prefill / "
            "output_tokens) output tokens/s at the capacity batch",
            {
                "replicas": ir.replicas,
                "capacity_tokens_per_s_per_replica": cap.tokens_per_s,
                "capacity_batch": sh.capacity_batch,
            },
            "continuous batching (engine/performance/serving.py)",
        ),
        "inference.tokens_per_s_per_gpu": _entry(
            "replica capacity / gpus_per_replica (within both latency targets, independent of the requested rate)",
            {"capacity_tokens_per_s_per_replica": cap.tokens_per_s, "gpus_per_replica": sh.gpus},
            "definition (issue 4)",
        ),
    }


def _effective(ir: InferenceResult) -> float:
    assert ir.shape is not None and ir.point is not None
    return effective_mbu(ir.shape.model, ir.point)


def build_explain(build: ClusterBuild, system: System) -> dict[str, Entry]:
    return {
        "cluster.systems": _entry(
            "ceil(job_gpus / gpus_per_system)",
            {"job_gpus": build.job_gpus, "gpus_per_system": system.gpus_per_system},
            system.source,
        ),
        "cluster.racks": _entry(
            "ceil(systems / systems_per_rack); systems_per_rack = min(catalog default, floor(rack budget / "
            "system max kW))",
            {
                "systems": build.systems,
                "systems_per_rack": build.systems_per_rack,
                "catalog_systems_per_rack": system.systems_per_rack,
                "rack_budget_kw": build.rack_budget_kw,
                "system_max_power_kw": system.max_power_kw,
            },
            "facility.md section 1; " + system.source,
        ),
        "cluster.scalable_units": _entry(
            "ceil(systems / su_systems)",
            {"systems": build.systems, "su_systems": build.su_systems},
            "fabric.md section 2 (SU sizes from the SuperPOD reference architectures); UFM node displacement is "
            "left to the fabric stage",
        ),
    }


def facility_explain(fac: FacilityResult, build: ClusterBuild, system: System) -> dict[str, Entry]:
    """`fac` is the plan's one facility result: the rack layout's when there is one, else the systems-only one."""
    power = fac.power
    if power.laid_out:
        it_kw = _entry(
            "systems + switches (maximum, with optics) + storage + management servers/UFM, all at maximum draw",
            {
                "systems_kw": power.systems_kw,
                "network_kw": power.network_kw,
                "storage_kw": power.storage_kw,
                "management_kw": power.management_kw,
            },
            "facility.md sections 1-2; hardware.md section 3 (budget switches at optical maximum)",
        )
    else:
        it_kw = _entry(
            "systems x system max power (GPU systems only; network, storage and management not yet included)",
            {"systems": build.systems, "system_max_power_kw": system.max_power_kw},
            system.source,
        )
    return {
        "power.it_kw": it_kw,
        "power.facility_kw": _entry(
            "it_kw x pue",
            {
                "it_kw": fac.it_kw,
                "pue": fac.pue,
                "pue_from": "site.pue" if fac.pue_from_site else f"assumption pue_{fac.cooling_method}",
            },
            "facility.md sections 2 and 6",
        ),
        "power.per_rack_kw": _entry(
            "min(systems, systems_per_rack) x system max power (the fullest rack)",
            {"systems_per_rack": build.systems_per_rack, "system_max_power_kw": system.max_power_kw},
            "facility.md section 1",
        ),
        "cooling.method": _entry(
            "liquid for liquid-cooled systems; else by per-rack kW: <= cooling_air_max_kw air, <= "
            "cooling_containment_max_kw air_containment, <= cooling_rdhx_max_kw rdhx, above liquid",
            {"per_rack_kw": fac.per_rack_kw, "system_cooling": system.cooling},
            "facility.md section 4",
        ),
        "cooling.liquid_kw": _entry(
            (
                "kW of the liquid-cooled racks x (1 - liquid_residual_air_fraction); air-cooled racks (network, "
                "management, rear doors) add 0"
                if power.laid_out
                else "liquid: it_kw x (1 - liquid_residual_air_fraction); otherwise 0 (rear doors are counted as air)"
            ),
            {"it_kw": fac.it_kw, "method": fac.cooling_method},
            "facility.md section 4; hardware.md section 2",
        ),
        "cooling.tons": _entry(
            "it_kw / 3.517", {"it_kw": fac.it_kw, "kw_per_ton": KW_PER_TON}, "facility.md section 3"
        ),
    }
