"""Property-based tests (hypothesis) over the request validator and the engine.

Any request, well-formed or junk, must end one of two ways: `RequestInvalid` naming the bad fields, or a
JSON-serialisable plan whose invariants hold (memory fits, counts whole and non-negative, power adds up).
Never any other exception. Bounded and derandomised so the suite stays fast and repeatable.
"""

from __future__ import annotations

import copy
import json
import math
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import RequestInvalid, load_catalog, run_plan, to_json, validate_request
from engine.assumptions.registry import ASSUMPTIONS

CATALOG = load_catalog()
SYSTEMS = sorted(CATALOG.systems)
PRESETS = sorted(CATALOG.models)
FABRICS = ["auto", "infiniband-ndr", "infiniband-xdr", "roce-400g", "roce-800g"]
COOLING = ["auto", "air", "rdhx", "liquid"]
EPS = 1e-6

# Bounded: about 300 cases in all, no per-example deadline (an `auto` plan sizes every system).
# PLANNER_FUZZ_SCALE=20 runs twenty times as many, with a random seed, for a deeper local hunt.
SCALE = float(os.environ.get("PLANNER_FUZZ_SCALE", "1"))
BOUNDED = settings(
    derandomize=SCALE == 1,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

RAN = {"valid_looking": 0, "mutated": 0, "junk": 0, "plans": 0, "feasible": 0, "invalid": 0}

# --------------------------------------------------------------------------------------------- strategies

# Copied on every draw: a shared `{}` mutated inside one request must not leak into (or nest in) the next.
JUNK_SCALARS = st.sampled_from(
    [
        math.nan,
        math.inf,
        -math.inf,
        -1,
        0,
        -0.5,
        1e300,
        10**30,
        "",
        "8",
        "llama",
        True,
        False,
        None,
        [],
        {},
        [1],
        {"a": 1},
    ]
).map(copy.deepcopy)
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    JUNK_SCALARS,
)
junk_json = st.recursive(
    json_leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def model_section(draw) -> dict:
    if draw(st.booleans()):
        model = {"preset": draw(st.sampled_from(PRESETS))}
        if draw(st.integers(0, 4)) == 0:
            model["seq_len"] = draw(st.sampled_from([1024, 4096, 32768]))
        return model
    heads = draw(st.sampled_from([4, 8, 16, 32, 64, 128]))
    head_dim = draw(st.sampled_from([32, 64, 128]))
    model = {
        "layers": draw(st.sampled_from([1, 2, 4, 12, 24, 32, 48, 80, 126])),
        "hidden": heads * head_dim,
        "heads": heads,
        "kv_heads": draw(st.sampled_from([h for h in (1, 2, 4, 8, heads) if heads % h == 0])),
        "ffn_hidden": heads * head_dim * draw(st.sampled_from([2, 3, 4])),
        "vocab": draw(st.sampled_from([1000, 32000, 128256, 256000])),
        "seq_len": draw(st.sampled_from([128, 2048, 8192, 131072])),
    }
    if draw(st.integers(0, 3)) == 0:
        experts = draw(st.sampled_from([2, 8, 16, 64]))
        model["moe"] = {"experts": experts, "active": draw(st.integers(1, min(experts, 8)))}
    if draw(st.integers(0, 3)) == 0:
        model["params"] = draw(st.floats(1e6, 2e12))
    for flag in ("ffn_gated", "tied_embeddings", "biases"):
        if draw(st.integers(0, 5)) == 0:
            model[flag] = draw(st.booleans())
    return model


@st.composite
def training_section(draw) -> dict:
    section: dict = {"tokens": draw(st.sampled_from([1e6, 1e9, 3e11, 2e12, 15e12, 1e14]))}
    if draw(st.booleans()):
        section["deadline_days"] = draw(st.sampled_from([0.5, 7, 30, 90, 365, 3000]))
    else:
        section["gpus"] = draw(st.sampled_from([1, 8, 16, 64, 72, 256, 1024, 4096, 16384]))
    if draw(st.integers(0, 2)) == 0:
        section["precision"] = draw(st.sampled_from(["bf16", "fp8"]))
    if draw(st.integers(0, 3)) == 0:
        section["global_batch_tokens"] = draw(st.sampled_from([131072, 4_194_304, 16_777_216]))
    if draw(st.integers(0, 2)) == 0:
        pin: dict = {}
        for key, values in (("tp", [1, 2, 4, 8]), ("pp", [1, 2, 4, 8]), ("micro_batch", [1, 2, 4])):
            if draw(st.booleans()):
                pin[key] = draw(st.sampled_from(values))
        if "gpus" in section and draw(st.booleans()):
            group = pin.get("tp", 1) * pin.get("pp", 1)
            if section["gpus"] % group == 0:
                pin["dp"] = section["gpus"] // group
        if draw(st.integers(0, 2)) == 0:
            pin["recompute"] = draw(st.sampled_from(["none", "selective", "full"]))
        section["parallelism"] = pin
    return section


@st.composite
def inference_section(draw) -> dict:
    section: dict = {
        "requests_per_s": draw(st.sampled_from([0.01, 1, 20, 500, 20000])),
        "prompt_tokens": draw(st.sampled_from([1, 128, 1000, 32000])),
        "output_tokens": draw(st.sampled_from([1, 64, 250, 4000])),
    }
    if draw(st.booleans()):
        section["ttft_ms"] = draw(st.sampled_from([10, 200, 1000, 60000]))
    if draw(st.booleans()):
        section["tpot_ms"] = draw(st.sampled_from([2, 20, 50, 500]))
    if draw(st.booleans()):
        section["precision"] = draw(st.sampled_from(["bf16", "fp8", "int8", "int4", "fp4"]))
    if draw(st.integers(0, 3)) == 0:
        section["parallelism"] = {k: draw(st.sampled_from([1, 2, 4, 8])) for k in ("tp", "pp") if draw(st.booleans())}
    return section


@st.composite
def valid_looking(draw) -> dict:
    workload = draw(st.sampled_from(["training", "inference"]))
    request: dict = {"workload": workload, "model": draw(model_section())}
    request[workload] = draw(training_section() if workload == "training" else inference_section())
    hardware: dict = {"system": draw(st.sampled_from(["auto", *SYSTEMS]))}
    if draw(st.integers(0, 2)) == 0:
        hardware["fabric"] = draw(st.sampled_from(FABRICS))
    if draw(st.integers(0, 2)) == 0:
        hardware["rack_kw"] = draw(st.sampled_from([5, 15, 40, 80, 130, 2000]))
    if draw(st.integers(0, 2)) == 0:
        hardware["cooling"] = draw(st.sampled_from(COOLING))
    request["hardware"] = hardware
    if draw(st.integers(0, 3)) == 0:
        request["site"] = {"pue": draw(st.floats(1.0, 3.0)), "electricity_usd_per_kwh": 0.1}
    if draw(st.integers(0, 2)) == 0:
        names = draw(st.lists(st.sampled_from(sorted(ASSUMPTIONS)), min_size=1, max_size=3, unique=True))
        overrides = {}
        for name in names:
            spec = ASSUMPTIONS[name]
            if spec.integer:
                overrides[name] = draw(st.integers(int(spec.minimum), int(min(spec.maximum, spec.minimum + 64))))
            else:
                overrides[name] = draw(st.floats(spec.minimum, spec.maximum))
        request["assumptions"] = overrides
    return request


def _paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.extend(_paths(value, (*prefix, key)))
    return out


@st.composite
def mutated(draw) -> dict:
    """A valid-looking request with one to three fields replaced by junk or an unknown key added."""
    request = draw(valid_looking())
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(request)
        path = draw(st.sampled_from(paths))
        parent = request
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.integers(0, 4)) == 0:
            parent[draw(st.sampled_from(["bogus", "Tokens", "gpu", "sytem", ""]))] = draw(junk_json)
        else:
            parent[path[-1]] = draw(st.one_of(JUNK_SCALARS, junk_json))
    return request


