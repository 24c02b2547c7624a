"""Engine speed: a whole plan, with every candidate system, must return well under a second."""

from __future__ import annotations

import copy

import pytest

from engine import load_catalog, run_plan, to_json, validate_request
from tests.samples import INFERENCE_REQUEST, TRAINING_REQUEST


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _plan_json(request, catalog):
    """The engine's work as the app uses it: the chain, then the plan's JSON (serialised once)."""
    return to_json(run_plan(request, catalog))


def test_training_plan_every_system(benchmark, catalog):
    """The `system: auto` training plan: budget 0.25 s per plan ("well under a second"). Measured (issue 13 speed
    work, 2-core machine shared with other work at load 4-5, so about twice a quiet machine's times): median
    750-1070 ms before, 430 ms after. Second round, at load about 1: median 218 ms on main -> 152 ms. Third
    round, at load 6: CPU time per plan min 167-195 ms on main -> 143-153 ms. Fourth round (the same search as
    the auto 70B plan below: 430 M -> 384 M instructions), at load about 3, interleaved: CPU min 128-129 ms on
    main -> 109-123 ms. Fifth round (see the auto 70B plan), pytest-benchmark median interleaved with main at load
    2-2.8: 115-135 ms on main -> 102-127 ms (min 118-133 -> 102-115 ms). Eighth round (see the auto 70B plan):
    358 M -> 290 M instructions per plan; CPU median 91.0-92.0 -> 75.2-75.8 ms, interleaved, at load 2.7-3.

    Was `tests/engine/test_plan.py::test_auto_plan_is_fast`, a wall-clock assertion that failed on a loaded
    machine; timings are measured here (`make bench`), not asserted in the suite.
    """
    request = validate_request(copy.deepcopy(TRAINING_REQUEST), catalog)
    result = benchmark(_plan_json, request, catalog)
    assert result["cluster"]["gpus"] > 0


def test_training_plan_405b_fixed_gpus(benchmark, catalog):
    """Second round of the issue 13 speed work, at load about 1 on 2 cores: median 148 ms on main -> 95 ms.
    Third round, at load 6-8: CPU time per plan min 145-195 ms on main -> 132-152 ms (noisy). Fourth round:
    instructions per plan 412 M -> 375 M (-9 %); CPU time per plan at load about 3, interleaved: min 100-106 ms on
    main -> 97-104 ms. Fifth round, pytest-benchmark interleaved with main at load 2-2.8: median 95-118 ms on main
    -> 88-103 ms. Eighth round (see the auto 70B plan): 314 M -> 269 M instructions per plan; CPU median
    90.3-90.7 -> 72.6-74.8 ms, interleaved, at load 2.7-3."""
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 15e12, "gpus": 16384, "global_batch_tokens": 16 * 2**20},
        "hardware": {"system": "auto"},
    }
    result = benchmark(_plan_json, validate_request(body, catalog), catalog)
    assert result["training"]["gpus"] > 0


def test_inference_plan(benchmark, catalog):
    request = validate_request(copy.deepcopy(INFERENCE_REQUEST), catalog)
    result = benchmark(_plan_json, request, catalog)
    assert result["inference"]["gpus"] > 0


def test_request_validation(benchmark, catalog):
    benchmark(validate_request, copy.deepcopy(TRAINING_REQUEST), catalog)


AUTO_70B = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
    "hardware": {"system": "auto"},
}


