"""Calibration held to data the fit did not see: the leave-one-source-out (LOSO) median error stays under 20 %.

The LOSO error (refit every fitted constant without one paper or table, predict it) is the planner's estimate of
its error on a published run it has never seen; the in-sample fit is not tested against a bound because it would
hide exactly what issue 13 found (5 % in-sample, ~35 % on unseen runs).
"""

from __future__ import annotations

import statistics
from datetime import date

import pytest

from calibration.checked_rows import CHECKED_ROWS, NEMO_2407, TORCHTITAN
from calibration.fit import FITTED
from calibration.modern_rows import NEMOTRON4_340B
from calibration.report import accuracy_figures
from calibration.training import ROWS, evaluate_rows
from calibration.whole_run import evaluate_whole_run
from calibration.whole_run_rows import UNCOUNTED_RUNS, WHOLE_RUN_ROWS
from engine.assumptions.registry import ASSUMPTIONS
from engine.workload.model import analyse_model

LOSO_MEDIAN_LIMIT = 0.20


@pytest.fixture(scope="module")
def figures(catalog):
    return accuracy_figures(catalog)


def _median(errors: dict[str, float]) -> float:
    return statistics.median(abs(v) for v in errors.values())


def test_every_throughput_row_is_evaluated(catalog):
    # 6 Narayanan + 4 Korthikanti models x 2 recompute modes + 4 llm-foundry + 11 NVIDIA table rows (one of them
    # DeepSeek-V3, MoE; 4 on GB300 / GB200 racks) + 2 Llama 3 production layouts + Nemotron-4 340B's production
    # run + TinyLlama.
    assert len(ROWS) == 33
    results = evaluate_rows(catalog)
    assert all(r.predicted_step_s is not None for r in results), [r.problems for r in results if r.problems]


def test_sources_are_the_leave_one_out_unit():
    sources = {r.source_id for r in ROWS}
    # Narayanan, Korthikanti, llm-foundry, Megatron-Bridge 25.11, NeMo 24.07, Llama 3 Table 4, Nemotron-4 340B,
    # TinyLlama.
    assert len(sources) == 8


def test_throughput_loso_median_below_limit(figures):
    assert len(figures["loso"]) == len(ROWS)
    assert _median(figures["loso"]) <= LOSO_MEDIAN_LIMIT


def test_throughput_loso_worst_within_the_goal(figures):
    # Issue 13's goal on unseen runs: worst |error| at most 35 % (met since the Llama 3 paper's production layouts
    # give Hopper BF16 a second source; before, holding out llm-foundry left Hopper to an FP8 prior).
    assert max(abs(v) for v in figures["loso"].values()) <= 0.35


def test_every_whole_run_row_runs(figures):
    assert not figures["whole_run_pending"], figures["whole_run_pending"]
    assert set(figures["whole_run_loso"]) == {r.id for r in WHOLE_RUN_ROWS}


def test_whole_run_loso_median_below_limit(figures):
    assert _median(figures["whole_run_loso"]) <= LOSO_MEDIAN_LIMIT


@pytest.mark.xfail(
    strict=True,
    reason="Llama 3 405B ran at its benchmark pace (production efficiency 1.15 on its own); the other runs imply "
    "0.57-0.96, so held out it is predicted about 46 % slow (docs/accuracy.md, 'Production efficiency each "
    "published run implies')",
)
def test_whole_run_loso_worst_within_the_goal(figures):
    # Issue 13's goal on unseen runs: worst |error| at most 35 %. Strict: a fix that meets it must remove the mark.
    assert max(abs(v) for v in figures["whole_run_loso"].values()) <= 0.35


def test_whole_run_loso_errors_other_than_the_known_outlier_stay_within_the_goal(figures):
    # Every source except Llama 3 405B is predicted within the 35 % goal when held out.
    assert all(abs(v) <= 0.35 for rid, v in figures["whole_run_loso"].items() if rid != "llama3-405b")


