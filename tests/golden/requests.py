"""The golden requests: a fixed set of plans whose figures must not move while the code is restructured.

Captured before issue 12's restructure (`PLANNER_GOLDEN_CAPTURE=1 pytest tests/golden`); every later difference is
either a bug fixed on purpose (listed in `test_golden.INTENDED`) or a regression.
"""

from __future__ import annotations

LLAMA_70B_15T = {"preset": "llama-3-70b"}


def _training(model: dict, **training) -> dict:
    return {"workload": "training", "model": model, "training": training}


def _serving(model: dict, **inference) -> dict:
    base = {"requests_per_s": 20, "prompt_tokens": 1000, "output_tokens": 250}
    base.update(inference)
    return {"workload": "inference", "model": model, "inference": base}


def _with(request: dict, **sections) -> dict:
    out = dict(request)
    out.update(sections)
    return out


GOLDEN_REQUESTS: dict[str, dict] = {
    # design.md's minimal request, auto over every system
    "train-70b-auto-90d": _with(
        _training(LLAMA_70B_15T, tokens=15e12, deadline_days=90),
        hardware={"system": "auto"},
        pricing={"years": 3, "regions": ["us-east-1", "us-west-2"]},
    ),
    "train-8b-auto-30d": _training({"preset": "llama-3-8b"}, tokens=2e12, deadline_days=30),
    "train-405b-auto-120d": _training({"preset": "llama-3-405b"}, tokens=15e12, deadline_days=120),
    "train-gpt3-auto-30d": _training({"preset": "gpt-3-175b"}, tokens=300e9, deadline_days=30),
    # every system pinned
    **{
        f"train-70b-{system}": _with(
            _training(LLAMA_70B_15T, tokens=2e12, deadline_days=60), hardware={"system": system}
        )
        for system in (
            "dgx-a100-80gb",
            "dgx-h100",
            "dgx-h200",
            "dgx-b200",
            "dgx-b300",
            "gb200-nvl72",
            "gb300-nvl72",
            "hgx-h100-oem",
            "hgx-h800",
            "aws-p5",
        )
    },
    # fixed GPU count and pinned layouts
    "train-70b-gpus-1024": _with(_training(LLAMA_70B_15T, tokens=1e12, gpus=1024), hardware={"system": "dgx-h100"}),
    "train-70b-pinned-tp8-pp4": _with(
        _training(
            LLAMA_70B_15T,
            tokens=1e12,
            gpus=1024,
            parallelism={"tp": 8, "pp": 4, "micro_batch": 1, "recompute": "selective"},
        ),
        hardware={"system": "dgx-h100"},
    ),
    "train-8b-fp8-b200": _with(
        _training({"preset": "llama-3-8b"}, tokens=1e12, deadline_days=14, precision="fp8"),
        hardware={"system": "dgx-b200"},
    ),
    "train-70b-deadline-at-p90": _with(
        _training(LLAMA_70B_15T, tokens=2e12, deadline_days=40, deadline_percentile="p90"),
        hardware={"system": "dgx-h100"},
    ),
    "train-70b-batch-2m": _with(
        _training(LLAMA_70B_15T, tokens=1e12, deadline_days=45, global_batch_tokens=2 * 1024 * 1024),
        hardware={"system": "dgx-h200"},
    ),
    # mixture of experts
    "train-deepseek-v3-h800": _with(
        _training(
            {"preset": "deepseek-v3"},
            tokens=14.8e12,
            gpus=2048,
            precision="fp8",
            parallelism={"tp": 1, "pp": 16, "ep": 64, "cp": 1},
        ),
        hardware={"system": "hgx-h800"},
        assumptions={"moe_dispatch_overlap": 0.95},
    ),
    "train-mixtral-8x7b-auto": _training({"preset": "mixtral-8x7b"}, tokens=1e12, deadline_days=30),
    "train-mixtral-8x22b-h100": _with(
        _training({"preset": "mixtral-8x22b"}, tokens=2e12, deadline_days=60), hardware={"system": "dgx-h100"}
    ),
    "train-mixtral-8x7b-ep": _with(
        _training({"preset": "mixtral-8x7b"}, tokens=5e11, gpus=256, parallelism={"ep": 8}),
        hardware={"system": "dgx-h100"},
    ),
    # explicit model shape
    "train-explicit-shape": _with(
        _training(
            {
                "layers": 32,
                "hidden": 4096,
                "heads": 32,
                "kv_heads": 8,
                "ffn_hidden": 14336,
                "vocab": 128256,
                "seq_len": 4096,
            },
            tokens=5e11,
            deadline_days=20,
        ),
        hardware={"system": "dgx-h100"},
    ),
    # infeasible
    "infeasible-405b-8-gpus": _with(
        _training({"preset": "llama-3-405b"}, tokens=1e12, gpus=8), hardware={"system": "dgx-h100"}
    ),
    "infeasible-deadline-1d": _with(
        _training({"preset": "llama-3-405b"}, tokens=15e12, deadline_days=1), hardware={"system": "dgx-a100-80gb"}
    ),
    "infeasible-serving-latency": _with(
        _serving({"preset": "llama-3-405b"}, ttft_ms=5, tpot_ms=1), hardware={"system": "dgx-a100-80gb"}
    ),
    # site, facility and price overrides
    "train-70b-site-overrides": _with(
        _training(LLAMA_70B_15T, tokens=2e12, deadline_days=60),
        hardware={"system": "dgx-h100", "rack_kw": 25, "cooling": "air", "fabric": "roce-400g"},
        site={"electricity_usd_per_kwh": 0.12, "pue": 1.4, "colo_usd_per_kw_month": 180},
    ),
    "train-70b-price-overrides": _with(
        _training(LLAMA_70B_15T, tokens=2e12, deadline_days=60),
        hardware={"system": "dgx-h100"},
        pricing={
            "years": 5,
            "regions": ["us-east-1"],
            "utilization": 0.6,
            "component_prices": {"MQM9700-NS2F": 10.005, "dgx-h100": 290000},
            "parameters": {"maintenance_percent_per_year": 12, "staff_usd_per_year": 250000},
        },
    ),
    "train-b300-liquid-xdr": _with(
        _training(LLAMA_70B_15T, tokens=2e12, deadline_days=30),
        hardware={"system": "dgx-b300", "fabric": "infiniband-xdr", "cooling": "liquid"},
    ),
    "train-assumption-override": _with(
        _training(LLAMA_70B_15T, tokens=2e12, deadline_days=60),
        hardware={"system": "dgx-h100"},
        assumptions={"gemm_efficiency_hopper": 0.5},
    ),
    # serving
    "serve-8b-h100": _with(
        _serving({"preset": "llama-3-8b"}, ttft_ms=1000, tpot_ms=50), hardware={"system": "dgx-h100"}
    ),
    "serve-70b-auto": _serving(LLAMA_70B_15T, requests_per_s=50, prompt_tokens=2000, output_tokens=500),
    "serve-70b-fp8-h200": _with(
        _serving(LLAMA_70B_15T, requests_per_s=30, precision="fp8"), hardware={"system": "dgx-h200"}
    ),
    "serve-405b-int4-b200": _with(
        _serving({"preset": "llama-3-405b"}, requests_per_s=5, precision="int4", tpot_ms=80),
        hardware={"system": "dgx-b200"},
    ),
    "serve-70b-pinned-tp4": _with(
        _serving(LLAMA_70B_15T, requests_per_s=10, parallelism={"tp": 4}), hardware={"system": "dgx-h100"}
    ),
    "serve-mixtral-8x22b-gb200": _with(
        _serving({"preset": "mixtral-8x22b"}, requests_per_s=40), hardware={"system": "gb200-nvl72"}
    ),
    "serve-8b-b300-small": _with(
        _serving({"preset": "llama-3-8b"}, requests_per_s=2, prompt_tokens=500, output_tokens=100),
        hardware={"system": "dgx-b300"},
    ),
    "serve-8b-a100-fp4-refused-or-planned": _with(
        _serving({"preset": "llama-3-8b"}, requests_per_s=100, precision="int8"),
        hardware={"system": "dgx-a100-80gb"},
    ),
    "serve-70b-regions": _with(
        _serving(LLAMA_70B_15T, requests_per_s=25),
        hardware={"system": "dgx-h100"},
        pricing={"years": 1, "regions": ["us-east-1", "us-west-2", "eu-west-1"]},
    ),
    "train-16k-gpus": _with(_training(LLAMA_70B_15T, tokens=15e12, gpus=16384), hardware={"system": "dgx-h100"}),
    # elastic recovery: the build carries hot spares (2,048 systems + 15 spares), priced in the BOM and capex
    "train-405b-16k-elastic": _with(
        _training({"preset": "llama-3-405b"}, tokens=15e12, gpus=16384, checkpointing="elastic"),
        hardware={"system": "dgx-h100"},
    ),
    # plans inside an envelope (issue 17): the largest GB200 NVL72 cluster in 50 MW, and Llama-3-405B on 15T tokens
    # within 20 MW on DGX H100 (infeasible: facility power binds; the largest cluster that fits and its time)
    "capacity-gb200-50mw": {
        "workload": "capacity",
        "hardware": {"system": "gb200-nvl72"},
        "envelope": {"facility_mw": 50},
    },
    "train-405b-h100-within-20mw": _with(
        _training({"preset": "llama-3-405b"}, tokens=15e12, deadline_days=90),
        hardware={"system": "dgx-h100"},
        envelope={"facility_mw": 20},
    ),
}