def test_auto_70b_15t_90_days_plan(benchmark, catalog):
    """Issue 3 goal: a whole `system: auto` training plan for 70B / 15T tokens / 90 days under 0.5 s; issue 13:
    under 100 ms median with context parallelism and uneven stages in the grid. Measured at load 4-5 on 2 cores
    (about twice a quiet machine's times): median 780-1000 ms before the speed work, 470-530 ms after (the
    repeated request reuses the layout costs, `search/layout_cache.py`; from scratch: the `_cold` test below);
    CPU time per plan 330 -> 157 ms at that load. The 100 ms goal is not met yet.

    Second round (every AWS system is now sized for the same job too, 14 system searches per plan), measured at
    load about 1 on 2 cores, 25 rounds: median 212 ms on main -> 154 ms (cloud sizings without a frontier,
    the DGX/HGX H100 twins sharing one search, layout-only step figures gathered once, the deadline grid kept
    with the layout costs). What is left: the deadline searches (~55 %) and frontiers (~30 %), of which the
    step model's ~70K candidate rows are ~40 %; the search's reported statistics count those rows, so cutting
    them changes plans' `search` figures (a golden re-capture), not attempted here.

    Third round (memory checked only where it can decide, 70K full step-model rows -> ~62K step-time rows and
    ~11K memory checks; a byte-bounded layout cache; per-layer figures once per distinct row; row gathers with
    `take`), measured at load 6-8 on 2 cores (other engineers' test runs), interleaved with main, 12 rounds:
    CPU time per plan min 182-187 ms on main -> 142-154 ms, wall median 890-1090 -> 625-655 ms; instructions
    per plan (valgrind, load-independent) 522 M -> 429 M (-18 %). The 100 ms goal is still not met: what is left
    is spread over the 13 deadline searches (~45 %, half of it step times) and 8 frontiers (~40 %).

    Fourth round: the envelope and right-sized-build merge added about 2 % (422 M -> 430 M instructions per plan;
    the 194 ms measured after it was the machine's load: 129-135 ms CPU per plan at load 0.2). Then 430 M -> 384 M
    (-11 %), no answer or search counter changed (golden plans and every plan's JSON compared exactly): the whole
    run's three goodput and straggler rows in one numpy pass and the frontier's days without the factor records
    (the frontier's nearest-batch retry and whole runs were 13 % and 8 % of a plan), the divisor table's answers
    listed instead of searched, the GPU-count filter's (count, layout) pairs from a flat mask, stage layer counts
    remembered. CPU time per plan, interleaved with main at load about 3: min 114-128 ms on main -> 109-119 ms.
    Still above 100 ms: what is left is numpy's cost per call and per gathered value, spread thinly (the largest
    single items: fancy indexing and `take` about 13 %, the interpreter about 8 %).

    Fifth round, no answer changed (golden plans, and 52 plans' JSON compared exactly: only `search.
    model_evaluations` of searches where no size meets the deadline falls, e.g. aws-p4d 8,652 -> 1,035, which the
    goldens list as search work): the whole-run efficiency by GPU count in one table per whole-run inputs, shared
    by the twelve 8-GPU systems (`search/count_efficiency.py`, 419 M -> 411 M instructions); the frontier's
    nearest-batch retry inside its first pass (-> 409 M); about ten fewer numpy operations per step-time call,
    bit for bit the same figures (-> 397 M); the recovery mode and goodputs of a GPU count remembered
    (`performance/mode_memo.py`, -> 382-386 M); the closest misses of a search where nothing meets the deadline
    (aws-p4d, aws-p4de here) timed lazily in order of the days bound (`search/deadline_miss.py`: about one
    candidate in ten; 386 M -> 388-390 M instructions, as one 8-10K-row pass was few instructions per value but
    memory-bound: that sizing's CPU time 6.7-7.1 ms -> 4.4 ms). pytest-benchmark median interleaved with main, two
    rounds at load 2-2.8: 125 and 114 ms on main -> 114 and 105 ms; then at load 1.6-2.4: 163 and 330 (noise) ms
    on main -> 120 and 125 ms (min 127-145 -> 116 ms). The quietest measurement (load 1.3, 15 plans timed with
    `time.process_time`, two rounds interleaved with main): CPU median 117.5 and 114.9 ms on main -> 106.6 and
    103.5 ms, wall the same; from scratch 205 and 184 -> 177 and 178 ms; the 405B plan 99 and 96 -> 91 and 90 ms;
    the every-system plan 123 and 117 -> 116 and 109 ms. The 100 ms median is not met: about 104 ms at load 1.3
    (main took 119 ms CPU at load 0.3 before this round, so perhaps just under 100 ms on a quiet machine, not
    measured). What is left is still spread: the 13
    deadline searches about 44 % and the 8 frontiers about 40 % of a plan, mostly numpy's cost per call
    (`dp_step._times` about 140 us per call whatever the rows, about 12 %). Merged with that stop's other work
    (production efficiency 0.725, hot spares), on a quiet machine (load 0.1): median 117 ms, min 113 ms; CPU time
    interleaved with the stop's starting main, 15 plans: 120-134 ms against 130-132 ms.

    Sixth round, no answer changed (golden plans, and 100 plans' JSON compared exactly with the round's starting
    code; only search work counters may move). The machine was shared at load 4-7 throughout (wall times 4-6 times
    a quiet machine's), so the figures are instructions per plan (valgrind, the difference between 3 and 1 plans
    after two warm-up plans, load-independent): 401 M at the start (the round's one quiet measurement, load 0.2:
    CPU median 112 ms, pytest-benchmark median 116 ms). The deadline search's candidates ordered by their systems
    bound once per layout with 16-bit keys (a radix sort of ~3K layouts, not a timsort of ~12K 64-bit keys), only
    the winner's dp worked out: 393 M. The closest misses' bound order per layout, the GPU-count search's bound tier
    over (count, layout) pairs (a quarter of the rows per pass), the efficiency ceiling read by systems from a
    table (`count_efficiency.CeilingTable`): 373 M. Whether a grid has experts or offload at all known once per
    layout costs: 359 M (-10.5 % in all). Tried and reverted: every midpoint of a narrow bisection in one pass
    (its replayed calls 8.5 -> 10.1-10.5 ms: the extra rows, most checked for memory, cost more than the call
    saved). CPU time per plan, interleaved with the starting code at load 5.8-6.1: min 171 and 152 ms -> 149 and
    128 ms. If time follows instructions, about 100-104 ms on a quiet machine: the 100 ms goal is at best just
    met, not shown (no quiet machine to measure on). Merged with that stop's recalibration (production efficiency
    0.795), measured on a quiet machine (load 0.2-0.3): medians 93.9, 95.9 and 96.5 ms over 30+ rounds (min
    92.6 ms), 100.3 ms in one 10-round run; from scratch 184 ms; the 405B plan 91 ms, every system 99 ms; the
    search 12.6 M configurations/s alone, 4.3 M/s inside the auto plan. The 100 ms median is met, narrowly.

    Next stop (modules split, the whole-run recalibration, wording; no hot-path change), on a quieter but slower day
    of the shared host (load 0.6-0.8), 30 rounds interleaved with that stop's starting code: medians 109.5 and
    102.5 ms on the starting code, 102.9 and 106.8 ms after (min 100.4 / 98.7 ms): the same within noise, and the
    100 ms goal not shown on this day's machine; the every-system plan 107 -> 105 ms, 405B 97 -> 100 ms.

    Seventh round, no answer changed (golden plans, docs/accuracy.md byte-identical, and 112 plans' JSON compared
    exactly with the round's starting code, search counters included), and every function of the hot path under 80 lines
    (dp_step._times, deadline.smallest, step_time.layout_costs, size_inference and run_plan split into named steps; the
    splits cost no instructions: 351 M per auto 70B plan just before and just after them). Instructions per plan
    (valgrind, 3 plans minus 1 after two warm-up plans, PYTHONHASHSEED=0): auto 70B 359 M -> 340 M (-5.3 %), the 405B
    plan 331 M -> 315 M (-4.8 %), every system 356 M -> 343 M (-3.7 %). What it took: the deadline winner packaged from
    the figures its evaluation already worked out (13 single-row step-model passes per plan), a packaged plan reading
    one number per figure, the JSON codec copying plain leaves without a call each, the recovery-mode memo found on the
    inputs object without hashing it, rented systems' rows without the goodput and whole-run records, assumption values
    resolved once. Wall clock, 30 rounds (a process each, 5 plans after two warm-up plans) interleaved with the starting
    code at load 0-2 (the measuring process itself included): auto 70B median 106.9 -> 101.9 ms (best plan 95.3 -> 89.7
    ms); 405B 98.3 -> 98.8 ms (no difference shown); every system 108.4 -> 101.4 ms (best 103.1 -> 94.3 ms). The ~15 %
    cut aimed for is not reached and the 100 ms median is not shown on this host: what is left is spread over numpy
    calls on the searches' batches (the deadline searches and frontiers, ~80 % of a plan), none above a few per cent.

    Eighth round, no answer changed (golden plans, docs/accuracy.md byte-identical, and 112 plans' JSON compared
    exactly with the round's starting code after every commit, search counters included). Instructions per plan
    (valgrind, 3 plans minus 1 after two warm-up plans, PYTHONHASHSEED=0, OPENBLAS_NUM_THREADS=1: with more BLAS
    threads their idle spinning adds 0-10 M of noise per plan): auto 70B 351.6 M -> 290.6 M (-17.3 %), the 405B
    plan 314 M -> 269 M (-14 %), every system 358 M -> 290 M (-19 %). What it took, mostly in the frontier (whose
    search statistics no output reads): its nearest-batch counts filtered in the same pass as the exact ones, the
    pipeline-fill rule per (count, quad) before any (count, layout) pair is made (half the pairs of an auto plan
    never made), the bound's dp, micro-batches and days per second once per (count, triple), the candidates it
    scores read from the pairs instead of expanding every pair over the ZeRO stages, a first chunk of 256
    (`FRONTIER_TIME_CHUNK`: about 2 passes instead of 3.4); the whole run's failure goodputs remembered per inputs
    and count (`mode_memo.range_goodputs`); the deadline bound's per-layout figures kept with the grid. CPU time per
    plan (20 plans after three warm-ups, a process each), interleaved with the starting code, six rounds at load
    2.7-3.1 (other engineers' work on the 2 cores): median 88.7-93.2 ms -> 73.3-75.4 ms (best plan 87.1-90.6 ->
    70.6-73.9 ms); 405B 90.3-90.7 -> 72.6-74.8 ms; every system 91.0-92.0 -> 75.2-75.8 ms. pytest-benchmark, one
    run each at load 2.5-3: median 92.4 -> 76.5 ms, from scratch (`_cold`) 171 -> 158 ms; the search 4.3 -> 4.5 M
    configurations/s inside the plan. The 100 ms median is met with a margin of about a fifth on this host."""
    request = validate_request(copy.deepcopy(AUTO_70B), catalog)
    result = benchmark(_plan_json, request, catalog)
    assert result["training"]["days"] <= 90
    benchmark.extra_info["search_configs_per_s"] = result["training"]["search"]["configs_per_s"]