# ------------------------------------------------------------------------------------------- invariants


def _whole(value: object, where: str) -> None:
    assert isinstance(value, int) and not isinstance(value, bool), f"{where} = {value!r} is not a whole number"
    assert value >= 0, f"{where} = {value!r} is negative"


def check_outcome(data: object) -> None:
    """check_outcome_of(data), failing with the request spelled out as JSON (hypothesis' repr can be empty)."""
    try:
        check_outcome_of(data)
    except Exception as exc:
        raise AssertionError(f"{type(exc).__name__}: {exc}\nrequest: {json.dumps(data, default=repr)}") from exc


def check_outcome_of(data: object) -> None:
    """The property: RequestInvalid with field errors, or a normalised request that validates to itself and a
    serialisable plan whose invariants hold."""
    try:
        request = validate_request(data, CATALOG)
    except RequestInvalid as exc:
        RAN["invalid"] += 1
        assert exc.errors, "RequestInvalid without errors"
        for path, messages in exc.errors.items():
            assert isinstance(path, str) and path, exc.errors
            assert messages and all(isinstance(m, str) and m for m in messages), exc.errors
        return
    # The stored request is the normalised one: it must validate again, to the same request.
    assert validate_request(request.to_dict(), CATALOG) == request
    plan = to_json(run_plan(request, CATALOG))
    RAN["plans"] += 1
    json.dumps(plan, allow_nan=False)
    assert isinstance(plan["feasible"], bool)
    if not plan["feasible"]:
        assert plan["problems"], "an infeasible plan must say why"
        return
    RAN["feasible"] += 1
    check_feasible_plan(plan, data)


