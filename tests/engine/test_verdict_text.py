"""The verdict sentence and the money in it, as a person reads them: values worked by hand."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest

from engine.costing.comparison import Option
from engine.costing.money import usd_text
from engine.costing.providers import (
    detailed,
    gpu_short_name,
    option_label,
    purchase_name,
    rented_gpus,
    rented_hardware,
    term_name,
)
from engine.costing.verdict import verdict


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (Decimal("56925851.00"), "$56.9M"),  # 5.69|25851e7 -> 56.9 million
        (Decimal("796214.72"), "$796k"),  # the headline card that broke as "796,214,72 / 4 USD"
        (Decimal("999500"), "$1.00M"),  # rounds up across the k/M boundary, half up
        (Decimal("999499.99"), "$999k"),
        (Decimal("1234"), "$1.23k"),
        (Decimal("322928640"), "$323M"),
        (Decimal("1500000000"), "$1.50B"),
        (Decimal("2.4567"), "$2.46"),  # a rate per GPU-hour keeps its cents
        (Decimal("12.5"), "$12.5"),
        (Decimal("0.412"), "$0.412"),
        (Decimal("100"), "$100"),
        (Decimal("-56925851"), "-$56.9M"),
        (Decimal("0"), "$0"),
        ("66379776.00", "$66.4M"),  # money as the codec stores it
        (None, "-"),
    ],
)
def test_usd_text_three_significant_figures(amount, text):
    assert usd_text(amount) == text


def test_purchase_and_option_names():
    assert purchase_name("on_demand") == "on-demand"
    assert purchase_name("reserved_1y") == "1-year reserved"
    assert purchase_name("capacity_block") == "Capacity Block"
    assert purchase_name("some_new_term") == "some new term"
    assert option_label("aws", "on_demand", "p5.48xlarge", 16, "us-east-1") == (
        "AWS on-demand, p5.48xlarge (16 instances, us-east-1)"
    )
    # a neocloud contract says its term once, as a contract, and the provider as "Neocloud"
    assert option_label("contract", "reserved_3y", "8 x H100 SXM5 80GB", 512, "us") == (
        "Neocloud 3-year contract, 8 x H100 SXM5 80GB (512 instances, us)"
    )


def test_named_instance_types_say_their_gpus():
    # A finance reader does not know what p5.48xlarge is: the label names its GPUs (AWS: 8 x H100 SXM5 80GB per
    # p5.48xlarge, "Amazon EC2 P5 instances" page), in one parenthesis with the size and region.
    gpus = rented_gpus(8, "NVIDIA H100 SXM5 80GB")
    assert gpus == "8 x H100 SXM5 80GB"
    assert option_label("aws", "spot", "p5.48xlarge", 512, "us-east-1", gpus) == (
        "AWS spot, p5.48xlarge (8 x H100 SXM5 80GB; 512 instances, us-east-1)"
    )
    assert option_label("gcp", "on_demand", "a4x-highgpu-4g", 1, "us-central1", rented_gpus(4, "NVIDIA B200")) == (
        "Google Cloud on-demand, a4x-highgpu-4g (4 x B200; 1 instance, us-central1)"
    )
    # an option already named by its GPUs does not repeat them
    assert option_label("lambda", "on_demand", "8 x H100 SXM5 80GB", 2, "us-east", gpus) == (
        "Lambda on-demand, 8 x H100 SXM5 80GB (2 instances, us-east)"
    )
    assert rented_gpus(8, None) is None
    assert detailed("p5.48xlarge", None) == "p5.48xlarge"
    assert detailed("AWS spot, p5.48xlarge", "8 x H100 SXM5 80GB", "us-east-1") == (
        "AWS spot, p5.48xlarge (8 x H100 SXM5 80GB; us-east-1)"
    )


def test_rented_hardware_named_like_a_quote_line():
    # a hyperscaler's instance type is its product name; a price list's API id is not: the catalog GPU names it
    assert rented_hardware("aws", "p5.48xlarge", 8, "NVIDIA H100 SXM5 80GB") == "p5.48xlarge"
    assert rented_hardware("azure", "Standard_ND96isr_H100_v5", 8, "NVIDIA H100 SXM5 80GB") == (
        "Standard_ND96isr_H100_v5"
    )
    assert rented_hardware("lambda", "gpu_8x_h100_sxm5", 8, "NVIDIA H100 SXM5 80GB") == "8 x H100 SXM5 80GB"
    assert rented_hardware("runpod", "secure_h100_sxm x8", 8, None) == "secure_h100_sxm x8"  # unknown GPU: as given
    assert gpu_short_name("NVIDIA B200 (HGX/DGX B200, 1,000 W)") == "B200"
    assert term_name("contract", "reserved_1y") == "1-year contract"
    assert term_name("lambda", "reserved_1y") == "1-year reserved"


def _evaluation(
    options: list[Option], deadline_days: float | None, onprem_start_days: float, workload: str = "training"
):
    return SimpleNamespace(
        options=options,
        obtainable=[o for o in options if o.obtainable],
        job=SimpleNamespace(
            deadline_days=deadline_days,
            workload=workload,
            chosen=SimpleNamespace(days=30.0, days_p90=None),
            deadline_percentile="p50",
        ),
        onprem=SimpleNamespace(utilization=Decimal("0.8")),
        # the default build and burn-in (28 + 7 days): the soonest a cluster can be ready with its hardware on hand
        capacity=SimpleNamespace(onprem_start_days=onprem_start_days, build_days=28.0, burn_in_days=7.0),
        plan_date=None,
    )


def test_verdict_sentence_rent_when_building_misses_the_deadline():
    rent = Option(
        "on_demand",
        option_label("aws", "on_demand", "p5.48xlarge", 16, "us-east-1"),
        Decimal("56925851.00"),
        30.0,
        30.0,
        region="us-east-1",
        instance_type="p5.48xlarge",
        provider="aws",
    )
    build = Option(
        "onprem_shared",
        "Build and own the cluster, this job's share of its cost",
        Decimal("80000000.00"),
        30.0,
        30.0,
        start_days=119.0,
        obtainable=False,
        excluded_reason="Not obtainable: it cannot start before day 119, past the 90-day deadline.",
    )
    v = verdict(_evaluation([rent, build], 90.0, 119.0), [])
    assert v is not None and v.choice == "rent"
    # Worked by hand: $56,925,851 -> $56.9M. Building would be done on day 119 + 30 = 149, but at $80.0M it costs
    # more than renting, so a later deadline would not flip the answer: cost decides, and no deadline is offered.
    assert v.decided_by == "cost" and v.flips_at.deadline_days is None
    assert v.sentence == (
        "Rent: AWS on-demand, p5.48xlarge (16 instances, us-east-1) for $56.9M, done in 30.0 days from the plan "
        "date, the cheapest of 1 obtainable option by the 90-day deadline. Building is out (build and own the "
        "cluster, this job's share of its cost): it cannot start before day 119, past the 90-day deadline. No other "
        "option can be had. A later deadline alone would not flip it: building would cost $80.0M, not less than $56.9M."
    )
    # the same build at $40.0M would win on cost: the deadline decides, and its flips are the deadline building
    # needs (149.0 days) and a cluster ready within 90 - 30 = 60 days
    cheaper = Option(
        "onprem_shared",
        "Build and own the cluster, this job's share of its cost",
        Decimal("40000000.00"),
        30.0,
        30.0,
        start_days=119.0,
        obtainable=False,
        excluded_reason=build.excluded_reason,
    )
    v = verdict(_evaluation([rent, cheaper], 90.0, 119.0), [])
    assert v is not None and v.decided_by == "deadline" and v.flips_at.deadline_days == 149.0
    assert v.flips_at.sentence == (
        "The answer would flip with a deadline of at least 149.0 days, which building needs (lead time, build and "
        "burn-in 119 days, then the 30.0-day job), where building at $40.0M (build and own the cluster, this job's "
        "share of its cost) costs less than renting at $56.9M; or the owned cluster ready for work within 60 days of "
        "the plan date (lead time, build and burn-in now take 119)."
    )
    assert "None" not in v.sentence and "_" not in v.sentence.replace("p5.48xlarge", "")


def test_verdict_sentence_build_with_runner_up_price_factor():
    build = Option(
        "onprem_shared", "Build and own the cluster, this job's share of its cost", Decimal("16000000"), 78.0, 78.0
    )
    rent = Option(
        "reserved_3y",
        option_label("coreweave", "reserved_3y", "8 x H100 SXM5 80GB", 512, "us"),
        Decimal("20000000"),
        80.0,
        80.0,
        region="us",
        instance_type="gd-8xh100ib-i128",
        provider="coreweave",
    )
    v = verdict(_evaluation([build, rent], None, 0.0), [])
    assert v.choice == "build"
    # 16,000,000 / 20,000,000 = 0.8: the runner-up must fall by more than 20.0 % to win.
    assert v.flips_at.runner_up_price_factor == 0.8
    assert v.sentence == (
        "Build: own the cluster, this job's share of its cost for $16.0M, done in 78.0 days from the "
        "plan date, the cheapest of 2 obtainable options. Runner-up: CoreWeave 3-year reserved, 8 x H100 SXM5 80GB "
        "(512 instances, us) for $20.0M. The answer would flip with the runner-up's cost falling by more than "
        "20.0 % (below $16.0M)."
    )


def _serving_options(build_usd: str, rent_usd: str) -> tuple[Option, Option]:
    """A year of serving Llama 3 70B on 4 H100 GPUs: owned (first step on day 119) or one Lambda instance."""
    build = Option(
        "onprem_shared",
        "Build and own the cluster, this job's share of its cost",
        Decimal(build_usd),
        365.0,
        365.0,
        start_days=119.0,
    )
    rent = Option(
        "reserved_1y",
        option_label("lambda", "reserved_1y", "8 x H100 SXM5 80GB", 1, "us-east"),
        Decimal(rent_usd),
        365.0,
        365.0,
        region="us-east",
        instance_type="1cc_h100_sxm5 reserved",
        provider="lambda",
    )
    return build, rent


def test_serving_verdict_says_the_period_the_price_covers_when_renting():
    """A serving fleet is never "done": the reviewer's plan read "... for $130k, done in 365.0 days from the plan
    date"; the sentence says the year of serving the price buys instead."""
    build, rent = _serving_options("131000", "129648")
    v = verdict(_evaluation([build, rent], None, 119.0, workload="inference"), [])
    assert v is not None and v.choice == "rent"
    # 129,648 / 131,000 = 0.98968... -> 0.9897: building wins below $130k, 1.0 % cheaper.
    assert v.sentence == (
        "Rent: Lambda 1-year reserved, 8 x H100 SXM5 80GB (1 instance, us-east) for $130k, over a year of serving "
        "from the plan date, the cheapest of 2 obtainable options. Runner-up: Build and own the cluster, this "
        "job's share of its cost for $131k. The answer would flip with the runner-up's cost falling by more than "
        "1.0 % (below $130k)."
    )
    assert "done in" not in v.sentence