def _forget_layouts() -> None:
    """Empty the caches a repeated request hits (layout costs and what is derived from them, activation floors,
    layout grids, whole-run efficiencies and their ceilings and recovery modes by GPU count), so a round plans from
    scratch."""
    from engine.performance.mode_memo import modes_at, range_table
    from engine.search.count_efficiency import CEILINGS, COUNT_EFFICIENCIES
    from engine.search.grid import _layout_grid
    from engine.search.layout_cache import ACTIVATION_FLOORS, LAYOUTS

    LAYOUTS.clear()
    ACTIVATION_FLOORS.clear()
    COUNT_EFFICIENCIES.clear()
    CEILINGS.clear()
    modes_at.cache_clear()
    range_table.cache_clear()
    _layout_grid.cache_clear()


def test_auto_70b_15t_90_days_plan_cold(benchmark, catalog):
    """The same plan as a first request: the layout costs of every system computed again (`layout_cache` empty).
    The repeated request above reuses them, as a re-planned request (other deadline, site or prices) does.
    Measured at load 4-5 on 2 cores: median 540-585 ms. Second round, at load about 1: median 283 ms on main ->
    220 ms (also the activation floor shared by every system with the same grid, the deadline grid worked out
    per (group, ep, micro-batch, pp)). Third round, at load 6-8: CPU time per plan min 271-347 ms on main ->
    237-309 ms; instructions 782 M -> 697 M (-11 %). Fourth round: instructions 697 M -> 658 M (-6 %); CPU
    time per plan at load about 3, interleaved: min 198-213 ms on main -> 184-195 ms. Fifth round (the caches it
    adds are emptied here too), pytest-benchmark interleaved with main, four rounds each at load 1.6-2.8: median
    195-221 ms on main -> 172-226 ms (noisy), min 186-208 -> 169-194 ms. Eighth round (the range goodputs it
    remembers are emptied here too): one run each at load 2.5-3, median 171 -> 158 ms."""
    request = validate_request(copy.deepcopy(AUTO_70B), catalog)
    result = benchmark.pedantic(_plan_json, args=(request, catalog), setup=_forget_layouts, rounds=10, iterations=1)
    assert result["training"]["days"] <= 90
    benchmark.extra_info["search_configs_per_s"] = result["training"]["search"]["configs_per_s"]


