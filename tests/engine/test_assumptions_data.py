"""The assumption registry is package data (engine/data/assumptions/*.toml), read and checked once at import."""

from __future__ import annotations

import pytest

from engine.assumptions import ASSUMPTIONS, KV_BYTES_BY_PRECISION, Assumption
from engine.assumptions.registry import _assumption

GOOD = {
    "name": "x_kw",
    "default": 2.0,
    "unit": "kW",
    "minimum": 1.0,
    "maximum": 3.0,
    "stages": ["training"],
    "description": "A test constant.",
    "source": "Judgement.",
}


def test_records_load_with_their_types():
    # 33 sizing + 37 build assumptions (cooling and PUE are in the build file). checkpoint_bytes_per_param was
    # defined in both Python registries before (the build one silently won); it is now defined once, with the
    # values the plans reported.
    # issue 13: layouts (6), batch tolerance, whole run (7), GEMM tiles (2), fabrics (2), MoE (2), TP overlap;
    # issue 14: procurement lead times, build, burn-in, the spot and on-demand fleet caps (7); the price ranges by
    # basis (8); issue 16's right-sized small builds: head nodes below one SU and for one system, the single-node
    # storage read, the NFS limit (4); issue 17's frontier fabrics: the spines' oversubscription (1) and the campus
    # (hall MW, hall racks, halls per building, hall and building pitch: 5)
    # issue 17's facility: storage sized from the workload (epochs, loader read,
    # asynchronous write share: 3), the site plant (electrical chain 10, heat rejection 6) and the time between
    # roll-out phases (1); issue 17's goodput at scale: recovery modes (goodput target, in-memory copies and their
    # host memory, the elastic stall, its growth and the failures it cannot absorb: 6); the hot spares of an
    # elastic build (repair hours, service level: 2); the SMs hidden expert dispatch holds (1); activation offload
    # to host memory (the share of its copies hidden: 1); a ring collective's step latency on NVLink and on the
    # network (2); the share of a GPU's host memory offload may fill (1), replacing the two host-link speeds now
    # in the catalog's host records (-2); whether the dispatch kernels place the routed tokens themselves (1);
    # whether a cross-node dispatch sends a token once per node (1); the bytes the loss keeps per logit (1);
    # fused attention with 64-wide heads against 128-wide, per GPU generation (3)
    assert len(ASSUMPTIONS) == 156
    assert ASSUMPTIONS["price_range_assumption_high_percent"].default == 35  # AACE 18R-97 Class 4: +20 to +50 %
    checkpoint = ASSUMPTIONS["checkpoint_bytes_per_param"]
    assert (checkpoint.default, checkpoint.minimum, checkpoint.stages) == (14.0, 1.0, ("training", "inference"))
    assert ASSUMPTIONS["max_tensor_parallel"].integer and type(ASSUMPTIONS["max_tensor_parallel"].default) is int
    assert ASSUMPTIONS["storage_fabric_node_oversubscription"].default == 4.0 / 3.0
    assert KV_BYTES_BY_PRECISION == {"bf16": 2.0, "fp8": 1.0, "int8": 2.0, "int4": 2.0, "fp4": 1.0}


def test_shared_note_is_appended_to_the_source():
    source = ASSUMPTIONS["prefill_half_mfu_tokens"].source
    assert source.startswith("Fitted. Fitted with the other inference constants")
    assert source == "Fitted. " + ASSUMPTIONS["inference_allreduce_latency_us"].source.removeprefix("Fitted. ")


def test_no_source_cites_a_private_reference_note():
    for spec in ASSUMPTIONS.values():
        for note in ("facility.md", "fabric.md", "hardware.md", "calibration.md", "cloud-pricing.md", "calibration/"):
            assert note not in spec.source, spec.name


def test_a_good_record_becomes_an_assumption():
    assert _assumption(GOOD, {}, "t.toml") == Assumption(
        "x_kw", 2.0, "kW", "Judgement.", "A test constant.", 1.0, 3.0, ("training",)
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"default": 4.0}, "outside"),
        ({"stages": ["serving"]}, "stages"),
        ({"unit": ""}, "empty"),
        ({"default": "2"}, "wrong type"),
        ({"integer": True, "default": 2.5}, "fractional"),
        ({"colour": "red"}, "unknown keys"),
        ({"source_note": "missing"}, "unknown note"),
    ],
)
def test_a_bad_record_is_refused(change, message):
    with pytest.raises(ValueError, match=message):
        _assumption(GOOD | change, {}, "t.toml")


def test_a_missing_field_is_refused():
    with pytest.raises(ValueError, match="no source"):
        _assumption({k: v for k, v in GOOD.items() if k != "source"}, {}, "t.toml")
