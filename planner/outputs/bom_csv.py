"""The BOM as CSV for spreadsheets and ERP imports.

Stable, versioned column order (version 2 adds the price basis, the price's source and date, the lead time and
the catalog's spec source); dot decimals with no thousands separators; text cells that a spreadsheet would run as
a formula are escaped (OWASP ASVS 1.2.10).

Prices are the plan's stored figures, never recomputed here: `unit_price_usd` and
`extended_price_usd` were set by costing's one extended-price rule (`engine.costing.onprem`:
unit price rounded to the cent, then x quantity, rounded to the cent), so the CSV, the page and
the BOM total agree to the cent, and a plan re-opened after a price change exports what it showed.
A line without a stored extended price exports an empty cell.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the lines come from the typed plan (planner.outputs.plan_view)
    from planner.adapter import BomLine

BOM_CSV_VERSION = "2"
COLUMNS = [
    "line_no",
    "part_number",
    "manufacturer",
    "manufacturer_part_number",
    "description",
    "vendor",
    "category",
    "quantity",
    "uom",
    "unit_price",
    "currency",
    "extended_price",
    "price_basis",
    "source",
    "as_of",
    "lead_time_days",
    "min_order_qty",
    "spec_source",
    "notes",
]
TEXT_COLUMNS = {
    "part_number",
    "manufacturer",
    "manufacturer_part_number",
    "description",
    "vendor",
    "category",
    "uom",
    "currency",
    "price_basis",
    "source",
    "as_of",
    "spec_source",
    "notes",
}
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: str) -> str:
    """Prefix a quote to text a spreadsheet would otherwise evaluate as a formula."""
    return "'" + value if value.startswith(FORMULA_TRIGGERS) else value


def _plain(value: Decimal | None) -> str:
    """A stored price as plain digits with its cents ("1156000.40"), or an empty cell when unpriced."""
    return "" if value is None else f"{value:f}"


def _days(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def bom_rows(lines: Iterable[BomLine], lead_times: Mapping[str, float] | None = None) -> list[dict[str, str]]:
    """The plan's typed BOM lines -> CSV rows (strings), numbered from 1 in the plan's order.

    `price_basis` says what the price rests on (list_price, quote, public_estimate, assumption, user_override);
    `source` and `as_of` are the price's primary source and its date; `spec_source` the catalog's source for the
    part itself. `lead_time_days` is the plan's named lead time for the line's part class (`lead_times`, by BOM
    category; empty where the plan has none). The plan does not carry a vendor, minimum order or notes for a part
    yet; their columns stay (empty) so importers see a stable layout. The manufacturer's part number is the
    catalog's part number.
    """
    lead_times = lead_times or {}
    rows = []
    for number, line in enumerate(lines, start=1):
        part_number = line.part_number or ""
        priced = line.unit_price_usd is not None or line.extended_price_usd is not None
        row = {
            "line_no": str(number),
            "part_number": part_number,
            "manufacturer": line.manufacturer or "",
            "manufacturer_part_number": part_number if line.manufacturer else "",
            "description": line.description or "",
            "vendor": "",
            "category": line.category,
            "quantity": str(line.quantity),
            "uom": "EA",
            "unit_price": _plain(line.unit_price_usd),
            "currency": "USD" if priced else "",
            "extended_price": _plain(line.extended_price_usd),
            "price_basis": (line.price_basis or line.price_confidence or "") if priced else "",
            "source": line.price_source or "",
            "as_of": line.price_as_of or "",
            "lead_time_days": _days(lead_times.get(line.category)),
            "min_order_qty": "",
            "spec_source": line.source or "",
            "notes": "",
        }
        rows.append({key: escape_cell(value) if key in TEXT_COLUMNS else value for key, value in row.items()})
    return rows


def bom_csv(lines: Iterable[BomLine], lead_times: Mapping[str, float] | None = None) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writeheader()
    writer.writerows(bom_rows(lines, lead_times))
    return buffer.getvalue()
