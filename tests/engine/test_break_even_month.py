"""The break-even month of the cumulative cost lines (engine.costing.series), against lines worked by hand."""

from __future__ import annotations

from decimal import Decimal

from engine.costing.series import break_even_month


def test_break_even_month_of_a_straight_pair_of_lines():
    months = tuple(range(13))
    owned = tuple(Decimal(100 + 10 * m) for m in months)  # 100 up front, then 10 a month
    # Renting at 30 a month: 100 + 10 m = 30 m at m = 5 exactly.
    assert break_even_month(months, owned, tuple(Decimal(30 * m) for m in months)) == 5.0
    # At 33 a month: m = 100 / 23 = 4.3478 -> 4.35 (between months 4 and 5).
    assert break_even_month(months, owned, tuple(Decimal(33 * m) for m in months)) == 4.35
    # At 15 a month owning costs more for all 12 months: 100 / 5 = month 20, beyond the horizon.
    assert break_even_month(months, owned, tuple(Decimal(15 * m) for m in months)) is None
