"""Inference calibration held to data: fit and held-out errors, stored defaults = the fit, published contrasts."""

from __future__ import annotations

import pytest

from calibration.serving import (
    FIT_NAMES,
    NEUTRAL_START,
    evaluate_inference_rows,
    fit_inference,
    fit_loss,
    inference_summary,
    replica_for_row,
)
from calibration.serving_data import INFERENCE_ROWS
from engine.assumptions.registry import ASSUMPTIONS, Assumptions


@pytest.fixture(scope="module")
def results(catalog):
    return evaluate_inference_rows(catalog)


def _by_id(results, rid):
    return next(r for r in results if r.row.id == rid)


def test_every_row_is_evaluated(results):
    # 9 offline + 7 decode (5b) + 7 prefill (5c) fit rows; C10-C12 (12) and the section 7 grid (92) held out.
    assert sum(r.row.role == "fit" for r in results) == 23
    assert all(r.predicted is not None for r in results), [r.row.id for r in results if r.predicted is None]
    assert len({r.id for r in INFERENCE_ROWS}) == len(INFERENCE_ROWS)


def test_errors_within_bounds(results):
    stats = inference_summary(results)
    assert stats["fit"]["median"] <= 0.08
    assert stats["held out"]["median"] <= 0.20
    assert stats["held out"]["rows"] >= 100


def test_stored_defaults_are_the_fit(catalog):
    stored = {n: ASSUMPTIONS[n].default for n in FIT_NAMES}
    stored_loss = fit_loss(catalog, stored)
    refit, refit_loss = fit_inference(catalog, start=NEUTRAL_START)
    assert stored_loss <= refit_loss + 0.002
    for name in ("decode_mbu", "prefill_mfu", "inference_memory_utilization"):
        assert stored[name] == pytest.approx(refit[name], rel=0.03), name


def test_kv_starved_h100_reproduces_published_contrast(results):
    # C4 (70B FP8 on one 80 GB H100) delivers 840 / 2,823 = 30 % of C6 (one 141 GB H200): KV capacity, not speed.
    c4, c6 = _by_id(results, "C4").predicted, _by_id(results, "C6").predicted
    assert 0.2 <= c4 / c6 <= 0.4


def test_effective_mbu_in_published_range(catalog):
    # 5b: derived MBU 41-61 % at light load; the fitted model's effective MBU (bytes / (step x bandwidth)) must sit
    # in that band for the TP1 and TP4 points, and fall from TP1 to TP4 as the reference says.
    a = Assumptions()
    effective = {}
    for rid in ("5b-8b-h100", "5b-70b-h100"):
        row = next(r for r in INFERENCE_ROWS if r.id == rid)
        m = replica_for_row(row, catalog, a)
        batch = m.batch_for_rate(row.load, float(m.max_batch()))
        read = m.weights_read_bytes_per_gpu(batch) + m.kv_read_bytes_per_gpu(batch)
        effective[rid] = read / (m.decode_step_s(batch) * m.gpu.hbm_tbps * 1e12)
    assert 0.41 <= effective["5b-70b-h100"] < effective["5b-8b-h100"] <= 0.70
