"""The plan as a workbook procurement and finance can use: sheets BOM, Cost summary, Assumptions and Options.

Two halves, so the content is testable without a spreadsheet library: `workbook_sheets` lays every sheet out as
rows of cells (text escaped against formula injection, money as the plan's stored Decimals, never recomputed, so
the BOM sheet's total is the plan's capex to the cent), and `bom_xlsx` writes them with openpyxl. openpyxl is
imported only there: where it is not installed, `XLSX_AVAILABLE` is False, the page hides the link and the
endpoints answer 501 with a sentence saying so.
"""

from __future__ import annotations

import importlib.util
import io
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .bom_csv import COLUMNS, bom_rows, escape_cell

if TYPE_CHECKING:
    from .plan_view import PlanView

__all__ = ["XLSX_AVAILABLE", "XLSX_CONTENT_TYPE", "Sheet", "XlsxUnavailable", "bom_xlsx", "workbook_sheets"]

XLSX_AVAILABLE = importlib.util.find_spec("openpyxl") is not None
XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
NUMERIC_COLUMNS = {"line_no", "quantity", "unit_price", "extended_price", "lead_time_days", "min_order_qty"}
Cell = str | int | float | Decimal | None


class XlsxUnavailable(RuntimeError):
    """The XLSX export needs openpyxl, which is not installed here."""


@dataclass(frozen=True)
class Sheet:
    name: str
    rows: tuple[tuple[Cell, ...], ...]


def _text(value: Any) -> Cell:
    """A cell: numbers stay numbers; every text is escaped (a leading = + - @ would run as a formula)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float | Decimal):
        return value
    return escape_cell(str(value))


def _number(text: str) -> Cell:
    return None if text == "" else Decimal(text)


def _bom(view: PlanView) -> Sheet:
    rows: list[tuple[Cell, ...]] = [tuple(COLUMNS)]
    for row in bom_rows(view.bom_lines or (), view.lead_times):
        rows.append(tuple(_number(row[c]) if c in NUMERIC_COLUMNS else row[c] for c in COLUMNS))
    total = view.bom.total_usd
    rows.append(
        tuple("Total (capex)" if c == "description" else total if c == "extended_price" else None for c in COLUMNS)
    )
    return Sheet("BOM", tuple(rows))


def _summary(view: PlanView) -> Sheet:
    costs = view.costs
    on = costs.onprem if costs else None
    fin = on.finance if on else None
    verdict = costs.verdict if costs else None
    items: list[tuple[str, Any, str]] = []
    if on is not None:
        items += [
            ("Hardware", on.hardware_usd, "USD"),
            ("Capex (BOM total: hardware and the lines beyond it)", on.capex_usd, "USD"),
            ("Running costs, first year", on.opex_usd_per_year, "USD per year"),
            (f"TCO over {on.years} years (capex + running costs, nominal)", on.tco_usd, "USD"),
            ("On-prem cost per GPU-hour (capital charge + running costs)", on.usd_per_gpu_hour, "USD per GPU-hour"),
            ("Job cost on the owned cluster (GPU-hours x cost per GPU-hour)", on.job_usd_shared, "USD"),
            ("Job cost if bought for this job alone (capex + running - resale)", on.job_usd, "USD"),
        ]
    if fin is not None:
        items += [
            ("Cost of capital", fin.cost_of_capital, "fraction per year"),
            ("Useful life", fin.useful_life_years, "years"),
            ("Residual value at end of life", fin.residual_value_usd, "USD"),
            ("Capital charge (annuity)", fin.capital_charge_usd_per_year, "USD per year"),
            ("Levelised running costs", fin.levelized_opex_usd_per_year, "USD per year"),
            (f"NPV of owning over {fin.horizon_years} years", fin.npv_usd, "USD"),
        ]
        if fin.lease_npv_usd is not None:
            items.append((f"NPV of leasing over {fin.horizon_years} years", fin.lease_npv_usd, "USD"))
    if verdict is not None:
        items += [("Verdict", verdict.sentence, ""), ("Verdict job cost", verdict.job_usd, "USD")]
    return Sheet("Cost summary", (("Figure", "Value", "Unit"), *((_text(a), _text(b), _text(c)) for a, b, c in items)))


def _assumptions(view: PlanView) -> Sheet:
    rows: list[tuple[Cell, ...]] = [("Name", "Value", "Default", "Unit", "Basis", "Source", "As of")]
    params = view.costs.parameters if view.costs and view.costs.parameters else {}
    for name, p in params.items():
        rows.append(tuple(_text(x) for x in (name, p.value, p.default, p.unit, p.confidence, p.source, p.as_of)))
    for name, a in view.assumptions.items():
        rows.append(tuple(_text(x) for x in (name, a.value, a.default, a.unit, "assumption", a.source, None)))
    return Sheet("Assumptions", tuple(rows))


def _days_heading(view: PlanView) -> str:
    """The options' days as the comparison says they are (`days_in_words`, the same words as the page and the PDF)."""
    comparison = view.costs.comparison if view.costs else None
    return f"Days: {comparison.days_in_words}" if comparison is not None else "Days"


def _options(view: PlanView) -> Sheet:
    rows: list[tuple[Cell, ...]] = [
        (
            "Option",
            "Build or rent",
            "Job USD",
            "Starts",
            _days_heading(view),
            "Obtainable",
            "Why not",
        )
    ]
    comparison = view.costs.comparison if view.costs else None
    for o in comparison.options if comparison else ():
        start = o.start_date or o.start_days
        cells = (o.label, o.choice, o.job_usd, start, o.finish_days_p90, o.obtainable, o.excluded_reason)
        rows.append(tuple(_text(x) for x in cells))
    if comparison is not None and comparison.npv:
        rows += [
            (),
            ("NPV over the horizon", "", "NPV USD"),
            *((_text(n.label), None, n.npv_usd) for n in comparison.npv),
        ]
    return Sheet("Options", tuple(rows))


def workbook_sheets(view: PlanView) -> tuple[Sheet, ...]:
    """The four sheets as rows of cells, in order."""
    return (_bom(view), _summary(view), _assumptions(view), _options(view))


def bom_xlsx(view: PlanView) -> bytes:
    """The workbook as XLSX bytes (raises XlsxUnavailable without openpyxl)."""
    if not XLSX_AVAILABLE:
        raise XlsxUnavailable("The XLSX export needs the openpyxl package, which is not installed on this server.")
    from openpyxl import Workbook  # the optional dependency, imported where it is used

    book = Workbook()
    book.remove(book.active)
    for sheet in workbook_sheets(view):
        ws = book.create_sheet(sheet.name)
        for row in sheet.rows:
            ws.append(list(row))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()