def test_whole_runs_with_a_published_layout_are_predicted_on_it():
    # EleutherAI/pythia models/12B/pythia-12b.yml: model-parallel-size 4, pipe-parallel-size 1, micro-batch 8,
    # checkpoint-activations true, ZeRO stage 1; models/6.9B/pythia-6.9b.yml: the same with model-parallel-size 2.
    # GPT-NeoX had no context parallelism, and its stack of 2022 ran FlashAttention ("attention-config": flash) with
    # plain tensor-parallel all-reduces: no sequence parallelism, nothing to overlap.
    rows = {r.id: r for r in WHOLE_RUN_ROWS}
    pinned = {rid: r.request["training"].get("parallelism") for rid, r in rows.items()}
    layout = {"pp": 1, "cp": 1, "micro_batch": 8, "recompute": "full", "zero_stage": 1}
    assert pinned["pythia-12b"] == {"tp": 4, **layout}
    assert pinned["pythia-6.9b"] == {"tp": 2, **layout}
    neox = {"flash_attention": 1, "sequence_parallel": 0, "tp_comm_overlap_fraction": 0}
    assert rows["pythia-12b"].request["assumptions"] == rows["pythia-6.9b"].request["assumptions"] == neox
    # mosaicml/llm-foundry scripts/train/yamls/pretrain/mpt-7b.yaml: FSDP FULL_SHARD, activation_checkpointing true;
    # its device micro-batch of 8 is a ceiling, and the published 1,760 sequences per step on 440 GPUs give each
    # GPU 1760 / 440 = 4. The Llama 3 paper's Table 4: 16,384 GPUs as TP8 CP1 PP16 DP128.
    assert rows["mpt-7b"].request["training"]["global_batch_tokens"] == 1760 * 2048
    assert pinned["mpt-7b"] == {"tp": 1, "pp": 1, "cp": 1, "micro_batch": 4, "recompute": "full", "zero_stage": 3}
    assert pinned["llama3-405b"] == {"tp": 8, "pp": 16, "cp": 1}


def test_each_runs_implied_production_efficiency_reproduces_it(figures, catalog):
    # The report's per-run values are solutions, not fitted summaries: set at a run's own value, the planner must
    # reproduce that run's published figure (MPT-7B's 9.5 days and Pythia 6.9B's 33,500 GPU-hours, within 1 %).
    implied = figures["whole_run_implied"]
    for rid in ("mpt-7b", "pythia-6.9b"):
        row = next(r for r in WHOLE_RUN_ROWS if r.id == rid)
        value, _why = evaluate_whole_run(row, catalog, {"production_efficiency": implied[rid]})
        assert value == pytest.approx(row.published, rel=0.01), rid
    # And they order the runs as their errors at the stored value do: a run predicted too slow needs more.
    errs = figures["whole_run_in_sample"]
    slow, fast = max(errs, key=errs.get), min(errs, key=errs.get)
    assert implied[slow] > implied[fast]


def test_the_plan_range_covers_most_published_whole_runs(figures):
    """p10-p90 should cover about 80 % of runs; at least 60 % must be inside, or the range is not honest."""
    inside = [
        rid
        for rid, rng in figures["whole_run_ranges"].items()
        if rng and rng[0] <= next(r.published for r in WHOLE_RUN_ROWS if r.id == rid) <= rng[1]
    ]
    assert len(inside) >= 0.6 * len(WHOLE_RUN_ROWS), inside


def test_stored_defaults_reproduce_the_full_fit(figures):
    for name in FITTED:
        assert ASSUMPTIONS[name].fit == "throughput"
        assert ASSUMPTIONS[name].default == pytest.approx(figures["fit"].values[name], abs=0.005), name
    for name, value in figures["whole_run_fit"].items():
        assert ASSUMPTIONS[name].default == pytest.approx(value, rel=0.01), name


