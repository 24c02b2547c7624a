"""Money: the one rounding rule of costing, and how amounts and rates leave it as JSON.

Rule: a money amount is quantized to the cent, ROUND_HALF_UP, once, where the figure is produced (`cents`); every
figure built from others (capex = hardware + install, opex = its parts, TCO = capex + years x opex, a BOM total =
its lines) adds the already-rounded figures, so what a page, CSV or PDF shows adds up to the cent. Hourly rates are
not cents: they keep the snapshot's 6 decimals (`rate`). The typed costs hold these Decimals; JSON has no decimal
type and a float would lose cents on large sums, so the codec writes them as their strings ("1234.50"). `usd` is
that string, for explain entries and readers that want text.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

__all__ = [
    "CENT",
    "HOURS_PER_MONTH",
    "HOURS_PER_YEAR",
    "RATE_QUANTUM",
    "D",
    "cents",
    "r",
    "rate",
    "usd",
    "usd_text",
]

HOURS_PER_YEAR = 8760
HOURS_PER_MONTH = 730  # the Spot Advisor's "month" (8760 / 12)
CENT = Decimal("0.01")
RATE_QUANTUM = Decimal("0.000001")  # CloudOffer.usd_per_hour precision


def D(value: float | int | str | Decimal) -> Decimal:
    """A number as Decimal without binary noise (floats go through their shortest repr)."""
    if isinstance(value, Decimal):
        return value
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def cents(value: Decimal) -> Decimal:
    """The rounding rule: to the cent, half up. Idempotent, so formatting a produced figure never moves it."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def usd(value: Decimal | None) -> str | None:
    """Money out: a string with exactly 2 decimals (half-up), or None."""
    return None if value is None else str(cents(value))


def rate(value: Decimal | None) -> Decimal | None:
    """An hourly rate, rounded once: 6 decimals at most, trailing zeros dropped down to 2 ("55.04", "21.957642"
    as stored; `str` of the Decimal is exactly that string)."""
    if value is None:
        return None
    q = value.quantize(RATE_QUANTUM, rounding=ROUND_HALF_UP).normalize()
    return q.quantize(CENT) if -q.as_tuple().exponent < 2 else q  # type: ignore[operator]


def r(x: float, digits: int = 4) -> float:
    """A non-money float for JSON (hours, fractions, tonnes), rounded for reading."""
    return float(round(x, digits))


# (threshold, divisor, suffix) from the largest: amounts read as $56.9M, $796k, $1.23B.
_SCALES = ((Decimal(10) ** 12, "T"), (Decimal(10) ** 9, "B"), (Decimal(10) ** 6, "M"), (Decimal(10) ** 3, "k"))


def usd_text(value: Decimal | float | int | str | None, digits: int = 3) -> str:
    """Money for a person: `digits` significant figures with a k/M/B/T suffix ($56,925,851 -> "$56.9M", 796_214.72
    -> "$796k", 2.4567 -> "$2.46"); "-" for no value. Why one function: the verdict sentence, the page, the PDF and
    the API say the same amount the same way, and a reader compares options by their first three figures (costs
    rest on price lists accurate to a few percent, so more digits claim a precision the inputs do not have).
    Amounts under $1,000 keep their cents when they have fewer than `digits` whole figures ($12.5, $0.412)."""
    if value is None:
        return "-"
    amount = D(value) if not isinstance(value, str) else Decimal(value)
    if not amount.is_finite():
        return str(amount)
    sign, magnitude = ("-" if amount < 0 else ""), abs(amount)
    suffix = ""
    rounded = _significant(magnitude, digits)
    for threshold, name in _SCALES:
        if rounded >= threshold:
            rounded, suffix = _significant(magnitude / threshold, digits), name
            break
    if rounded == 0:
        return "$0"
    whole = rounded.adjusted() + 1  # figures before the decimal point
    places = max(digits - whole, 0)
    text = f"{rounded:,.{places}f}"
    return f"{sign}${text}{suffix}"


def _significant(value: Decimal, digits: int) -> Decimal:
    """`value` rounded half-up to `digits` significant figures."""
    if value == 0:
        return Decimal(0)
    quantum = Decimal(1).scaleb(value.adjusted() - digits + 1)
    return value.quantize(quantum, rounding=ROUND_HALF_UP)
