""" "Systems considered" as a buyer scans it: the few columns that decide, the rest one click away.

Why: the page used to print every scalar a candidate carries (about fifteen columns: ids, flags, three powers,
energy, steady-state days), so at 1440 px the columns that decide (how many GPUs, how long, what it costs, does
it fit) sat beside ones only an engineer checking the search reads, and on a phone the table was a sideways
scroll. Here each workload names its deciding columns, in the order the options table uses (what, size, time,
cost, verdict), and marks the others `more`: the page hides them until the reader asks (a checkbox, CSS only).
Rows read chosen first, then the feasible systems by the figure the choice ranked them by, then the refused
ones with their reason on a line of its own. Every value is read from the stored result (nothing is re-derived)
and every field stays in the plan's JSON and the API; this is a view of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .formatting import DASH, catalog_name, money, number, power

if TYPE_CHECKING:
    from planner.adapter import Candidate, PlanResult

__all__ = [
    "CandidateCell",
    "CandidateColumn",
    "CandidateRow",
    "CandidatesTable",
    "candidates_table",
    "plan_candidates_table",
]


@dataclass(frozen=True)
class CandidateColumn:
    """One column: its heading, its unit (shown beside the heading), right-aligned if a number, hidden until
    asked for if `more`, and a `note` the heading carries as a tooltip."""

    label: str
    unit: str = ""
    numeric: bool = True
    more: bool = False
    note: str = ""

    @property
    def css(self) -> str:
        """The class its heading and cells carry: `n` for a right-aligned number, `more` for a hidden column."""
        return " ".join(name for name, on in (("n", self.numeric), ("more", self.more)) if on)


@dataclass(frozen=True)
class CandidateCell:
    text: str
    css: str


@dataclass(frozen=True)
class CandidateRow:
    """One system: its cells in column order, `status` (chosen, fits, refused) and, when refused, why."""

    cells: tuple[CandidateCell, ...]
    status: str
    reason: str | None = None

    @property
    def shown(self) -> tuple[CandidateCell, ...]:
        """The cells of the deciding columns."""
        return tuple(cell for cell in self.cells if "more" not in cell.css.split())


@dataclass(frozen=True)
class CandidatesTable:
    columns: tuple[CandidateColumn, ...]
    rows: tuple[CandidateRow, ...]
    note: str

    @property
    def has_more(self) -> bool:
        """Whether the hidden columns hold anything: a table of refused systems alone has only dashes there."""
        return any(row.status != "refused" for row in self.rows)

    @property
    def shown(self) -> tuple[CandidateColumn, ...]:
        """The deciding columns, the ones shown before the reader asks for more (and all the PDF prints)."""
        return tuple(c for c in self.columns if not c.more)

    @property
    def more_labels(self) -> str:
        """The hidden columns in words, for the toggle's label ("GPU, MFU, IT power")."""
        return ", ".join(c.label for c in self.columns if c.more)


# (column, how to read its cell from a candidate)
Cell = Callable[["Candidate"], str]


def _fits(c: Candidate) -> str:
    return "chosen" if c.chosen else ("yes" if c.feasible else "no")


def _day_range(c: Candidate) -> str:
    """'67.3 - 106.0': a training candidate's p10 and p90 days, as the headline figure prints its range."""
    if c.days_p10 is None or c.days_p90 is None:
        return DASH
    return f"{number(c.days_p10)} - {number(c.days_p90)}"


def _pct(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.1f} %"


def _training_columns(cost: CandidateColumn) -> list[tuple[CandidateColumn, Cell]]:
    return [
        (CandidateColumn("System", numeric=False), lambda c: str(catalog_name(c.system))),
        (CandidateColumn("GPUs"), lambda c: number(c.gpus)),
        (
            CandidateColumn("Days to train", note="expected whole run (p50), failures and restarts included"),
            lambda c: number(c.days),
        ),
        (cost, lambda c: money(c.selection_usd)),
        (CandidateColumn("Fits", numeric=False), _fits),
        (
            CandidateColumn("p10 - p90", "days", more=True, note="the expected whole run's range on this system"),
            _day_range,
        ),
        (CandidateColumn("GPU", numeric=False, more=True), lambda c: str(catalog_name(c.gpu))),
        (CandidateColumn("Systems", more=True), lambda c: number(c.systems)),
        (
            CandidateColumn("Steady state", "days", more=True, note="a tuned stack between failures"),
            lambda c: number(c.days_ideal),
        ),
        (CandidateColumn("MFU", more=True), lambda c: _pct(c.mfu)),  # each cell says "%"
        (
            CandidateColumn("IT power", more=True, note="the GPU systems only; the chosen plan adds the network"),
            lambda c: power(c.it_kw),
        ),
        (CandidateColumn("Facility power", more=True, note="IT power x PUE"), lambda c: power(c.facility_kw)),
        (
            CandidateColumn("IT energy", "MWh", more=True, note="over the expected run"),
            lambda c: number(c.it_energy_mwh),
        ),
    ]