def test_published_iteration_times_are_converted_on_their_own_basis():
    # Narayanan 1T row: 96 x 3072 x 2048 x 128 x 25600^2 x (1 + 2048/153600 + 51200/3276800) / (3072 x 163e12)
    row = next(r for r in ROWS if r.id == "3a-1008B")
    assert row.published_step_s == pytest.approx(102.6, rel=0.002)  # table's implied s/iteration
    # llm-foundry 70B: 2048 x 2048 tokens / (64 GPUs x 1,039 tokens/s/GPU) = 63.08 s.
    row = next(r for r in ROWS if r.id == "3c-70B")
    assert row.published_step_s == pytest.approx(2048 * 2048 / (64 * 1039), rel=0.002)
    # Megatron-Bridge Llama 3.1 405B on 1,024 H100: 512 x 8192 tokens / (1024 x 292 tokens/s/GPU) = 14.03 s.
    row = next(r for r in ROWS if r.id == "3f-llama31-405b-h100")
    assert row.published_step_s == pytest.approx(512 * 8192 / (1024 * 292), rel=1e-9)
    assert (row.parallelism.tp, row.parallelism.pp, row.parallelism.cp, row.parallelism.dp) == (8, 8, 2, 8)
    # Megatron-Bridge 25.09 DeepSeek-V3 on 1,024 H100: 8192 x 4096 tokens / (1024 x 1,297 tokens/s/GPU) = 25.26 s,
    # TP2 PP8 EP64 (dp 64 = 1024 / (2 x 8)).
    row = next(r for r in ROWS if r.id == "3f-deepseek-v3-h100")
    assert row.published_step_s == pytest.approx(25.264, rel=1e-4)
    assert (row.parallelism.tp, row.parallelism.pp, row.parallelism.ep, row.parallelism.dp) == (2, 8, 64, 64)
    # Nemotron-4 340B's final stage keeps the report's iteration time itself (8.0 s for 2,304 x 4,096 tokens on
    # 6,144 H100, TP8 x PP12 x DP64), and its shape is the report's 340B: 96 layers of 18,432 with 8 key/value
    # heads of 192 and a 73,728 squared-ReLU FFN, 256,000 x 18,432 untied embeddings.
    row = next(r for r in ROWS if r.id == "3f-nemotron4-340b-6k-h100")
    assert row.published_step_s == pytest.approx(8.0, rel=1e-9)
    assert (row.parallelism.tp, row.parallelism.pp, row.parallelism.dp) == (8, 12, 64)
    # Per layer: query and output 2 x 18,432^2, keys and values 2 x 18,432 x 1,536, FFN 2 x 18,432 x 73,728 =
    # 3,454,009,344; x 96 = 331.6B non-embedding parameters and 2 x 256,000 x 18,432 = 9.4B embedding, as the
    # report counts them.
    per_layer = 2 * 18432**2 + 2 * 18432 * 1536 + 2 * 18432 * 73728
    assert 96 * per_layer == pytest.approx(331.6e9, rel=0.001)
    assert analyse_model(NEMOTRON4_340B).params == pytest.approx(331.6e9 + 9.4e9, rel=0.002)


def test_llama3_table4_rows_are_converted_at_their_stated_flop_count():
    # Llama 3 paper Table 4, 8,192 GPUs at 430 TFLOP/s: 16M tokens x (6 x 405.9e9 + 12 x 126 x 8192 x 16384) FLOPs
    # per token / (8,192 x 430e12) = 12.566 s; 16,384 GPUs at 400 TFLOP/s: 6.754 s.
    row = next(r for r in ROWS if r.id == "3f-llama3-405b-8k-h100")
    assert row.published_step_s == pytest.approx(12.566, rel=1e-4)
    assert row.batch_sequences * 8192 == 16 * 1024 * 1024
    assert (row.parallelism.tp, row.parallelism.pp, row.parallelism.dp) == (8, 16, 64)
    row = next(r for r in ROWS if r.id == "3f-llama3-405b-16k-h100")
    assert row.published_step_s == pytest.approx(6.754, rel=1e-4)
    assert (row.parallelism.tp, row.parallelism.pp, row.parallelism.dp) == (8, 16, 128)


