"""Storage sized from the workload (engine/physical/storage_need.py): checkpoint write in its time budget, the data
loader's read, capacity for the retained checkpoints and the data set raw and tokenised. Values worked by hand."""

from __future__ import annotations

import pytest

from engine import load_catalog, run_plan, validate_request
from engine.assumptions.registry import Assumptions
from engine.physical.storage import size_storage
from engine.physical.storage_need import StorageWorkload, storage_need, token_id_bytes


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_token_ids_are_16_bit_when_the_vocabulary_fits():
    # uint16 holds ids 0..65535: GPT-3's 50,257 fits; Llama 3's 128,256 needs 32 bits.
    assert (token_id_bytes(50_257), token_id_bytes(65_536), token_id_bytes(65_537), token_id_bytes(128_256)) == (
        2,
        2,
        4,
        4,
    )


def test_async_checkpoint_must_land_within_half_the_interval():
    # 70B x 14 B = 0.98 TB; interval 100 s x 0.5 = 50 s -> 980 GB / 50 s = 19.6 GB/s.
    work = StorageWorkload(training_tokens=1e12, checkpointing="asynchronous", checkpoint_interval_s=100.0)
    need = storage_need(40.0, 70e9, 2.0, work, Assumptions())
    assert need.checkpoint_write_budget_s == pytest.approx(50.0)
    assert need.checkpoint_write_gbps == pytest.approx(19.6)
    # Guidance 40 x 0.5 = 20 GB/s is larger: the guidance sets the write.
    assert need.write_gbps == pytest.approx(20.0) and need.write_set_by == "guidance"


def test_a_short_interval_makes_the_checkpoint_set_the_write():
    # 405B x 14 B = 5.67 TB in 20 s x 0.5 = 10 s -> 567 GB/s, above guidance 440 x 0.5 = 220 GB/s.
    work = StorageWorkload(training_tokens=15e12, checkpointing="asynchronous", checkpoint_interval_s=20.0)
    need = storage_need(440.0, 405e9, 2.0, work, Assumptions())
    assert need.write_gbps == pytest.approx(567.0) and need.write_set_by == "checkpoint"


def test_synchronous_checkpoint_uses_the_allowed_stall():
    # 5.67 TB in the 120 s stall = 47.25 GB/s, whatever the interval.
    work = StorageWorkload(training_tokens=15e12, checkpointing="synchronous", checkpoint_interval_s=20.0)
    need = storage_need(40.0, 405e9, 2.0, work, Assumptions())
    assert need.checkpoint_write_gbps == pytest.approx(47.25)


def test_loader_read_and_data_set_from_the_tokens():
    # 1e6 tokens/s x 2 B (vocab 50,257) x amplification 2 = 4 MB/s = 0.004 GB/s: far under any guidance.
    # Data set: 300e9 tokens / 1 epoch: raw 300e9 x 4 B = 1.2 TB, ids 300e9 x 2 B = 0.6 TB.
    # Capacity: (1.2 + 0.6 + 5 x 175e9 x 14 / 1e12 = 12.25) x 1.3 = 18.265 TB.
    work = StorageWorkload(training_tokens=300e9, tokens_per_s=1e6, vocab=50_257)
    need = storage_need(40.0, 175e9, 2.0, work, Assumptions())
    assert need.loader_read_gbps == pytest.approx(0.004)
    assert (need.dataset_raw_tb, need.dataset_tokenised_tb) == pytest.approx((1.2, 0.6))
    assert need.capacity_tb == pytest.approx(18.265)
    assert need.read_set_by == "guidance"


def test_a_fast_loader_sets_the_read():
    # 1e9 tokens/s x 4 B x 2 = 8 GB/s > 5 GB/s guidance.
    work = StorageWorkload(training_tokens=1e12, tokens_per_s=1e9, vocab=128_256)
    need = storage_need(5.0, 8e9, 2.0, work, Assumptions())
    assert need.read_gbps == pytest.approx(8.0) and need.read_set_by == "data loader"


def test_epochs_shrink_the_stored_data_set():
    # 4 epochs over 4e12 training tokens store 1e12 unique tokens: raw 4 TB, ids 4 TB.
    a = Assumptions(overrides={"dataset_epochs": 4.0})
    need = storage_need(40.0, 8e9, 2.0, StorageWorkload(training_tokens=4e12, vocab=128_256), a)
    assert (need.dataset_raw_tb, need.dataset_tokenised_tb) == pytest.approx((4.0, 4.0))


def test_capacity_can_set_the_appliance_count(catalog):
    # 1e15 tokens: raw 4,000 TB + ids 4,000 TB + 5 x 0.112 TB -> x 1.3 = 10,400.7 TB; 500 TB per AI400X2 -> 21,
    # more than read (40 / 90 -> 1) or write (20 / 65 -> 1).
    work = StorageWorkload(training_tokens=1e15, vocab=128_256)
    st, part = size_storage(1, 8e9, 1e15, 2.0, catalog.parts, Assumptions(), work=work)
    assert st.capacity_tb == pytest.approx((8000 + 5 * 0.112) * 1.3)
    assert (part.id, st.appliances, st.binding) == ("ddn-ai400x2", 21, "capacity")
    assert "set by capacity" in st.reason


def test_plan_reports_what_set_each_need(catalog):
    req = validate_request(
        {
            "workload": "training",
            "model": {"preset": "llama-3-70b"},
            "training": {"tokens": 1e12, "gpus": 1024},
            "hardware": {"system": "dgx-h100"},
        },
        catalog,
    )
    plan = run_plan(req, catalog)
    st = plan.storage
    g = plan.training.goodput
    # The write budget is half the goodput model's checkpoint interval (asynchronous is the default).
    assert st.checkpointing == "asynchronous"
    assert st.checkpoint_write_budget_s == pytest.approx(g.checkpoint_interval_s * 0.5, rel=1e-3)
    # 1e12 tokens, Llama 3 vocabulary (128,256): 4 TB raw + 4 TB ids.
    assert (st.dataset_raw_tb, st.dataset_tokenised_tb) == pytest.approx((4.0, 4.0))
    assert st.read_set_by in ("guidance", "data loader") and st.write_set_by in ("guidance", "checkpoint")
    entry = plan.explain["storage.write_gbps"]
    assert "the share of the checkpoint interval a background write may take" in entry.formula
