"""The verdict: build or rent, which option, for how much, the runner-up and what would flip the answer, in one
plain sentence. Every output (page, PDF, API) shows `costs.verdict` as stored; none re-derives it.

The choice is the cheapest obtainable option (engine/costing/obtainable.py). The runner-up is the cheapest
obtainable option on the other side (build against rent); when the other side has none, the next obtainable
option, and the sentence says why the other side is out. What flips the answer, only conditions the plan does not
already meet: the runner-up's price change that would make it win; while owning competes, the break-even utilisation
between owning and the cloud option involved (same work) on the side where the other choice wins; and when the
deadline alone keeps a cheaper build out (`decided_by` "deadline"), the deadline and the readiness that would let it
in (no utilisation or price of owning can flip an answer the deadline decides).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal

from engine.result.costs import BreakEven, FlipsAt, Verdict

from .comparison import Option, option_result
from .evaluation import Evaluation
from .inputs import SERVING_DAYS
from .money import r, usd_text

__all__ = ["deadline_bound_build", "verdict"]


def _usd(x: Decimal) -> str:
    """Money in the sentence as everywhere a person reads it: three significant figures ($56.9M)."""
    return usd_text(x)


def _pct(x: float) -> str:
    return f"{x * 100:.1f} %"


# What the price of a plan that is not a training job buys, by workload: serving and a capacity plan are priced for
# a period of running (engine/costing/inputs.py, SERVING_DAYS), not for work that ends.
_PERIOD_OF = {"inference": "serving", "capacity": "running the whole cluster"}


def _period(days: float, workload: str) -> str:
    """The period a price covers, in words: 365 days of serving -> "a year of serving", 730 -> "2 years of
    serving", other lengths in days."""
    years = days / SERVING_DAYS  # the year that serving is priced for
    if years == 1:
        length = "a year"
    elif years == int(years):
        length = f"{int(years):,} years"
    else:
        length = f"{days:,.0f} days"
    return f"{length} of {_PERIOD_OF.get(workload, workload)}"


def _what_it_buys(best: Option, workload: str, start: str, percentile: str = "p50") -> str:
    """After the price: when a training job is done ("done in 30.0 days from the plan date"), or the period a
    serving (or capacity) price covers ("over a year of serving from the plan date"), which is not done."""
    if workload not in _PERIOD_OF:
        # the days the deadline was judged at, only when they read differently ("done in 25.8 days (25.8 at p90)"
        # says nothing): at p50 only spot has its own, its interruptions' p90; a deadline met at p90 judges every
        # option at its whole run's p90 (`CostJob.deadline_spread`)
        p90_text = f"{best.finish_days_p90:,.1f}"
        if percentile != "p90":
            case = "with spot interruptions at their p90"
        elif best.option == "spot":
            case = "at the whole run's p90, spot interruptions at theirs"
        else:
            case = "at the whole run's p90"
        p90 = f" ({p90_text} {case})" if p90_text != f"{best.finish_days:,.1f}" else ""
        return f"done in {best.finish_days:,.1f} days{p90} from {start}"
    return f"over {_period(float(best.finish_days), workload)} from {start}"


def _runner_up(ev: Evaluation, best: Option) -> tuple[Option | None, Option | None]:
    """(runner-up, the cheapest excluded option of the other side when that side has nothing obtainable)."""
    ok = sorted(ev.obtainable, key=lambda x: x.job_usd)
    other = sorted((x for x in ev.options if x.choice != best.choice), key=lambda x: x.job_usd)
    other_ok = [x for x in other if x.obtainable]
    if other_ok:
        return other_ok[0], None
    # the same offer in another region at the same price is no alternative: the runner-up differs in kind
    runner = next((x for x in ok if (x.option, x.instance_type) != (best.option, best.instance_type)), None)
    return runner, (other[0] if other else None)


def _break_even_for(cloud: Option | None, table: Sequence[BreakEven]) -> BreakEven | None:
    if cloud is None or not cloud.cloud:
        return None
    key = (cloud.region, cloud.instance_type, cloud.option)
    return next((b for b in table if (b.region, b.instance_type, b.purchase) == key), None)