def test_whole_run_rows_agree_with_their_papers_other_figures():
    rows = {r.id: r for r in WHOLE_RUN_ROWS}
    # LLaMA section 2.4: 380 tokens/s/GPU on 2,048 A100 for 1.4T tokens = 1.4e12 / 380 / 3600 = 1,023,392
    # GPU-hours, against Table 15's 1,022,362 for the 65B run.
    assert rows["llama1-65b"].published == pytest.approx(1.4e12 / 380 / 3600, rel=0.002)
    assert rows["llama1-65b"].request["training"]["tokens"] == 1.4e12
    # Llama 3: 3.8e25 FLOPs for 405B = 6 x 405.9e9 parameters x 15.6e12 tokens (3.799e25).
    tokens = rows["llama3-405b"].request["training"]["tokens"]
    assert 6 * 405.9e9 * tokens == pytest.approx(3.8e25, rel=0.01)
    # BLOOM: 1,082,990 GPU-hours on 48 nodes x 8 A100 = 117.5 days, the run's published dates (BigScience model card:
    # 11 March to 5 July 2022, 116 days) within 1.5 %; its script's TP4 x PP12 x DP8 is those 384 GPUs.
    bloom = rows["bloom-176b"]
    days = bloom.published / (48 * 8) / 24
    assert days == pytest.approx((date(2022, 7, 5) - date(2022, 3, 11)).days, rel=0.015)
    par = bloom.request["training"]["parallelism"]
    assert par["tp"] * par["pp"] * 8 == bloom.request["training"]["gpus"] == 384
    # StarCoderBase (section 5.6): 250,000 iterations of 512 x 8,192 tokens are the 1T tokens trained; TP4 x PP4 x
    # DP32 are the 512 A100; micro-batch 1 x 16 accumulation steps x DP32 are the 512 sequences a step.
    starcoder = rows["starcoder-15b"]
    assert starcoder.request["training"]["tokens"] == pytest.approx(250_000 * 512 * 8192, rel=0.05)
    par = starcoder.request["training"]["parallelism"]
    assert par["tp"] * par["pp"] * 32 == starcoder.request["training"]["gpus"] == 512
    assert par["micro_batch"] * 16 * 32 == 512
    assert starcoder.request["assumptions"]["grad_reduce_bytes_per_param"] == 4  # FP32 gradient reduction


def test_runs_checked_but_not_fitted_are_reported_at_each_plausible_gpu_count(figures):
    # The Llama 3.1 model card's 8B and 70B GPU-hours: 6 x 8.03e9 x 15e12 / (1.46e6 h x 3600 x 989e12) = 13.9 %
    # and 6 x 70.6e9 x 15e12 / (7.0e6 x 3600 x 989e12) = 25.5 % MFU, the figures the notes quote.
    runs = {r.id: r for r in UNCOUNTED_RUNS}
    assert 6 * 8.03e9 * 15e12 / (runs["llama3.1-8b"].published * 3600 * 989e12) == pytest.approx(0.139, abs=0.001)
    assert 6 * 70.6e9 * 15e12 / (runs["llama3.1-70b"].published * 3600 * 989e12) == pytest.approx(0.255, abs=0.001)
    assert "14 %" in runs["llama3.1-8b"].notes and "26 %" in runs["llama3.1-70b"].notes
    for rid, run in runs.items():
        assert sorted(figures["uncounted"][rid]) == sorted(run.gpu_counts), rid  # every count is plannable
    # More GPUs on the same batch cannot make a run cheaper in GPU-hours (each GPU gets less of the batch).
    for rid, by_count in figures["uncounted"].items():
        hours = [by_count[g] for g in sorted(by_count)]
        assert hours == sorted(hours), rid


def test_stored_ranges_hold_every_refit_with_a_source_left_out(figures):
    # The assumption list calls low/high a plausible range holding every leave-one-source-out refit.
    for name in FITTED:
        a = ASSUMPTIONS[name]
        for held in figures["held"]:
            assert a.low - 1e-3 <= held.fit.values[name] <= a.high + 1e-3, (name, held.source)


