"""The verdict sentence and the money in it, as a person reads them: values worked by hand."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest

from engine.costing.comparison import Option
from engine.costing.money import usd_text
from engine.costing.providers import option_label, purchase_name
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
    assert option_label("aws", "p5.48xlarge", "on_demand", 16, "us-east-1") == (
        "AWS p5.48xlarge on-demand (16 instances, us-east-1)"
    )
    # a price list whose instance name already says "reserved" says it once
    assert option_label("lambda", "1cc_h100_sxm5 reserved", "reserved_1y", 1, "us-east") == (
        "Lambda 1cc_h100_sxm5 1-year reserved (1 instance, us-east)"
    )


def _evaluation(options: list[Option], deadline_days: float | None, onprem_start_days: float):
    return SimpleNamespace(
        options=options,
        obtainable=[o for o in options if o.obtainable],
        job=SimpleNamespace(deadline_days=deadline_days),
        onprem=SimpleNamespace(utilization=Decimal("0.8")),
        capacity=SimpleNamespace(onprem_start_days=onprem_start_days),
        plan_date=None,
    )


def test_verdict_sentence_rent_when_building_misses_the_deadline():
    rent = Option(
        "on_demand",
        option_label("aws", "p5.48xlarge", "on_demand", 16, "us-east-1"),
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
    # Worked by hand: $56,925,851 -> $56.9M; building done on day 119 + 30 = 149.
    assert v.sentence == (
        "Rent: AWS p5.48xlarge on-demand (16 instances, us-east-1) for $56.9M, done in 30.0 days from the plan "
        "date, the cheapest of 1 obtainable option by the 90-day deadline. Building is out (build and own the "
        "cluster, this job's share of its cost): it cannot start before day 119, past the 90-day deadline. The "
        "answer would flip with a deadline of at least 149.0 days, which building needs (lead time, build and "
        "burn-in 119 days, then the job)."
    )
    assert "None" not in v.sentence and "_" not in v.sentence.replace("p5.48xlarge", "")


def test_verdict_sentence_build_with_runner_up_price_factor():
    build = Option(
        "onprem_shared", "Build and own the cluster, this job's share of its cost", Decimal("16000000"), 78.0, 78.0
    )
    rent = Option(
        "reserved_3y",
        option_label("coreweave", "gd-8xh100ib-i128", "reserved_3y", 512, "us"),
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
        "plan date, the cheapest of 2 obtainable options. Runner-up: CoreWeave gd-8xh100ib-i128 3-year reserved "
        "(512 instances, us) for $20.0M. The answer would flip with the runner-up's cost falling by more than "
        "20.0 % (below $16.0M)."
    )


def test_option_names_say_each_term_once():
    """A contract's instance name carries its term and a reserved instance's name ends in "reserved": the purchase
    words are not said a second time (the cost-over-time chart labelled "3-year contract 3-year reserved")."""
    from engine.costing.providers import option_name

    assert option_name("aws", "p5.48xlarge", "on_demand") == "AWS p5.48xlarge on-demand"
    assert option_name("lambda", "1cc_h100_sxm5 reserved", "reserved_1y") == "Lambda 1cc_h100_sxm5 1-year reserved"
    contract = option_name("neocloud", "hgx-h100-8gpu 3-year contract", "reserved_3y")
    assert contract.endswith("hgx-h100-8gpu 3-year contract") and "reserved" not in contract
