"""`money` and `number` share one first step (`_as_decimal`): what each prints for no value, a yes/no, a number
given as text and text that is no number. Expected strings worked out by hand from the rules in their docstrings
(three significant figures with a k/M suffix for money; thousands separators, one decimal from 10, three
significant figures below)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from planner.outputs.formatting import money, number

EN_DASH = "\u2013"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, EN_DASH),
        ("", EN_DASH),
        (True, "yes"),
        ("796214.72", "$796k"),  # 796,214.72 -> 3 figures 796 thousand
        (Decimal("56925851"), "$56.9M"),
        (2.4567, "$2.46"),
        ("not priced", "not priced"),
    ],
)
def test_money(value, expected):
    assert money(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, EN_DASH),
        ("", ""),  # text that is no number is printed as it is (empty stays empty)
        (False, "no"),
        ("1234567.891", "1,234,568"),
        ("12.345", "12.3"),
        (Decimal("0.4123"), "0.412"),
        ("n/a", "n/a"),
        (Decimal("NaN"), "NaN"),
    ],
)
def test_number(value, expected):
    assert number(value) == expected
