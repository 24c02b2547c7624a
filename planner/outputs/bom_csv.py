"""The BOM as CSV for spreadsheets and ERP imports.

Stable, versioned column order; dot decimals with no thousands separators; text cells that a
spreadsheet would run as a formula are escaped (OWASP ASVS 1.2.10).

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
from decimal import Decimal, InvalidOperation
from typing import Any

BOM_CSV_VERSION = "1"
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
    "lead_time_days",
    "min_order_qty",
    "source",
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
    "source",
    "notes",
}
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: str) -> str:
    """Prefix a quote to text a spreadsheet would otherwise evaluate as a formula."""
    return "'" + value if value.startswith(FORMULA_TRIGGERS) else value


def _decimal(value: Any) -> Decimal | None:
    if value in (None, ""):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def bom_rows(lines: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Contract BOM lines -> CSV rows (strings), numbered from 1 in the plan's order."""
    rows = []
    for number, line in enumerate(lines, start=1):
        quantity = _decimal(line.get("quantity")) or Decimal(0)
        unit_price = _decimal(line.get("unit_price_usd"))
        extended = _decimal(line.get("extended_price_usd"))
        row = {
            "line_no": str(number),
            "part_number": str(line.get("part_number", "")),
            "manufacturer": str(line.get("manufacturer", "")),
            "manufacturer_part_number": str(line.get("manufacturer_part_number", line.get("part_number", ""))),
            "description": str(line.get("description", "")),
            "vendor": str(line.get("vendor", "")),
            "category": str(line.get("category", "")),
            "quantity": f"{quantity:f}".rstrip("0").rstrip(".") if "." in f"{quantity:f}" else f"{quantity:f}",
            "uom": str(line.get("uom", "EA")),
            "unit_price": f"{unit_price:f}" if unit_price is not None else "",
            "currency": "USD" if unit_price is not None or extended is not None else "",
            "extended_price": f"{extended:f}" if extended is not None else "",
            "lead_time_days": str(line.get("lead_time_days", "") or ""),
            "min_order_qty": str(line.get("min_order_qty", "") or ""),
            "source": str(line.get("source", "")),
            "notes": str(line.get("notes", "")),
        }
        rows.append({key: escape_cell(value) if key in TEXT_COLUMNS else value for key, value in row.items()})
    return rows


def bom_csv(lines: Iterable[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writeheader()
    writer.writerows(bom_rows(lines))
    return buffer.getvalue()
