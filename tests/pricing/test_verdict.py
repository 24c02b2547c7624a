"""Obtainable options, work-normalised break-even, time to capacity and the verdict, against hand-worked figures.

Same hand plans and prices as test_costing.py (16 x DGX H100 = 128 GPUs for 10 days unless told otherwise; its
on-prem figures are worked out there: per year A + B u with A = 2,264,080.90 and B = 148,681.73).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from engine.result import Candidate
from tests.pricing.test_costing import (
    NEUTRAL_FINANCE,
    P5,
    base_plan,
    inputs,
    price,
    priced,
    training_plan,
    with_pricing,
)

PLAN_DATE = "2026-11-26"


def _with_request(plan, **keys):
    return replace(plan, request={**plan.request, **keys})


def _options(costs, option):
    return [o for o in costs["comparison"]["options"] if o["option"] == option]


def test_break_even_compares_the_same_work_not_the_same_gpus():
    # The A100 80GB cloud option is sized on its own hardware: the same job needs 384 A100s for the same 10 days,
    # 3 x the 128 owned H100s. Work ratio = (48 instances x 8 GPUs x 240 h) / (128 GPUs x 240 h) = 3, so renting
    # the owned cluster's work takes 128 x 3 = 384 GPUs.
    # p4de on-demand 27.44705 $/h / 8 = 3.43088125 $/GPU-h; per year 384 x 8760 x 3.43088125 = 11,540,935.58
    # u* = A / (11,540,935.58 - B) = 2,264,080.90 / 11,392,253.85 = 0.1987
    # (comparing the same 128 GPUs would give 2,264,080.90 / (3,846,978.53 - 148,681.73) = 0.612)
    # (the plain finance terms of test_costing.NEUTRAL_FINANCE, under which A is capex / 3 + colocation + maintenance)
    plan = with_pricing(training_plan(), parameters=NEUTRAL_FINANCE)
    a100 = Candidate(
        "dgx-a100-80gb",
        "a100-80gb-sxm",
        feasible=True,
        chosen=False,
        reason=None,
        gpus=384,
        days=10.0,
        it_kw=312.0,
        systems_kw=312.0,
    )
    plan = replace(plan, candidates=(*plan.candidates, a100))
    prices = [*P5, price("p4de.24xlarge", "on_demand", "27.44705", gpu="a100-80gb-sxm")]
    costs = priced(plan, inputs(prices, plan_date=PLAN_DATE)).costs
    be = next(b for b in costs["comparison"]["break_even"] if b["instance_type"] == "p4de.24xlarge")
    assert be["work_ratio"] == pytest.approx(3.0)
    assert be["cloud_gpus_equivalent"] == pytest.approx(384.0)
    assert be["break_even_utilization"] == pytest.approx(0.1987, abs=1e-4)
    # the chosen system's own GPU: work ratio 1, the break-even of test_costing (0.2993) is unchanged
    p5 = next(
        b
        for b in costs["comparison"]["break_even"]
        if b["purchase"] == "on_demand" and b["instance_type"] == "p5.48xlarge"
    )
    assert p5["work_ratio"] == pytest.approx(1.0) and p5["break_even_utilization"] == pytest.approx(0.2993, abs=1e-4)


def test_spot_fleet_over_the_cap_is_excluded_with_its_reason():
    # 128 GPUs = 16 p5 instances; a cap of 10 instances excludes the spot fleet, the default 64 does not
    capped = _with_request(training_plan(), assumptions={"spot_fleet_max_instances": 10})
    (spot,) = _options(priced(capped, inputs()).costs, "spot")
    assert spot["obtainable"] is False
    assert "spot fleet of 16 instances, more than the 10" in spot["excluded_reason"]
    (spot,) = _options(priced(training_plan(), inputs()).costs, "spot")
    assert spot["obtainable"] is True and "excluded_reason" not in spot


def test_onprem_that_misses_the_deadline_by_lead_time_is_not_obtainable():
    # DGX H100 servers: 84 days lead time + 28 build + 7 burn-in = first step on day 119; the 10-day job ends on day
    # 129, past a 30-day deadline (and within a 200-day one). 2026-11-26 + 119 days = 2027-03-25.
    costs = priced(training_plan(deadline=30.0), inputs(plan_date=PLAN_DATE)).costs
    t = costs["time_to_capacity"]
    assert (t["procurement_days"], t["build_days"], t["burn_in_days"], t["onprem_start_days"]) == (84, 28, 7, 119)
    assert t["onprem_start_date"] == "2027-03-25"
    for o in _options(costs, "onprem_bought") + _options(costs, "onprem_shared"):
        assert o["obtainable"] is False and o["start_date"] == "2027-03-25"
        assert "cannot start before day 119 (" in o["excluded_reason"] and "ends on day 129," in o["excluded_reason"]
    assert not costs["comparison"]["cheapest"]["option"].startswith("onprem")
    later = priced(training_plan(deadline=200.0), inputs(plan_date=PLAN_DATE)).costs
    assert all(o["obtainable"] for o in _options(later, "onprem_shared"))
    # lead time, build and burn-in overridden to nothing: on-prem starts on the plan date and meets 30 days
    now = _with_request(
        training_plan(deadline=30.0),
        assumptions={"lead_time_gpu_servers_days": 0, "build_days": 0, "burn_in_days": 0},
    )
    (shared,) = _options(priced(now, inputs(plan_date=PLAN_DATE)).costs, "onprem_shared")
    assert shared["obtainable"] is True and shared["start_date"] == PLAN_DATE


def test_anomalous_spot_price_is_excluded():
    # one zone quotes 10.00 against 55.04 on-demand: 81.8 % off (deeper than 75 %) and a single zone
    prices = [price("p5.48xlarge", "on_demand", "55.04"), price("p5.48xlarge", "spot", "10.00", zone="use1-az1")]
    (spot,) = _options(priced(training_plan(), inputs(prices)).costs, "spot")
    assert spot["obtainable"] is False
    assert "spot price is flagged as anomalous" in spot["excluded_reason"]
    assert "only one zone" in spot["excluded_reason"] and "75 %" in spot["excluded_reason"]


def test_an_on_demand_fleet_over_the_cap_is_excluded_with_its_reason():
    # 128 GPUs on p5 (8 GPUs each) = 16 instances: under the default cap of 64, over a cap of 8.
    plan = _with_request(training_plan(), assumptions={"on_demand_fleet_max_instances": 8})
    (od,) = _options(priced(plan, inputs(P5)).costs, "on_demand")
    assert od["obtainable"] is False
    assert "16 instances on demand, more than the 8" in od["excluded_reason"]
    (od,) = _options(priced(training_plan(), inputs(P5)).costs, "on_demand")
    assert od["obtainable"] is True


def test_an_assumed_price_is_shown_but_never_decides():
    # A neocloud's H100 node at an assumed $16/h (2.00 per GPU-hour) is cheaper than AWS's 55.04 on-demand, but an
    # assumption is not a price anyone has offered: it is listed, excluded, and the verdict rests on the rest.
    assumed = replace(price("gpu-8x-h100", "on_demand", "16.00"), provider="lambda", confidence="assumption")
    costs = priced(training_plan(), inputs([*P5, assumed])).costs
    rows = [o for o in costs["comparison"]["options"] if o.get("instance_type") == "gpu-8x-h100"]
    assert rows and all(r["obtainable"] is False and "its price is an assumption" in r["excluded_reason"] for r in rows)
    # 16 instances x 16.00 x 240 h = 61,440.00, below every AWS option, yet not the verdict's choice
    assert {Decimal(r["job_usd"]) for r in rows} == {Decimal("61440.00")}
    assert "gpu-8x-h100" not in costs["verdict"]["sentence"]


def test_serving_on_spot_is_not_obtainable():
    plan = training_plan()
    serving = base_plan("inference")
    assert serving.inference is not None and plan.cluster is not None
    plan = replace(
        plan,
        workload="inference",
        training=None,
        inference=replace(serving.inference, gpus=16),
        cluster=replace(plan.cluster, systems=2, gpus=16, job_gpus=16),
        candidates=(replace(plan.candidates[0], gpus=16, days=None),),
    )
    (spot,) = _options(priced(plan, inputs()).costs, "spot")
    assert spot["obtainable"] is False and "production traffic on spot" in spot["excluded_reason"]


def test_verdict_by_hand():
    # 30-day deadline: on-prem starts on day 119, so only cloud options compete. Obtainable: spot (p50 ~79,552,
    # test_costing's hand figure; 16 instances <= 64; 3 usable zones, median 20.00 = 63.7 % off), capacity block
    # 16 x 39.33 x 10 days x 24 = 151,027.20, on-demand 16 x 55.04 x 240 = 211,353.60, 1-year reservation.
    costs = priced(training_plan(deadline=30.0), inputs(plan_date=PLAN_DATE)).costs
    v = costs["verdict"]
    (spot,) = _options(costs, "spot")
    assert v["choice"] == "rent" and v["option"] == spot["label"] and v["job_usd"] == spot["job_usd"]
    assert Decimal(v["job_usd"]) == pytest.approx(Decimal("79552.11"), abs=Decimal("1"))
    # the build side has nothing obtainable: the runner-up is the next cloud option, the capacity block
    assert v["runner_up"]["option"] == "capacity_block" and v["runner_up"]["job_usd"] == "151027.20"
    flips = v["flips_at"]
    assert flips["runner_up_price_factor"] == pytest.approx(
        float(Decimal(v["job_usd"]) / Decimal("151027.20")), abs=1e-4
    )
    assert flips["deadline_days"] == 129.0  # building competes from a 129-day deadline
    # the instance type with its GPUs in words (AWS: p5.48xlarge = 8 x H100 80GB)
    label = "AWS spot, p5.48xlarge (8 x H100 SXM5 80GB; 16 instances, us-east-1)"
    assert v["sentence"].startswith(f"Rent: {label} for $79.6k")
    assert "Building is out" in v["sentence"] and "129.0 days" in v["sentence"]
    assert costs["comparison"]["cheapest"]["label"] == v["option"]


def test_no_verdict_when_nothing_is_obtainable():
    # a 1-day deadline: every option needs 10 days
    costs = priced(training_plan(deadline=1.0), inputs()).costs
    assert "verdict" not in costs and costs["comparison"]["cheapest"] is None


def test_each_instance_type_is_priced_for_the_job_sized_on_its_own_system():
    # the chain sized the job on aws-p5 (EFA fabric) at 136 GPUs for 11 days: p5 rows rent 136 / 8 = 17 instances
    # for 264 h (55.04 x 17 x 264 = 247,019.52), not the 16 instances of the chosen DGX H100 sizing
    plan = training_plan()
    p5 = Candidate(
        "aws-p5",
        "h100-sxm",
        feasible=True,
        chosen=False,
        reason=None,
        gpus=136,
        days=11.0,
        it_kw=173.4,
        systems_kw=173.4,
    )
    costs = priced(replace(plan, cloud_sizings=(p5,)), inputs()).costs
    od = next(r for r in costs["cloud"] if r["purchase"] == "on_demand")
    assert (od["instances"], od["job_hours"], od["job_usd"]) == (17, 264.0, "247019.52")
    assert od["sized_on"]["system"] == "aws-p5"
    # work ratio for break-even: 136 GPUs x 264 h / (128 x 240 h) = 1.16875
    be = next(b for b in costs["comparison"]["break_even"] if b["purchase"] == "on_demand")
    assert be["work_ratio"] == pytest.approx(1.1688, abs=1e-4)


def test_the_chain_sizes_every_rented_system_for_the_same_deadline():
    from engine import load_catalog, run_plan, validate_request

    catalog = load_catalog()
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 2e11, "deadline_days": 20},
        "hardware": {"system": "dgx-h100"},
    }
    plan = run_plan(validate_request(body, catalog), catalog)
    sized = {c.system: c for c in plan.cloud_sizings or ()}
    assert set(sized) == {s for s, sys in catalog.systems.items() if sys.rented}
    for c in sized.values():
        if c.feasible:
            assert c.days is not None and c.days <= 20 and c.gpus and c.gpus % 8 == 0


def _spot_break_even(costs):
    return next(b for b in costs["comparison"]["break_even"] if b["purchase"] == "spot")


def test_a_build_the_deadline_keeps_out_flips_on_the_deadline_never_on_utilisation():
    # 30-day deadline, default finance: building starts on day 119 (84 + 28 + 7) and its 10-day job ends on day 129.
    # Building this job's share costs less than the winning spot option, so the deadline alone decides: no owned
    # utilisation can flip it (the old sentence offered "busy above 71.7 %" while the plan assumed 80 %, a condition
    # already met with the answer still rent).
    costs = priced(training_plan(deadline=30.0), inputs(plan_date=PLAN_DATE)).costs
    v = costs["verdict"]
    (shared,) = _options(costs, "onprem_shared")
    assert shared["obtainable"] is False and Decimal(shared["job_usd"]) < Decimal(v["job_usd"])
    assert v["choice"] == "rent" and v["decided_by"] == "deadline"
    flips = v["flips_at"]
    assert flips["utilization"] is None and "busy" not in v["sentence"]
    assert flips["deadline_days"] == 129.0  # 119 + 10
    # 30 - 10 = 20: a cluster ready by day 20 would finish the job by day 30, but even with the hardware on hand the
    # build and burn-in take 28 + 7 = 35 days, so readiness is no condition to offer: only the deadline is
    assert "a deadline of at least 129.0 days" in flips["sentence"]
    assert "ready for work within" not in flips["sentence"]
    assert flips["sentence"] in v["sentence"]


def test_the_flip_deadline_rounds_up_so_it_is_never_short_of_the_finish():
    # a 10.04-day job from day 119 ends on day 129.04: a 129.0-day deadline would miss it, 129.1 does not
    costs = priced(training_plan(days=10.04, deadline=30.0), inputs(plan_date=PLAN_DATE)).costs
    assert costs["verdict"]["flips_at"]["deadline_days"] == 129.1
    # floor(30 - 10.04) = 19 days to be ready, under the 35 days build and burn-in take: not offered
    assert "ready for work within" not in costs["verdict"]["sentence"]


def test_a_build_that_costs_more_is_not_offered_a_later_deadline():
    # Plain finance: building's share is 81,610.49 (test_costing), more than spot's 79,552.11, so a later deadline
    # would not flip the rent verdict: cost decides, and the sentence says the deadline alone would not.
    plan = with_pricing(training_plan(deadline=30.0), parameters=NEUTRAL_FINANCE)
    costs = priced(plan, inputs(plan_date=PLAN_DATE)).costs
    v = costs["verdict"]
    assert v["choice"] == "rent" and v["decided_by"] == "cost"
    assert v["flips_at"]["deadline_days"] is None and v["flips_at"]["utilization"] is None
    assert (
        "A later deadline alone would not flip it: building would cost $81.6k, not less than $79.6k." in v["sentence"]
    )
    assert "note" not in costs["sensitivity"]


def test_utilisation_flips_on_the_side_where_the_other_choice_wins():
    # Renting wins on cost (200-day deadline, plain finance): owning beats spot above u* = 0.8218, and the plan
    # assumes 0.80, so the flip is "busy above 82.2 %".
    plan = with_pricing(training_plan(deadline=200.0), parameters=NEUTRAL_FINANCE)
    costs = priced(plan, inputs(plan_date=PLAN_DATE)).costs
    v, be = costs["verdict"], _spot_break_even(costs)
    assert v["choice"] == "rent" and v["decided_by"] == "cost" and be["onprem_cheaper"] == "above"
    assert v["flips_at"]["utilization"] == be["break_even_utilization"] == pytest.approx(0.8218, abs=1e-4)
    assert "busy above 82.2 % of the time" in v["sentence"] and "(this plan assumes 80.0 %)" in v["sentence"]
    # Building wins (default finance, shared 71,701.12 < 79,552.11): owning beats spot above its break-even, so
    # renting would win below it: "busy below", never "above" (which the plan's 80 % already is).
    costs = priced(training_plan(deadline=200.0), inputs(plan_date=PLAN_DATE)).costs
    v, be = costs["verdict"], _spot_break_even(costs)
    u = be["break_even_utilization"]
    assert v["choice"] == "build" and be["onprem_cheaper"] == "above" and u < 0.80
    assert v["flips_at"]["utilization"] == u
    assert f"busy below {u * 100:.1f} % of the time" in v["sentence"] and "busy above" not in v["sentence"]


def test_a_break_even_the_plan_is_already_past_is_no_flip_condition():
    # The same rent verdict as above with a break-even table saying owning beats spot above 50 %: the plan assumes
    # 80 %, already above it, and the answer is still rent, so "busy above 50 %" would flip nothing.
    from engine.costing.evaluation import evaluate
    from engine.costing.inputs import Scales, cost_job_from_result
    from engine.costing.price_plan import _comparison
    from engine.costing.verdict import verdict

    plan = with_pricing(training_plan(deadline=200.0), parameters=NEUTRAL_FINANCE)
    job = cost_job_from_result(plan)
    assert job is not None
    ev = evaluate(job, inputs(plan_date=PLAN_DATE), Scales())
    table = tuple(
        replace(b, break_even_utilization=0.5, onprem_cheaper="above") if b.purchase == "spot" else b
        for b in _comparison(ev).break_even
    )
    v = verdict(ev, table)
    assert v is not None and v.choice == "rent"
    assert v.flips_at.utilization is None and "busy" not in v.sentence


def test_the_sensitivity_table_says_when_the_deadline_decides():
    # The deadline-decided rent of the first test: the table moves cost only, and says so with the same figures as
    # the verdict (start day 119, end day 129.0, the 30-day deadline).
    costs = priced(training_plan(deadline=30.0), inputs(plan_date=PLAN_DATE)).costs
    note = costs["sensitivity"]["note"]
    assert note.startswith(
        "The verdict is rent because of the deadline, not cost: building cannot start before day 119"
    )
    assert "it would end on day 129.0, past the 30-day deadline" in note
    assert "no input here changes the answer" in note
    # decided by cost (200-day deadline): no note
    later = priced(training_plan(deadline=200.0), inputs(plan_date=PLAN_DATE)).costs
    assert "note" not in later["sensitivity"] and later["verdict"]["decided_by"] == "cost"


def _with_run_range(plan, p10, p50, p90):
    from engine.result.costs_cloud import FloatPercentiles

    assert plan.training is not None
    return replace(plan, training=replace(plan.training, days_range=FloatPercentiles(p10=p10, p50=p50, p90=p90)))


NO_SPOT = [p for p in P5 if p.purchase != "spot"]
NO_LEAD_TIME = {"lead_time_gpu_servers_days": 0, "build_days": 0, "burn_in_days": 0}


def test_the_deadline_risk_is_the_recommended_rentals_with_the_plans_whole_run_spread():
    # Whole run p10 8, p50 10, p90 12.5 days: spread p90 / p50 = 1.25. A 12-day deadline: building starts on day 119,
    # so the capacity block wins (16 x 39.33 x 240 = 151,027.20; spot left out so the days are exact). Its 10 days
    # are the p50 whole run without the spread; with it, 10 x 1.25 = 12.5 days, past the 12-day deadline.
    plan = _with_run_range(training_plan(deadline=12.0), 8.0, 10.0, 12.5)
    v = priced(plan, inputs(NO_SPOT, plan_date=PLAN_DATE)).costs["verdict"]
    assert v["choice"] == "rent" and v["option"].startswith("AWS Capacity Block") and v["job_usd"] == "151027.20"
    risk = v["deadline_risk"]
    assert risk.startswith(f"Deadline risk: the recommended option ({v['option']}) is done in 10.0 days")
    assert "within the 12-day deadline, but its p90 is 12.5 days." in risk
    assert "applies the plan's own (p90 = 1.25 x p50)" in risk
    # a 13-day deadline holds the p90: no risk
    later = priced(_with_run_range(training_plan(deadline=13.0), 8.0, 10.0, 12.5), inputs(NO_SPOT, plan_date=PLAN_DATE))
    assert "deadline_risk" not in later.costs["verdict"]


def test_the_deadline_risk_of_a_build_is_the_builds_own_p90_from_its_start():
    # Lead time, build and burn-in overridden to nothing: building starts on the plan date, 71,701.12 beats the
    # capacity block, and its own whole-run p90 (12.5 days) is past the 12-day deadline; no rented spread is said.
    plan = _with_request(_with_run_range(training_plan(deadline=12.0), 8.0, 10.0, 12.5), assumptions=NO_LEAD_TIME)
    v = priced(plan, inputs(NO_SPOT, plan_date=PLAN_DATE)).costs["verdict"]
    assert v["choice"] == "build" and v["job_usd"] == "71701.12"
    assert "its p90 is 12.5 days." in v["deadline_risk"] and "rented" not in v["deadline_risk"]


def _at_p90(plan):
    return _with_request(plan, training={**plan.request["training"], "deadline_percentile": "p90"})


def test_a_deadline_met_at_p90_holds_every_option_to_its_p90():
    # Whole run p10 8, p50 10, p90 12.5 days: spread 1.25. A 12-day deadline met at the expected run (p50): the
    # capacity block's 10 days meet it, so it wins (151,027.20), and the deadline risk warns of its 12.5-day p90.
    # Met at p90 instead (the request asks for a run that nine times in ten finishes by then), every option is
    # judged at its p90: the block's 10 x 1.25 = 12.5 days miss the 12-day deadline, so it is not obtainable, and
    # no deadline risk is left to warn of.
    plan = _with_run_range(training_plan(deadline=12.0), 8.0, 10.0, 12.5)
    at_p50 = priced(plan, inputs(NO_SPOT, plan_date=PLAN_DATE)).costs
    assert at_p50["verdict"]["option"].startswith("AWS Capacity Block") and "deadline_risk" in at_p50["verdict"]
    at_p90 = priced(_at_p90(plan), inputs(NO_SPOT, plan_date=PLAN_DATE)).costs
    block = next(o for o in at_p90["comparison"]["options"] if o["option"] == "capacity_block")
    assert block["finish_days_p90"] == 12.5 and block["obtainable"] is False
    assert "it finishes in its p90 case after 12.5 days, past the 12-day deadline" in block["excluded_reason"]
    assert at_p90["comparison"]["deadline_percentile"] == "p90"
    assert at_p90["comparison"]["deadline_rule"].startswith("finish by the deadline at the whole run's p90")
    # every rental runs the same 10-day p50, so none meets 12 days at p90, and building starts on day 119: no
    # option is obtainable, so there is no verdict (and no risk to warn of)
    assert all(not o["obtainable"] for o in at_p90["comparison"]["options"]) and "verdict" not in at_p90
    # a 13-day deadline at p90: 12.5 days fit, the block is back
    later = priced(
        _at_p90(_with_run_range(training_plan(deadline=13.0), 8.0, 10.0, 12.5)), inputs(NO_SPOT, plan_date=PLAN_DATE)
    )
    assert later.costs["verdict"]["option"].startswith("AWS Capacity Block")


def test_a_build_judged_at_p90_ends_at_its_own_p90_after_its_start():
    # No lead time, build or burn-in: building starts on the plan date. Its p50 of 10 days meets a 12-day deadline,
    # its p90 (12.5) does not; at p90 the build is refused with its p90 named.
    plan = _with_request(
        _at_p90(_with_run_range(training_plan(deadline=12.0), 8.0, 10.0, 12.5)), assumptions=NO_LEAD_TIME
    )
    comp = priced(plan, inputs(NO_SPOT, plan_date=PLAN_DATE)).costs["comparison"]
    build = next(o for o in comp["options"] if o["option"] == "onprem_shared")
    assert build["finish_days"] == 10.0 and build["finish_days_p90"] == 12.5 and build["obtainable"] is False
    assert "the 12.5-day job (its p90) ends on day 12.5, past the 12-day deadline" in build["excluded_reason"]


def test_the_sensitivity_note_names_an_input_that_brings_the_build_inside_the_deadline():
    # Building starts on day 119 and its 10-day job ends on day 129.0, past a 128.5-day deadline: rent, decided by
    # the deadline. At the fast end of the MFU row the job is shorter (10 days / the row's high factor), so the build
    # ends by day 128.5 and can be had there: the note names that row instead of saying no input changes the answer.
    costs = priced(training_plan(deadline=128.5), inputs(plan_date=PLAN_DATE)).costs
    assert costs["verdict"]["decided_by"] == "deadline"
    mfu = next(r for r in costs["sensitivity"]["rows"] if r["input"] == "mfu")
    assert 119 + 10.0 / mfu["high_factor"] <= 128.5 and mfu["high"]["build_obtainable"] is True
    assert mfu["low"]["build_obtainable"] is False
    note = costs["sensitivity"]["note"]
    assert "at an end of its range MFU (job time scales with 1 / MFU) brings the build inside the deadline" in note
    assert "no input here changes the answer" not in note


def test_at_p90_the_verdict_says_the_days_it_judged_and_the_flip_adds_up():
    # Met at p90 (spread 1.25), a 13-day deadline: the capacity block's 10-day p50 is 12.5 days at p90, inside it;
    # the sentence gives both and says which p90 (not "spot interruptions", which a capacity block has none of).
    plan = _at_p90(_with_run_range(training_plan(deadline=13.0), 8.0, 10.0, 12.5))
    v = priced(plan, inputs(NO_SPOT, plan_date=PLAN_DATE)).costs["verdict"]
    assert "done in 10.0 days (12.5 at the whole run's p90) from the plan date" in v["sentence"]
    assert "spot interruptions" not in v["sentence"]
    # A 130-day deadline: building starts on day 119 and its job at p90 (12.5 days) ends on day 131.5, past it, so
    # the cheaper build is out; the flip it offers adds up: 119 + 12.5 = 131.5.
    later = _at_p90(_with_run_range(training_plan(deadline=130.0), 8.0, 10.0, 12.5))
    v = priced(later, inputs(NO_SPOT, plan_date=PLAN_DATE)).costs["verdict"]
    assert v["decided_by"] == "deadline" and v["flips_at"]["deadline_days"] == 131.5
    assert (
        "a deadline of at least 131.5 days, which building needs (lead time, build and burn-in 119 days, then "
        "the 12.5-day job at its p90)" in v["sentence"]
    )


def test_spot_at_p90_names_both_p90s():
    # Met at p90 (spread 1.25) by a 30-day deadline: spot wins at $79.6k-ish and its judged days are its
    # interruptions' p90 times the whole run's spread, so the sentence names both, not the whole run's alone.
    plan = _at_p90(_with_run_range(training_plan(deadline=30.0), 8.0, 10.0, 12.5))
    v = priced(plan, inputs(plan_date=PLAN_DATE)).costs["verdict"]
    assert v["option"].startswith("AWS spot")
    assert "at the whole run's p90, spot interruptions at theirs) from the plan date" in v["sentence"]