def test_benchmarks_checked_not_fitted_convert_their_tables_by_hand():
    # torchtitan's docs/performance.md, tokens/s/GPU -> seconds per step for the global batch:
    # Table 1: 16 x 8,192 tokens on 8 GPUs at 6,667 tokens/s/GPU = 131,072 / 53,336 = 2.4575 s;
    # Table 4: 512 x 8,192 on 256 GPUs at 829 = 4,194,304 / 212,224 = 19.764 s;
    # Table 6, CP8: 8 x 262,144 on 512 GPUs at 16 = 2,097,152 / 8,192 = 256 s.
    rows = {r.id: r for r in CHECKED_ROWS}
    assert rows["3f-tt-8b-8-bf16"].published_step_s == pytest.approx(2.4575, abs=1e-4)
    assert rows["3f-tt-70b-256-2d"].published_step_s == pytest.approx(19.764, abs=1e-3)
    assert rows["3f-tt-405b-cp8-256k"].published_step_s == pytest.approx(256.0)
    # llm-foundry's A100 80GB table, MPT 70B on 64 GPUs: 2,048 x 2,048 tokens at 410 tokens/s/GPU = 4,194,304 /
    # 26,240 = 159.84 s; Nemotron-4 15B's Table 2 publishes the iteration time itself (0.64 s on 2,304 H100).
    assert rows["3c-a100-80-70b-2k-64"].published_step_s == pytest.approx(159.84, abs=0.01)
    assert rows["3f-nemotron4-15b-2304"].published_step_s == pytest.approx(0.64)
    assert rows["3f-nemotron4-15b-2304"].gpus == 2304 and rows["3f-nemotron4-15b-2304"].batch_sequences == 1152
    # Context parallelism splits one sequence: GPUs = TP x PP x CP x FSDP, and every Table 2 row keeps 262,144
    # tokens per step (FSDP 8 / CP degree sequences of 32K x CP tokens).
    for row in CHECKED_ROWS:
        p = row.parallelism
        assert p.tp * p.pp * p.cp * p.dp == row.gpus, row.id
        if row.id.startswith("3f-tt-8b-cp"):
            assert row.batch_sequences * row.model.seq_len == 262_144, row.id


def test_benchmarks_checked_not_fitted_move_no_constant_and_are_all_run(figures):
    assert not {r.id for r in CHECKED_ROWS} & {r.id for r in ROWS}  # never in the fit or its LOSO errors
    assert not {r.id for r in CHECKED_ROWS} & set(figures["loso"])
    assert set(figures["checked"]) == {r.id for r in CHECKED_ROWS}
    assert all(error is not None for error in figures["checked"].values())  # each layout is plannable


def test_the_700w_part_is_never_slower_than_the_power_capped_benchmarks(figures):
    # torchtitan measured on H100 held to 500 W with HBM2e at 2.4 TB/s; the catalog's part runs at 700 W with
    # 3.35 TB/s. On the same layout the faster part cannot take longer, so a positive error (planner slower than
    # the capped run) would mean the step model is too pessimistic.
    titan = {r.id for r in CHECKED_ROWS if r.source_id == TORCHTITAN}
    assert len(titan) == 16
    for rid in titan:
        assert figures["checked"][rid] < 0.0, (rid, figures["checked"][rid])


def test_nemo_2407_rows_are_predicted_within_20_percent_without_being_fitted(figures):
    # NeMo 24.07's other DGX H100 FP8 rows, never fitted: e.g. Llama 2 7B on 8 GPUs at 16,934 tokens/s/GPU is
    # 128 x 4,096 / (8 x 16,934) = 3.870 s per step. The planner must land within 20 % of each.
    nemo = [r for r in CHECKED_ROWS if r.source_id == NEMO_2407]
    assert len(nemo) == 7
    llama2_7b = next(r for r in nemo if r.id == "3f-nemo-llama2-7b")
    assert llama2_7b.published_step_s == pytest.approx(3.870, abs=1e-3)
    for row in nemo:
        assert abs(figures["checked"][row.id]) < 0.20, (row.id, figures["checked"][row.id])


def test_fsdp_across_two_gb200_racks_is_not_bound_by_one_nic(figures):
    # NVIDIA's 25.09 row: Llama 3.1 405B, FSDP over 64 ranks with TP2 on 128 GB200 GPUs (two NVL72 racks), 729
    # tokens/s/GPU = 64 x 8,192 / (128 x 729) = 5.62 s per step. Costing every parameter gather at one NIC's
    # 50 GB/s made the planner 5.5x slow (+454 %). The recipe also keeps 95 layers' activations in Grace memory,
    # which the planner replaces by recomputing every layer (a third more compute, so this row is checked, not
    # fitted); within 50 % either way is what the crossing rings alone must deliver.
    rows = {r.id: r for r in CHECKED_ROWS}
    assert rows["3f-llama31-405b-gb200-fsdp-offload"].published_step_s == pytest.approx(5.619, abs=1e-3)
    assert abs(figures["checked"]["3f-llama31-405b-gb200-fsdp-offload"]) < 0.5
