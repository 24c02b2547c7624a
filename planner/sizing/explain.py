"""`explain` entries: for each headline figure, the formula, the inputs it was computed from, and the source.

Kept apart from the stages so the wording a user reads can be reviewed in one place.
"""

from __future__ import annotations

from planner.sizing.build import ClusterBuild
from planner.sizing.catalog import Gpu, System
from planner.sizing.facility import KW_PER_TON, FacilityResult
from planner.sizing.inference import InferenceResult
from planner.sizing.request import InferenceSpec, TrainingSpec
from planner.sizing.training import SECONDS_PER_DAY, TrainingResult
from planner.sizing.workload import Workload

__all__ = ["build_explain", "facility_explain", "inference_explain", "training_explain"]

Entry = dict[str, object]


def _entry(formula: str, inputs: dict[str, object], source: str) -> Entry:
    return {"formula": formula, "inputs": inputs, "source": source}


def training_explain(tr: TrainingResult, work: Workload, spec: TrainingSpec, gpu: Gpu) -> dict[str, Entry]:
    assert tr.layout is not None and tr.memory is not None
    lay, mem = tr.layout, tr.memory
    s = work.shape
    flops_src = "training-calibration.md section 2 (6ND + 12 l s h D; GPT-3 check 3.14e23 FLOPs)"
    out: dict[str, Entry] = {
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
        "training.mfu": _entry(
            "assumption training_mfu (bf16) or training_mfu_fp8 (fp8), of the dense peak",
            {"precision": spec.precision, "mfu": tr.mfu, "peak_tflops_per_gpu": tr.peak_tflops, "gpu": gpu.id},
            "see assumptions.training_mfu / training_mfu_fp8",
        ),
        "training.model_tflops_per_gpu": _entry(
            "peak_tflops_per_gpu x mfu", {"peak_tflops_per_gpu": tr.peak_tflops, "mfu": tr.mfu}, f"{gpu.source}"
        ),
        "training.days": _entry(
            "total_flops / (gpus x model_tflops_per_gpu x 1e12) / 86400",
            {
                "total_flops": tr.total_flops,
                "gpus": tr.gpus,
                "model_tflops_per_gpu": tr.model_tflops_per_gpu,
                "seconds_per_day": SECONDS_PER_DAY,
                "pipeline_bubble_fraction_not_applied": (lay.pp - 1) / lay.micro_batches,
            },
            flops_src + "; MFU is an assumption (see training.mfu); the pipeline bubble is not yet in the time",
        ),
        "training.step_time_s": _entry(
            "global_batch_sequences x seq_len x flops_per_token / (gpus x model_tflops_per_gpu x 1e12)",
            {
                "global_batch_sequences": lay.global_batch_sequences,
                "seq_len": s.seq_len,
                "flops_per_token": tr.flops_per_token,
                "gpus": tr.gpus,
                "model_tflops_per_gpu": tr.model_tflops_per_gpu,
            },
            flops_src,
        ),
        "training.tokens_per_s": _entry(
            "gpus x model_tflops_per_gpu x 1e12 / flops_per_token",
            {"gpus": tr.gpus, "model_tflops_per_gpu": tr.model_tflops_per_gpu, "flops_per_token": tr.flops_per_token},
            flops_src,
        ),
        "training.parallelism": _entry(
            "smallest pp, then smallest tp (tp within the NVLink domain, dividing heads and kv_heads) whose "
            "per-GPU memory fits HBM, with selective recompute (full recompute only when nothing fits); dp = gpus / "
            "(tp x pp); micro_batches = global_batch_sequences / (dp x micro_batch) >= pp x "
            "min_microbatches_per_stage",
            {
                "tp": lay.tp,
                "pp": lay.pp,
                "dp": lay.dp,
                "micro_batch": lay.micro_batch,
                "recompute": lay.recompute,
                "micro_batches": lay.micro_batches,
            },
            "Narayanan et al. 2021 (Megatron-LM) takeaways; training-calibration.md section 2",
        ),
        "training.memory_per_gpu_gib": _entry(
            "params_per_gpu x (2 weights + 2 grads + 12 / dp optimizer) + activations_per_layer x ceil(layers / "
            "pp) x min(pp, micro_batches) + reserve_fraction x HBM",
            {
                "memory_breakdown_gib": mem.as_dict(),
                "dp": lay.dp,
                "tp": lay.tp,
                "pp": lay.pp,
                "recompute": lay.recompute,
                "hbm_gib": gpu.hbm_gib,
            },
            "ZeRO-1 accounting and Korthikanti et al. 2022 activation terms (training-calibration.md section 2)",
        ),
    }
    if spec.deadline_days is not None:
        out["training.gpus"] = _entry(
            "ceil(total_flops / (deadline_days x 86400 x model_tflops_per_gpu x 1e12)) rounded up to a multiple of "
            "lcm(gpus_per_system, tp x pp)",
            {
                "total_flops": tr.total_flops,
                "deadline_days": spec.deadline_days,
                "model_tflops_per_gpu": tr.model_tflops_per_gpu,
                "tp": lay.tp,
                "pp": lay.pp,
            },
            flops_src,
        )
    else:
        out["training.gpus"] = _entry("given in the request (training.gpus)", {"gpus": tr.gpus}, "request")
    return out