AUTO_MIXTRAL_8X22B = {
    "workload": "training",
    "model": {"preset": "mixtral-8x22b", "seq_len": 4096},
    "training": {"tokens": 12e12, "deadline_days": 90, "global_batch_tokens": 16 * 2**20},
    "hardware": {"system": "auto"},
}


def test_auto_mixtral_8x22b_plan(benchmark, catalog):
    """MoE adds expert parallelism (divisors of 8 experts) to the grid; the auto plan must stay interactive.
    Measured at load 4-5 on 2 cores: median 4.5-4.6 s before the issue 13 speed work, 1.0-1.15 s after (the
    whole-run bound cut the deadline search's step-model rows per plan from 515K to 99K). Second round, at load
    about 1: median 659 ms on main -> 448 ms. Third round, at load 6-7: CPU time per plan min 537-561 ms on
    main -> 440-515 ms. Fourth round, at load about 3, interleaved: CPU min 343-375 ms on main -> 353-363 ms,
    no change beyond the noise (instructions not counted for lack of time). Stop 30, quiet machine: the search
    gained folded experts (expert tensor parallelism 1) beside split ones, 1.3-1.6x the MoE layouts: median
    167 ms -> 348 ms, 291 ms once searched folding kept ep >= tp. Stop 35, quiet machine: EP overlap (the combined
    1F1B schedule) is a grid option wherever Megatron-Core can run it, up to twice the MoE layouts: median 244 ms
    on the stop's base -> 384-412 ms. A layout with the overlap is never slower than its twin without, so no exact
    pruning removes it; it costs memory, which the search must weigh."""
    request = validate_request(copy.deepcopy(AUTO_MIXTRAL_8X22B), catalog)
    result = benchmark(_plan_json, request, catalog)
    assert result["training"]["days"] <= 90
    benchmark.extra_info["ep"] = result["training"]["parallelism"]["ep"]


