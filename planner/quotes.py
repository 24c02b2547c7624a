"""Reading a vendor quote a user uploads (CSV, or XLSX where openpyxl is installed) into checked rows.

Why strict: a quote overrides the catalog's prices in every plan its owner runs, so a mistyped price or an unknown
part must stop the upload with a message naming the row and the column, never slip into a plan. Every problem of
the file is reported at once. Columns (header row, any order, case-insensitive):

- `part_number` (or `catalog_id`): a BOM part number or a catalog id, as `pricing.component_prices` takes them;
- `unit_price_usd` (or `unit_price`): the quoted price of one unit, a positive number (at most 2 decimals kept:
  costing rounds to the cent);
- `currency`: optional; only USD is accepted (the planner prices in USD and converts nothing);
- `description`: optional.

Other columns (quantity, extended price, lead time) are ignored: the plan sizes the quantities itself.
"""

from __future__ import annotations

import csv
import importlib.util
import io
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

__all__ = ["MAX_QUOTE_BYTES", "MAX_QUOTE_ROWS", "QuoteInvalid", "QuoteRow", "parse_quote"]

MAX_QUOTE_BYTES = 2_000_000
MAX_QUOTE_ROWS = 5_000
PART_COLUMNS = ("part_number", "catalog_id")
PRICE_COLUMNS = ("unit_price_usd", "unit_price")
MAX_PRICE = Decimal("1000000000")


class QuoteInvalid(ValueError):
    """Every problem of an uploaded quote, each naming its row and column."""

    def __init__(self, errors: Sequence[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = list(errors)


@dataclass(frozen=True)
class QuoteRow:
    row: int  # the file's row number, header = 1
    part: str
    unit_price_usd: Decimal
    description: str


def _cells_csv(content: bytes) -> list[list[str]]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise QuoteInvalid(["the file is not UTF-8 text: save the quote as CSV (UTF-8)"]) from exc
    if "\x00" in text:
        raise QuoteInvalid(["the file contains NUL characters: it is not a CSV text file"])
    try:
        return [list(r) for r in csv.reader(io.StringIO(text))]
    except csv.Error as exc:  # e.g. a field past the csv module's size limit: not a quote
        raise QuoteInvalid([f"the file is not readable CSV ({exc})"]) from exc


def _cells_xlsx(content: bytes) -> list[list[str]]:
    if importlib.util.find_spec("openpyxl") is None:
        raise QuoteInvalid(["XLSX quotes need the openpyxl package, which this server lacks: upload the quote as CSV"])
    from openpyxl import load_workbook  # the optional dependency, imported where it is used

    try:
        sheet = load_workbook(io.BytesIO(content), read_only=True, data_only=True).worksheets[0]
    except Exception as exc:  # a corrupt or non-XLSX file: any of zipfile's, XML's or openpyxl's errors
        raise QuoteInvalid(["the file is not a readable XLSX workbook"]) from exc
    return [["" if v is None else str(v) for v in row] for row in sheet.iter_rows(values_only=True)]


def _column(header: list[str], names: Iterable[str]) -> int | None:
    return next((header.index(n) for n in names if n in header), None)


def _price(text: str, where: str, errors: list[str]) -> Decimal | None:
    try:
        value = Decimal(text.replace(",", "").strip())
    except InvalidOperation:
        errors.append(f"{where}: {text[:40]!r} is not a number")
        return None
    if not value.is_finite() or value <= 0:
        errors.append(f"{where}: must be a positive price in USD")
        return None
    if value > MAX_PRICE:
        errors.append(f"{where}: must be at most {MAX_PRICE:,} USD")
        return None
    return value


def _rows(cells: list[list[str]], known: Callable[[str], bool]) -> tuple[list[QuoteRow], list[str]]:
    header = [h.strip().lower() for h in cells[0]]
    part_col, price_col = _column(header, PART_COLUMNS), _column(header, PRICE_COLUMNS)
    currency_col, desc_col = _column(header, ("currency",)), _column(header, ("description",))
    errors = []
    if part_col is None:
        errors.append("row 1: no part_number (or catalog_id) column")
    if price_col is None:
        errors.append("row 1: no unit_price_usd column")
    if errors:
        return [], errors
    assert part_col is not None and price_col is not None
    rows, seen = [], {}
    for number, raw in enumerate(cells[1:], start=2):
        cell = raw + [""] * (len(header) - len(raw))
        if not any(c.strip() for c in cell):
            continue  # blank line
        part = cell[part_col].strip()
        where = f"row {number}, column {header[part_col]}"
        if not part:
            errors.append(f"{where}: empty")
        elif not known(part):
            errors.append(f"{where}: {part[:60]!r} is neither a BOM part number nor a catalog id")
        elif part in seen:
            errors.append(f"{where}: {part!r} is quoted twice (rows {seen[part]} and {number})")
        price = _price(cell[price_col], f"row {number}, column {header[price_col]}", errors)
        if currency_col is not None and cell[currency_col].strip().upper() not in ("", "USD"):
            errors.append(f"row {number}, column currency: only USD is accepted, not {cell[currency_col][:10]!r}")
        description = cell[desc_col].strip()[:255] if desc_col is not None else ""
        if part and price is not None:
            seen.setdefault(part, number)
            rows.append(QuoteRow(number, part, price, description))
    if not rows and not errors:
        errors.append("the quote has no priced rows")
    return rows, errors


def parse_quote(content: bytes, filename: str, known: Callable[[str], bool]) -> list[QuoteRow]:
    """The quote's rows, or QuoteInvalid listing every problem; `known` says whether a part key exists."""
    if len(content) > MAX_QUOTE_BYTES:
        raise QuoteInvalid([f"the file is larger than {MAX_QUOTE_BYTES:,} bytes"])
    xlsx = filename.lower().endswith(".xlsx")
    cells = _cells_xlsx(content) if xlsx else _cells_csv(content)
    if not cells:
        raise QuoteInvalid(["the file is empty"])
    if len(cells) > MAX_QUOTE_ROWS + 1:
        raise QuoteInvalid([f"the quote has more than {MAX_QUOTE_ROWS:,} rows"])
    rows, errors = _rows(cells, known)
    if errors:
        raise QuoteInvalid(errors)
    return rows