def check_feasible_plan(plan: dict, data: dict) -> None:
    cluster, power = plan["cluster"], plan["power"]
    system = CATALOG.systems[cluster["system"]]
    gpu = CATALOG.gpu_of(system)
    for key in ("systems", "gpus", "job_gpus", "scalable_units", "racks", "systems_per_rack"):
        _whole(cluster[key], f"cluster.{key}")
    assert cluster["systems"] * system.gpus_per_system == cluster["gpus"]
    assert cluster["gpus"] > 0

    if plan["workload"] == "training":
        t = plan["training"]
        _whole(t["gpus"], "training.gpus")
        assert 0 < t["gpus"] <= cluster["gpus"]
        assert t["memory_per_gpu_gib"] <= gpu.hbm_gib + EPS, (t["memory_per_gpu_gib"], gpu.hbm_gib)
        p = t["parallelism"]
        for key in ("tp", "pp", "dp", "micro_batch"):
            _whole(p[key], f"training.parallelism.{key}")
        assert p["tp"] * p["cp"] * p["pp"] * p["dp"] == t["gpus"], (p, t["gpus"])
        assert t["days"] > 0 and t["step_time_s"] > 0 and t["tokens_per_s"] > 0
        pinned = data["training"].get("parallelism") or {}
        for key in ("tp", "pp", "dp"):
            if key in pinned:
                assert p[key] == pinned[key], (key, p, pinned)
        if "gpus" in data["training"]:
            assert t["gpus"] == data["training"]["gpus"]
    else:
        i = plan["inference"]
        for key in ("gpus", "replicas", "gpus_per_replica"):
            _whole(i[key], f"inference.{key}")
        assert 0 < i["gpus"] <= cluster["gpus"]
        assert i["replicas"] * i["gpus_per_replica"] == i["gpus"]
        assert i["memory_per_gpu_gib"] <= gpu.hbm_gib + EPS, (i["memory_per_gpu_gib"], gpu.hbm_gib)

    assert power["it_kw"] > 0 and power["facility_kw"] >= power["it_kw"] - EPS, power
    assert power["per_rack_kw"] > 0
    if "fabric" not in plan:  # a rented cloud instance: nothing is built, so no racks, fabric or CDUs to check
        assert plan["notes"] and "rented from AWS" in plan["notes"][0], plan["notes"]
        return
    rack_kw = (data.get("hardware") or {}).get("rack_kw")
    if rack_kw is not None:
        assert power["per_rack_kw"] <= rack_kw + EPS, (power["per_rack_kw"], rack_kw)
        for rack in plan["racks"]["layout"]:
            if rack["role"] == "compute":
                assert rack["kw"] <= rack_kw + 1e-3, (rack, rack_kw)
    cooling = plan["cooling"]
    assert cooling["liquid_kw"] >= 0 and cooling["air_kw"] >= 0 and cooling["tons"] >= 0
    _whole(cooling["cdus"], "cooling.cdus")

    for name, fabric in plan["fabric"].items():
        if not isinstance(fabric, dict) or "leaf" not in fabric:
            continue
        for key in (
            "leaf",
            "spine",
            "core",
            "node_links",
            "leaf_spine_links",
            "spine_core_links",
            "cables",
            "transceivers",
        ):
            _whole(fabric[key], f"fabric.{name}.{key}")
    _whole(plan["racks"]["total"], "racks.total")
    assert plan["racks"]["total"] >= cluster["racks"]

    assert plan["bom"], "a feasible plan has a bill of materials"
    for line in plan["bom"]:
        _whole(line["quantity"], f"bom {line['part_number']}")
        assert line["quantity"] > 0, line
    compute = plan["bom"][0]
    spares = (cluster.get("hot_spares") or {}).get("systems", 0)  # elastic recovery: a line of their own
    assert compute["category"] == "compute" and compute["quantity"] == cluster["systems"] - spares
    assert sum(line["quantity"] for line in plan["bom"] if line["category"] == "compute") == cluster["systems"]


# ------------------------------------------------------------------------------------------------ tests


@settings(BOUNDED, max_examples=int(150 * SCALE))
@given(valid_looking())
def test_valid_looking_requests_give_a_plan_or_field_errors(data):
    RAN["valid_looking"] += 1
    check_outcome(data)


@settings(BOUNDED, max_examples=int(100 * SCALE))
@given(mutated())
def test_partly_broken_requests_give_a_plan_or_field_errors(data):
    RAN["mutated"] += 1
    check_outcome(data)


@settings(BOUNDED, max_examples=int(60 * SCALE))
@given(
    st.one_of(
        junk_json,
        st.dictionaries(
            st.sampled_from(
                [
                    "workload",
                    "model",
                    "training",
                    "inference",
                    "hardware",
                    "site",
                    "pricing",
                    "assumptions",
                    "name",
                    "x",
                ]
            ),
            junk_json,
            max_size=6,
        ),
    )
)
def test_junk_gives_field_errors(data):
    RAN["junk"] += 1
    check_outcome(data)


def test_no_management_servers_with_a_multi_leaf_inband_fabric():
    """Found by the property test: with no management servers the in-band fabric had a leaf type with no
    leaves, clos.spread() dropped it, and clos() failed on zip(strict=True) (ValueError)."""
    data = {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e9, "gpus": 256},
        "hardware": {"system": "dgx-h100"},
        "assumptions": {"management_servers": 0},
    }
    check_outcome_of(data)


def test_report_fuzz_counts(capsys):
    """Not a property: prints how many cases ran in this session (visible with -s or in -rA)."""
    with capsys.disabled():
        print(f"\nproperty cases: {RAN}")