def _utilization_flip(
    ev: Evaluation, best: Option, runner: Option | None, table: Sequence[BreakEven]
) -> tuple[float | None, str | None]:
    """(break-even utilisation, clause) when moving the owned cluster's utilisation past its break-even with the
    cloud option involved would flip the answer; (None, None) when it would not.

    Utilisation moves the answer only while owning competes (an owned option obtainable), and only across the
    break-even from the plan's own utilisation: the side where the other choice wins. A break-even the plan's
    utilisation is already past (the per-year comparison and the job comparison disagree) is no flip condition."""
    if not any(not x.cloud and x.obtainable for x in ev.options):
        return None, None
    cloud = best if best.cloud else runner
    be = _break_even_for(cloud, table)
    if cloud is None or be is None or be.break_even_utilization is None:
        return None, None
    u = be.break_even_utilization
    owned_wins_above = be.onprem_cheaper == "above"
    # renting chosen: the flip is where owning wins; building chosen: where renting wins
    side = ("above" if owned_wins_above else "below") if best.cloud else ("below" if owned_wins_above else "above")
    assumed = float(ev.onprem.utilization)
    if (assumed > u) if side == "above" else (assumed < u):
        return None, None
    return u, (
        f"the owned cluster being busy {side} {_pct(u)} of the time, where owning it breaks even with renting the "
        f"same work on {cloud.label} (this plan assumes {_pct(assumed)})"
    )


def deadline_bound_build(ev: Evaluation, best: Option) -> Option | None:
    """The owned option the deadline alone keeps out of a rent verdict: the cheapest owned option, when every owned
    option fails only the deadline and that one costs less than the chosen rental (so cost would pick it). None
    when the verdict is decided by cost. On-prem options fail no rule but the deadline (obtainable.py)."""
    onprem = [x for x in ev.options if not x.cloud]
    if not best.cloud or not onprem or any(x.obtainable for x in onprem) or ev.job.deadline_days is None:
        return None
    cheaper = [x for x in onprem if x.job_usd < best.job_usd]
    return min(cheaper, key=lambda x: (x.job_usd, x.done_days)) if cheaper else None


def _ceil1(x: float) -> float:
    """Up to one decimal: a deadline "of at least" this many days is then never short of the finish."""
    return math.ceil(round(x * 10, 6)) / 10


def _job_days(ev: Evaluation, build: Option) -> str:
    """The build's job as the deadline judges it: its p50, or its p90 when the deadline is to be met at p90."""
    if ev.job.deadline_percentile == "p90":
        return f"{build.finish_days_p90:,.1f}-day job at its p90"
    return f"{build.finish_days:,.1f}-day job"


def _deadline_flips(ev: Evaluation, best: Option, build: Option) -> tuple[float, list[str]]:
    """A build the deadline keeps out: the deadline that lets it in, and the readiness date that would meet the
    deadline as asked, when a cluster could be ready that soon at all: with the hardware already on hand it still
    takes the build and burn-in (`costs.time_to_capacity`), so a readiness shorter than those is no condition to
    offer."""
    deadline = ev.job.deadline_days
    assert deadline is not None
    label = build.label[:1].lower() + build.label[1:]
    needed = _ceil1(build.done_days)
    parts = [
        f"a deadline of at least {needed:,.1f} days, which building needs (lead time, build and burn-in "
        f"{build.start_days:,.0f} days, then the {_job_days(ev, build)}), where building at "
        f"{_usd(build.job_usd)} ({label}) costs less than renting at {_usd(best.job_usd)}"
    ]
    ready = math.floor(deadline - build.finish_days_p90 + 1e-9)
    fastest = ev.capacity.build_days + ev.capacity.burn_in_days  # no procurement: the hardware on the dock
    if ready >= max(1.0, fastest):
        parts.append(
            f"the owned cluster ready for work within {ready:,} day{'s' if ready != 1 else ''} of the plan date "
            f"(lead time, build and burn-in now take {build.start_days:,.0f})"
        )
    return needed, parts


def _nothing_else(ev: Evaluation) -> str:
    """No flip to offer: either nothing else can be had, or only the same offer elsewhere (no runner-up in kind)."""
    others = len(ev.obtainable) - 1
    if others <= 0:
        return "No other option can be had."
    if others == 1:
        return "The other option that can be had is the same offer in another region."
    return "The other options that can be had are the same offer in other regions."


def _flips(ev: Evaluation, best: Option, runner: Option | None, table: Sequence[BreakEven]) -> FlipsAt:
    """Only conditions that would flip the answer: never one the plan already meets, and when the deadline keeps
    a cheaper build out, the deadline and readiness that would let it in (no utilisation can: the answer is not a
    matter of cost)."""
    parts: list[str] = []
    factor = None
    if runner is not None and runner.job_usd > 0:
        factor = r(float(best.job_usd / runner.job_usd), 4)
        parts.append(f"the runner-up's cost falling by more than {_pct(1 - factor)} (below {_usd(best.job_usd)})")
    utilization, clause = _utilization_flip(ev, best, runner, table)
    if clause:
        parts.append(clause)
    deadline = None
    build = deadline_bound_build(ev, best)
    if build is not None:
        deadline, clauses = _deadline_flips(ev, best, build)
        parts += clauses
    sentence = ("The answer would flip with " + "; or ".join(parts) + ".") if parts else _nothing_else(ev)
    onprem = [x for x in ev.options if not x.cloud]
    if best.cloud and build is None and onprem and not any(x.obtainable for x in onprem) and ev.job.deadline_days:
        cheapest_build = min(onprem, key=lambda x: x.job_usd)
        sentence += (
            f" A later deadline alone would not flip it: building would cost {_usd(cheapest_build.job_usd)}, "
            f"not less than {_usd(best.job_usd)}."
        )
    return FlipsAt(utilization=utilization, runner_up_price_factor=factor, deadline_days=deadline, sentence=sentence)