def inference_explain(ir: InferenceResult, work: Workload, spec: InferenceSpec, gpu: Gpu) -> dict[str, Entry]:
    assert ir.shape is not None
    sh = ir.shape
    src = "inference-calibration.md section 2"
    return {
        "inference.ttft_ms": _entry(
            "(2 x compute_params_active x prompt_tokens + 4 x layers x prompt_tokens^2 x hidden) / (tp x peak x "
            "prefill_mfu)",
            {
                "compute_params_active": work.compute_params_active,
                "prompt_tokens": spec.prompt_tokens,
                "layers": work.shape.layers,
                "hidden": work.shape.hidden,
                "tp": sh.tp,
                "peak_tflops_per_gpu": ir.peak_tflops,
                "compute_precision": ir.compute_precision,
            },
            src + " item 5; queueing excluded",
        ),
        "inference.tpot_ms": _entry(
            "max((weights_read / tp + batch x (prompt + output/2) x kv_bytes_per_token / min(tp, kv_heads)) / "
            "(HBM bandwidth x decode_mbu), batch x decode FLOPs / (tp x peak x prefill_mfu)) + "
            "decode_step_overhead_ms, at the operating batch",
            {
                "batch": ir.concurrency_per_replica,
                "tp": sh.tp,
                "pp": sh.pp,
                "hbm_tbps": ir.hbm_tbps,
                "weight_bytes_per_param": ir.weight_bytes_per_param,
                "kv_bytes_per_token": ir.kv_bytes_per_token,
            },
            src + " items 3-4",
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
        "inference.max_batch_per_replica": _entry(
            "largest batch <= min(max_batch_per_replica, KV budget / (kv_bytes_per_token_per_gpu x (prompt + "
            "output))) whose TPOT meets tpot_ms; KV budget = HBM x inference_memory_utilization - weights / (tp x pp)",
            {
                "max_sequences_by_memory": sh.max_sequences_by_memory,
                "kv_budget_gib_per_gpu": sh.kv_budget_gib_per_gpu,
                "weights_gib_per_gpu": sh.weights_gib_per_gpu,
                "tpot_target_ms": spec.tpot_ms,
            },
            src + " items 1-2",
        ),
        "inference.replicas": _entry(
            "ceil(requests_per_s / (serving_utilization_target x max_batch / (TTFT + output_tokens x "
            "TPOT(max_batch))))",
            {
                "requests_per_s": spec.requests_per_s,
                "max_batch": sh.max_batch,
                "capacity_requests_per_s_per_replica": sh.capacity_requests_per_s,
            },
            src + " item 6 (Little's law)",
        ),
        "inference.gpus": _entry(
            "replicas x tp x pp; the replica shape needing the fewest GPUs in total wins (ties: smaller replica)",
            {"replicas": ir.replicas, "tp": sh.tp, "pp": sh.pp},
            "engine rule",
        ),
        "inference.tokens_per_s": _entry(
            "requests_per_s x output_tokens",
            {"requests_per_s": spec.requests_per_s, "output_tokens": spec.output_tokens},
            "definition",
        ),
    }


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
    return {
        "power.it_kw": _entry(
            "systems x system max power (GPU systems only; network, storage and management not yet included)",
            {"systems": build.systems, "system_max_power_kw": system.max_power_kw},
            system.source,
        ),
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
            "liquid: it_kw x (1 - liquid_residual_air_fraction); otherwise 0 (rear doors are counted as air)",
            {"it_kw": fac.it_kw, "method": fac.cooling_method},
            "facility.md section 4; hardware.md section 2",
        ),
        "cooling.tons": _entry(
            "it_kw / 3.517", {"it_kw": fac.it_kw, "kw_per_ton": KW_PER_TON}, "facility.md section 3"
        ),
    }