def test_serving_verdict_when_building_counts_the_year_from_the_first_step():
    build, rent = _serving_options("126599.14", "129648")
    v = verdict(_evaluation([build, rent], None, 119.0, workload="inference"), [])
    assert v is not None and v.choice == "build"
    assert v.sentence.startswith(
        "Build: own the cluster, this job's share of its cost for $127k, over a year of serving from a start on "
        "day 119, the cheapest of 2 obtainable options. Runner-up: Lambda 1-year reserved"
    )
    assert "done in" not in v.sentence


@pytest.mark.parametrize(
    ("days", "workload", "words"),
    [
        (365.0, "inference", "a year of serving"),
        (730.0, "inference", "2 years of serving"),  # 730 / 365 = 2
        (100.0, "inference", "100 days of serving"),
        (365.0, "capacity", "a year of running the whole cluster"),
    ],
)
def test_the_period_a_serving_price_covers_in_words(days: float, workload: str, words: str):
    from engine.costing.verdict import _period

    assert _period(days, workload) == words


def test_option_names_say_each_term_once():
    """A contract's term is said once, as a contract (the cost-over-time chart once read "3-year contract 3-year
    reserved"); an option's name is provider, term, then the hardware, with no API id in it."""
    from engine.costing.providers import option_name

    assert option_name("aws", "on_demand", "p5.48xlarge") == "AWS on-demand, p5.48xlarge"
    assert option_name("lambda", "reserved_1y", "8 x H100 SXM5 80GB") == "Lambda 1-year reserved, 8 x H100 SXM5 80GB"
    contract = option_name("contract", "reserved_3y", "8 x H100 SXM5 80GB")
    assert contract == "Neocloud 3-year contract, 8 x H100 SXM5 80GB" and "reserved" not in contract


def test_with_only_the_same_offer_elsewhere_the_verdict_says_so_in_number():
    """The same on-demand offer in a second region is no runner-up in kind; the sentence names it, in the singular
    for one such option and the plural for two (it had said "No other option can be had" beside them)."""

    def on_demand(region: str, usd: str) -> Option:
        label = option_label("aws", "on_demand", "p5.48xlarge", 16, region)
        return Option("on_demand", label, Decimal(usd), 30.0, 30.0, region=region, instance_type="p5.48xlarge")

    east, west, ohio = (
        on_demand("us-east-1", "1000000"),
        on_demand("us-west-2", "1100000"),
        on_demand("us-east-2", "1200000"),
    )
    one = verdict(_evaluation([east, west], None, 0.0), [])
    assert one is not None and one.sentence.endswith(
        "The other option that can be had is the same offer in another region."
    )
    two = verdict(_evaluation([east, west, ohio], None, 0.0), [])
    assert two is not None and two.sentence.endswith(
        "The other options that can be had are the same offer in other regions."
    )
    alone = verdict(_evaluation([east], None, 0.0), [])
    assert alone is not None and alone.sentence.endswith("No other option can be had.")