def _deadline_risk(ev: Evaluation, best: Option) -> str | None:
    """The recommended option's whole-run p90 against the deadline, said only when the p90 misses it.

    A build runs the chosen system's whole run: its p90 is the plan's own (`training.days_range`). A rental's days
    are the p50 whole run of the sizing it is priced on, without the production-efficiency spread around it; the
    same software runs there, so its p90 carries the same whole-run spread, the chosen system's p90 / p50 (applied
    to spot's interruption p90 for spot), and the sentence says that this is how it was derived."""
    deadline, chosen = ev.job.deadline_days, ev.job.chosen
    if deadline is None or chosen.days_p90 is None or chosen.days <= 0 or ev.job.deadline_percentile == "p90":
        return None  # at p90 every option was held to its p90 (`CostJob.deadline_spread`): none can miss this way
    spread = chosen.days_p90 / chosen.days
    run_p90 = best.finish_days_p90 * spread if best.cloud else chosen.days_p90
    if best.start_days + run_p90 <= deadline + 1e-9:
        return None
    days = f"{deadline:,.0f}" if float(deadline).is_integer() else f"{deadline:,.1f}"
    start = f"from day {best.start_days:,.0f} " if best.start_days else ""
    text = (
        f"Deadline risk: the recommended option ({best.label}) is done in {best.finish_days:,.1f} days {start}at the "
        f"expected whole run (p50), within the {days}-day deadline, but its p90 is {run_p90:,.1f} days"
    )
    if best.start_days:
        text += f", ending on day {best.start_days + run_p90:,.1f}"
    if best.cloud:
        text += (
            f". A rented run's days leave out the whole-run spread of production efficiency; the same software runs "
            f"there, so this p90 applies the plan's own (p90 = {spread:.2f} x p50)"
        )
    return text + (
        ". For more confidence, ask for the deadline to be met at the p90, which holds every option to its p90, or "
        "plan with a shorter deadline."
    )


def verdict(ev: Evaluation, table: Sequence[BreakEven]) -> Verdict | None:
    """The verdict, or None when no option is obtainable (the comparison then says why for each)."""
    ok = sorted(ev.obtainable, key=lambda x: x.job_usd)
    if not ok:
        return None
    best = ok[0]
    runner, other_out = _runner_up(ev, best)
    choice = best.choice
    deadline = ev.job.deadline_days
    within = f" by the {deadline:,.0f}-day deadline" if deadline is not None else ""
    start = f"a start on day {best.start_days:,.0f}" if best.start_days else "the plan date"
    # "Build: Build and own the cluster ..." says the choice twice: "Build: own the cluster ...".
    label = best.label
    if label.lower().startswith(f"{choice} and "):
        label = label[len(choice) + len(" and ") :]
    lead = f"{choice.capitalize()}: {label}"
    text = (
        f"{lead} for {_usd(best.job_usd)}, {_what_it_buys(best, ev.job.workload, start, ev.job.deadline_percentile)}"
        f", the cheapest of {len(ok)} obtainable option{'s' if len(ok) != 1 else ''}{within}."
    )
    if runner is not None:
        text += f" Runner-up: {runner.label} for {_usd(runner.job_usd)}."
    if other_out is not None and other_out.excluded_reason:
        side = "Building" if other_out.choice == "build" else "Renting"
        reason = other_out.excluded_reason.removeprefix("Not obtainable: ")
        label = other_out.label
        # "Build a cluster ..." reads on inside the sentence; a rented option starts with its provider's name ("AWS",
        # "Neocloud"), which keeps its case
        if not other_out.cloud and label[1:2].islower():
            label = label[:1].lower() + label[1:]
        text += f" {side} is out ({label}): {reason}"
    flips = _flips(ev, best, runner, table)
    text += f" {flips.sentence}"
    decided_by = "deadline" if deadline_bound_build(ev, best) is not None else "cost"
    return Verdict(
        choice=choice,
        option=best.label,
        sentence=text,
        job_usd=best.job_usd,
        finish_days=r(float(best.finish_days), 3),
        runner_up=option_result(runner, ev.plan_date),
        flips_at=flips,
        decided_by=decided_by,
        deadline_risk=_deadline_risk(ev, best),
    )