def _serving_columns(cost: CandidateColumn) -> list[tuple[CandidateColumn, Cell]]:
    return [
        (CandidateColumn("System", numeric=False), lambda c: str(catalog_name(c.system))),
        (CandidateColumn("GPUs"), lambda c: number(c.gpus)),
        (
            CandidateColumn("Replicas", note="model copies x GPUs each"),
            lambda c: DASH if c.replicas is None else f"{number(c.replicas)} x {number(c.gpus_per_replica)}",
        ),
        (cost, lambda c: money(c.selection_usd)),
        (CandidateColumn("Fits", numeric=False), _fits),
        (CandidateColumn("GPU", numeric=False, more=True), lambda c: str(catalog_name(c.gpu))),
        (CandidateColumn("Throughput per GPU", "tokens/s", more=True), lambda c: number(c.tokens_per_s_per_gpu)),
        (CandidateColumn("Systems", more=True), lambda c: number(c.systems)),
        (
            CandidateColumn("Binding limit", numeric=False, more=True, note="what caps a replica's batch"),
            lambda c: c.limit or DASH,
        ),
        (CandidateColumn("IT power", more=True), lambda c: power(c.it_kw)),
        (CandidateColumn("Facility power", more=True, note="IT power x PUE"), lambda c: power(c.facility_kw)),
    ]


def _cost_column(serving: bool, selection_inputs: Mapping[str, Any]) -> CandidateColumn:
    """The ranking estimate's column (engine/search/selection.py); the table's note says what it adds up."""
    return CandidateColumn("Build + energy", "USD", note=_cost_words(serving, selection_inputs).capitalize())


def _cost_words(serving: bool, selection_inputs: Mapping[str, Any]) -> str:
    if serving:
        years = selection_inputs.get("years")
        span = f"{number(years)} years" if years else "the costing horizon"
        return f"the systems at their catalog price + their electricity over {span}"
    return "the systems at their catalog price + their electricity for the expected run"


def _order(candidates: list[Candidate], serving: bool) -> list[Candidate]:
    """Chosen first, then the feasible by the estimated cost that ranked them (by energy when unpriced, as the
    choice does), then the refused in catalog order."""

    def rank(c: Candidate) -> tuple:
        if c.chosen:
            return (0, 0.0)
        if not c.feasible:
            return (2, 0.0)
        energy = c.it_kw if serving else c.it_energy_mwh
        figure = c.selection_usd if c.selection_usd is not None else energy
        return (1, float("inf") if figure is None else figure)

    return sorted(candidates, key=rank)  # stable: ties and the refused keep catalog order


def candidates_table(
    candidates: tuple[Candidate, ...] | list[Candidate],
    *,
    serving: bool,
    basis: str | None = None,
    selection_inputs: Mapping[str, Any] | None = None,
) -> CandidatesTable | None:
    """The table for this plan's candidates, or None when the plan considered none. `basis` is the selection's
    (cost, energy, fixed); `selection_inputs` its explain inputs (a serving plan's horizon in years)."""
    if not candidates:
        return None
    cost = _cost_column(serving, selection_inputs or {})
    spec = _serving_columns(cost) if serving else _training_columns(cost)
    rows = tuple(
        CandidateRow(
            cells=tuple(CandidateCell(read(c), column.css) for column, read in spec),
            status="chosen" if c.chosen else ("fits" if c.feasible else "refused"),
            reason=None if c.feasible else (c.reason or "no layout fits this system"),
        )
        for c in _order(list(candidates), serving)
    )
    note = _note(basis, serving, len(rows))
    if any(c.selection_usd is not None for c in candidates):
        note += f" Build + energy: {_cost_words(serving, selection_inputs or {})}, the estimate that ranks them."
    return CandidatesTable(columns=tuple(column for column, _read in spec), rows=rows, note=note)


def plan_candidates_table(result: PlanResult) -> CandidatesTable | None:
    """`candidates_table` for a stored plan: its workload, its selection basis and the selection's explain inputs."""
    entry = result.explain.get("selection.system")
    return candidates_table(
        result.candidates,
        serving=result.workload == "inference",
        basis=result.selection.basis if result.selection else None,
        selection_inputs=entry.inputs if entry and isinstance(entry.inputs, Mapping) else None,
    )


def _note(basis: str | None, serving: bool, count: int) -> str:
    """How the chosen row was chosen, in one line (engine/choice.py's rule, without its formula)."""
    if basis == "fixed" or count == 1:
        return "The request fixed the system; this is how it sized for the work."
    figure = "build + energy cost" if basis == "cost" else ("IT power" if serving else "IT energy for the run")
    return f"Each catalog system sized for the same work; the feasible one with the lowest {figure} is chosen."
