"""`explain` entries for the verdict, time to capacity and each obtainability rule, written for the person who
reads the plan: the formula, the figures it used and the public source of each rule."""

from __future__ import annotations

from typing import Any

from engine.assumptions.registry import ASSUMPTIONS
from engine.explain.wording import explain_entry
from engine.result.codec import encode
from engine.result.costs import Costs
from engine.result.plan import ExplainEntry

from .evaluation import Evaluation

__all__ = ["verdict_explain"]

SPOT_SOURCE = (
    "AWS, 'Spot Instance interruptions' (EC2 User Guide): two minutes' notice before reclaiming an instance; "
    "Spot-and-Scoot (arXiv 2604.16457): interruptions of one type in one zone come together"
)
ANOMALY_SOURCE = (
    "AWS Spot Instance Advisor (savings of 46-67 % for P instance types, 2025-06-28 reading); EC2 "
    "describe_spot_price_history per zone"
)


def _named(assumption: str) -> str:
    """`lead_time_gpu_servers_days` -> 'lead time, GPU servers' (the explain source names a reader can read)."""
    words = assumption.removesuffix("_days").removeprefix("lead_time_").replace("_", " ")
    words = words.replace("gpu", "GPU")
    return f"lead time, {words}" if assumption.startswith("lead_time_") else words


def _entry(formula: str, inputs: dict[str, Any], source: str) -> ExplainEntry:
    return explain_entry(formula, encode(inputs), source)


def _rules(ev: Evaluation) -> dict[str, ExplainEntry]:
    job = ev.job
    cap = ASSUMPTIONS["spot_fleet_max_instances"]
    cap_value = job.assumption_overrides.get("spot_fleet_max_instances", cap.default)
    od_cap = ASSUMPTIONS["on_demand_fleet_max_instances"]
    od_value = job.assumption_overrides.get("on_demand_fleet_max_instances", od_cap.default)
    return {
        "costs.comparison.obtainable.deadline": _entry(
            "excluded when start_days + finish_days_p90 > deadline_days (spot at p90; on-prem starts after "
            "procurement lead time + build + burn-in; a deadline to meet at the whole run's p90 holds every option "
            "to its p90: its days x the plan's own p90 / p50)",
            {
                "deadline_days": job.deadline_days if job.deadline_days is not None else "no deadline",
                "onprem_start_days": ev.capacity.onprem_start_days,
                **(
                    {"deadline met at": "the whole run's p90", "p90 / p50 of the whole run": job.deadline_spread}
                    if job.deadline_percentile == "p90"
                    else {"deadline met at": "the expected run (p50)"}
                ),
            },
            "the deadline given in the request; lead times, build and burn-in as derived for the time to capacity "
            "(each with its public source)",
        ),
        "costs.comparison.obtainable.spot_fleet": _entry(
            "spot excluded when instances > spot_fleet_max_instances",
            {"spot_fleet_max_instances": int(cap_value)},
            cap.source,
        ),
        "costs.comparison.obtainable.on_demand_fleet": _entry(
            "on-demand excluded when instances > on_demand_fleet_max_instances",
            {"on_demand_fleet_max_instances": int(od_value)},
            od_cap.source,
        ),
        "costs.comparison.obtainable.serving_on_spot": _entry(
            "spot excluded for serving plans (production traffic)",
            {"workload": job.workload},
            SPOT_SOURCE,
        ),
        "costs.comparison.obtainable.anomalous_price": _entry(
            "spot excluded when its median zone price is more than 75 % under on-demand or only one zone quotes "
            "a usable price",
            {"deep_discount_floor": "25 % of on-demand", "zones_needed": 2},
            ANOMALY_SOURCE,
        ),
    }


def _capacity(ev: Evaluation) -> ExplainEntry:
    t = ev.capacity
    parts = {p.part_class: f"{p.days:,.0f} days ({p.assumption})" for p in t.parts}
    sources = "; ".join(f"{_named(p.assumption)}: {ASSUMPTIONS[p.assumption].source}" for p in t.parts)
    return _entry(
        "onprem_start_days = max(lead time of each part class) + build_days + burn_in_days",
        {
            "lead_times": parts,
            "build_days": t.build_days,
            "burn_in_days": t.burn_in_days,
            "onprem_start_days": t.onprem_start_days,
            "plan_date": t.plan_date or "not given",
        },
        f"{sources}; build: {ASSUMPTIONS['build_days'].source}; burn-in: {ASSUMPTIONS['burn_in_days'].source}",
    )


def verdict_explain(ev: Evaluation, costs: Costs) -> dict[str, ExplainEntry]:
    """The verdict's entry, time to capacity and one entry per obtainability rule."""
    out = _rules(ev)
    if costs.time_to_capacity is not None:
        out["costs.time_to_capacity.onprem_start_days"] = _capacity(ev)
    v = costs.verdict
    if v is not None:
        out["costs.verdict"] = _entry(
            "the cheapest obtainable option (costs.comparison.options with obtainable = true); runner-up = the "
            "cheapest obtainable option on the other side (build or rent), else the next one",
            {
                "choice": v.choice,
                "option": v.option,
                "job_usd": v.job_usd,
                "finish_days": v.finish_days,
                "runner_up": v.runner_up.label if v.runner_up else "none",
                "obtainable_options": sum(1 for o in ev.options if o.obtainable),
                "options": len(ev.options),
            },
            "cloud prices of the plan's price snapshot (each provider's published price list, dated on its row: "
            "AWS Price List API, spot price history and Capacity Blocks, Azure Retail Prices API, Google Cloud "
            "Billing Catalog, neocloud price pages); on-prem prices from dated component price references; each "
            "option sized for the same work by the planner's own search",
        )
    return out