def test_search_configs_per_second(benchmark, catalog):
    """Issue 3 goal: >= 50,000 configurations per second (Calculon: ~430/s); issue 13: above 1 M/s.

    Configurations are the candidates the search decides (`SearchStats.candidates_evaluated`): since issue 13
    most are ruled out by an exact lower bound instead of a full step-model evaluation, so the full evaluations
    (`model_evaluations`) are reported beside them. Measured at load 4-5 on 2 cores: 1.7-2.2 M/s before the
    issue 13 speed work (this GPU-count search was already above 1 M/s), 3.0-5.4 M/s after; inside the auto 70B
    plan (the chosen system's search, layout costs included when not cached) 0.13-0.14 M/s before, 0.45-0.52 M/s
    after (0.21-0.22 M/s from scratch). Third round, at load about 6: 0.8-2.2 M/s on main -> 1.9-4.5 M/s (GPU-count
    mode times candidates first and checks memory only where it can decide; `model_evaluations` counts the
    timed rows: 4,784 -> 2,445 per run).
    """
    from engine.assumptions.registry import Assumptions
    from engine.search.layouts import TrainingSearch
    from engine.workload.model import analyse_model

    body = {"workload": "training", "model": {"preset": "llama-3-70b"}, "training": {"tokens": 15e12, "gpus": 2048}}
    request = validate_request(body, catalog)
    work = analyse_model(request.model)
    system = catalog.systems["dgx-h100"]

    def run():
        search = TrainingSearch(work, request.training, system, catalog.gpu_of(system), Assumptions())
        total, scored = 0, 0
        for gpus in range(512, 8192 + 1, 512):  # 16 GPU counts, every layout x ZeRO stage each
            stats = search.fastest(gpus)[1]
            total += stats.candidates_evaluated
            scored += stats.model_evaluations
        return total, scored

    evaluated, scored = benchmark(run)
    per_s = evaluated / benchmark.stats.stats.median
    benchmark.extra_info["configs_evaluated"] = evaluated
    benchmark.extra_info["configs_per_s"] = per_s
    benchmark.extra_info["model_evaluations_per_s"] = scored / benchmark.stats.stats.median
    print(
        f"\nsearch: {evaluated} configurations per run, {per_s:,.0f} configurations/s "
        f"({scored} scored in full, {scored / benchmark.stats.stats.median:,.0f}/s)"
    )
    assert evaluated > 10_000


def test_physical_build_16384_gpus(benchmark, catalog):
    """Whole physical build (storage, four fabrics with media, racks/power/cooling, BOM, topology) for
    16,384 H100 GPUs = 2,048 DGX H100; goal < 50 ms."""
    from engine.assumptions.registry import Assumptions
    from engine.physical.build import build_physical
    from engine.physical.cluster import build_cluster
    from engine.request.spec import HardwareSpec

    system = catalog.systems["dgx-h100"]

    def run():
        a = Assumptions()
        build, _ = build_cluster(system, 16384, HardwareSpec(system="dgx-h100"), a, catalog.parts)
        return build_physical(
            system,
            build,
            catalog,
            a,
            params=405e9,
            training_tokens=15e12,
            weight_bytes_per_param=2.0,
            gpus_per_replica=None,
        )

    result = benchmark(run)
    print(f"\nphysical build 16,384 GPUs: median {benchmark.stats.stats.median * 1000:.2f} ms")
    assert result.fabric.compute.leaf > 0 and result.bom
    assert benchmark.stats.stats.median < 0.05


AUTO_70B_SERVING = {
    "workload": "inference",
    "model": {"preset": "llama-3-70b"},
    "inference": {"requests_per_s": 20, "prompt_tokens": 2000, "output_tokens": 500, "ttft_ms": 1000, "tpot_ms": 50},
    "hardware": {"system": "auto"},
}


def test_auto_70b_inference_plan(benchmark, catalog):
    """Issue 4 goal: a whole `system: auto` inference plan (every system, every replica shape) under 0.5 s."""
    request = validate_request(copy.deepcopy(AUTO_70B_SERVING), catalog)
    result = benchmark(_plan_json, request, catalog)
    assert result["inference"]["gpus"] > 0
    assert benchmark.stats.stats.median < 0.5
