"""Which options can actually be had: an option that fails a rule is still shown, with the reason in a plain
sentence, but never competes for "cheapest" or the verdict.

Rules (each stated once here, each with its public basis in the explain entry `costs.comparison.obtainable`):

- deadline: the job must be done by the deadline counted from the plan date: spot in its p90 case, on-prem after
  procurement lead time, build and burn-in (costs.time_to_capacity); a request that meets its deadline at the whole
  run's p90 holds every option to its p90, as the build was sized (`CostJob.deadline_spread`);
- fleet size: a spot fleet larger than the named cap `spot_fleet_max_instances`, an on-demand fleet larger than
  `on_demand_fleet_max_instances` (large fleets are sold as reservations; capacity blocks over AWS's limits are
  already unavailable rows);
- production serving on spot: a serving fleet that AWS may reclaim at two minutes' notice is not a service;
- price flagged as anomalous: a spot median more than 75 % under on-demand (deeper than the Spot Instance
  Advisor's 46-67 % for P types) or a spot price quoted by one zone only;
- price assumed: a price labelled `assumption` (no published list price, quote or public estimate behind it) is
  shown for reference but never decides the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.assumptions.registry import Assumptions

from .comparison import Option
from .inputs import CostJob

__all__ = ["ANOMALY_WARNINGS", "RULES", "apply_rules", "exclusions"]

# Spot warnings (engine/costing/spot.py) that mark the quoted price itself as untrustworthy.
ANOMALY_WARNINGS = ("more than 75 % below on-demand", "only one zone quotes")

RULES = (
    "deadline: done by the deadline counted from the plan date (spot at p90; on-prem after lead time, build and "
    "burn-in; every option at its p90 when the deadline is to be met at p90); fleet: a spot fleet of at most "
    "spot_fleet_max_instances instances and an on-demand fleet of at most "
    "on_demand_fleet_max_instances; serving: no production serving "
    "on spot; price: no spot price flagged as anomalous (median more than 75 % under on-demand, or one zone only) "
    "and no price that is only an assumption"
)


def _days(x: float) -> str:
    """Days as a reader writes them: "90" for a whole number of days (a deadline), else one decimal."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def exclusions(opt: Option, job: CostJob, spot_cap: int, on_demand_cap: int = 10**9) -> list[str]:
    """Every rule the option fails, each as a clause of a sentence (empty: obtainable)."""
    out = []
    deadline = job.deadline_days
    if deadline is not None and opt.done_days > deadline + 1e-9:
        if opt.cloud:
            p90 = opt.option == "spot" or job.deadline_percentile == "p90"
            case = "in its p90 case " if p90 else ""
            out.append(f"it finishes {case}after {_days(opt.done_days)} days, past the {_days(deadline)}-day deadline")
        else:
            run = opt.finish_days_p90 if job.deadline_percentile == "p90" else opt.finish_days
            case = " (its p90)" if job.deadline_percentile == "p90" else ""
            out.append(
                f"it cannot start before day {_days(opt.start_days)} (procurement lead time, build and burn-in), so "
                f"the {_days(run)}-day job{case} ends on day {_days(opt.done_days)}, past the "
                f"{_days(deadline)}-day deadline"
            )
    if opt.option == "spot":
        if opt.instances is not None and opt.instances > spot_cap:
            out.append(
                f"it needs a spot fleet of {opt.instances:,} instances, more than the {spot_cap:,} one job can count "
                "on (an assumption of this plan: the largest spot fleet)"
            )
        if job.workload == "inference":
            out.append("it serves production traffic on spot instances, which AWS may reclaim at two minutes' notice")
        flagged = [w for w in opt.spot_warnings if any(a in w for a in ANOMALY_WARNINGS)]
        if flagged:
            out.append("its spot price is flagged as anomalous (" + "; ".join(flagged) + ")")
    if opt.option == "on_demand" and opt.instances is not None and opt.instances > on_demand_cap:
        out.append(
            f"it needs {opt.instances:,} instances on demand, more than the {on_demand_cap:,} one job can count on "
            "without a reservation (an assumption of this plan: the largest on-demand fleet)"
        )
    if opt.price_confidence == "assumption":
        out.append("its price is an assumption, not a published list price, a quote or a public estimate")
    return out


def apply_rules(opts: Sequence[Option], job: CostJob) -> list[Option]:
    """The options with `obtainable` and, when not, `excluded_reason` (one sentence naming every failed rule)."""
    a = Assumptions(overrides=dict(job.assumption_overrides))
    spot_cap, on_demand_cap = int(a["spot_fleet_max_instances"]), int(a["on_demand_fleet_max_instances"])
    out = []
    for opt in opts:
        failed = exclusions(opt, job, spot_cap, on_demand_cap)
        if failed:
            reason = "Not obtainable: " + "; ".join(failed) + "."
            opt = replace(opt, obtainable=False, excluded_reason=reason)
        out.append(opt)
    return out
