"""Writes of vendor quotes (HackSoft services): store a checked quote for its owner and switch it on or off.
Split from `planner/services.py` (plans and runs).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from .adapter import price_key_known
from .models import VendorQuote, VendorQuoteLine
from .quotes import parse_quote

__all__ = ["CENT", "quote_set_active", "quote_upload"]

CENT = Decimal("0.01")  # quoted prices are kept in cents, half up (the costing's money rule)


def quote_upload(
    *, owner: AbstractBaseUser, vendor: str, reference: str, quoted_on, filename: str, content: bytes
) -> VendorQuote:
    """Store a checked quote for its owner (raises planner.quotes.QuoteInvalid naming every bad row and column).

    Its prices apply to the owner's plans from their next run on; plans already computed keep what they showed.
    """
    rows = parse_quote(content, filename, price_key_known)
    with transaction.atomic():
        quote = VendorQuote.objects.create(
            owner=owner, vendor=vendor, reference=reference, quoted_on=quoted_on, filename=filename[:255]
        )
        VendorQuoteLine.objects.bulk_create(
            VendorQuoteLine(
                quote=quote,
                row=r.row,
                part=r.part,
                description=r.description,
                unit_price_usd=r.unit_price_usd.quantize(CENT, rounding=ROUND_HALF_UP),
            )
            for r in rows
        )
    return quote


def quote_set_active(*, quote: VendorQuote, active: bool) -> None:
    VendorQuote.objects.filter(pk=quote.pk).update(active=active)
