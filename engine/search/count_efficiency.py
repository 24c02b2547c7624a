"""Whole-run efficiency by GPU count, remembered per set of whole-run inputs and shared by every search with them.

Why: the deadline search divides each candidate's steady-state days by the whole-run efficiency at its GPU count
(`whole_run.run_efficiency`: failures and restarts, stragglers, production and evaluation losses). Without a
batch ramp that efficiency depends on the GPU count and the `WholeRunInputs` alone, and those inputs are equal for
every system with the same GPUs per system and node MTBF: in an auto plan the twelve 8-GPU systems (DGX, HGX and
the AWS instances) share one set, the two NVL72 racks another. Each search used to work out the efficiency of
the few dozen counts it visits on its own (about 5 % of an auto 70B plan, most of it numpy's cost per call on a
handful of values); a table per inputs, kept across searches and plans, works each count out once.

Every value is `run_efficiency` of that count, element for element the same expression whichever search first
asked for it, so sharing the table changes no answer. Bounded like the layout costs (`layout_cache.LruCache`): an
entry is a few hundred floats.
"""

from __future__ import annotations

import numpy as np

from engine.performance.whole_run import WholeRunInputs, run_efficiency
from engine.search.layout_cache import LruCache

__all__ = ["CEILINGS", "COUNT_EFFICIENCIES", "CeilingTable", "CountEfficiency", "ceiling_table", "count_efficiency"]


class CountEfficiency:
    """`run_efficiency(count, inputs)` of the counts asked so far, as sorted arrays (extended on a miss).

    The (counts, values) pair is replaced as a whole, never changed in place, so a reader in another thread sees
    either the old table or the new one; two threads extending it at once may each drop the other's new counts,
    which are then worked out again (the same values)."""

    def __init__(self, inputs: WholeRunInputs) -> None:
        self.inputs = inputs
        self._table: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))

    def __call__(self, gpus: np.ndarray) -> np.ndarray:
        """The efficiency at each of `gpus` (float array of GPU counts)."""
        counts, values = self._table
        if len(gpus) == 0:
            return np.zeros(0)
        if len(counts):
            pos = np.minimum(np.searchsorted(counts, gpus), len(counts) - 1)
            if np.array_equal(counts.take(pos), gpus):
                return values.take(pos)
            known = counts.take(pos) == gpus
            new = np.unique(gpus[~known])
        else:
            new = np.unique(gpus)
        counts = np.concatenate([counts, new])
        values = np.concatenate([values, np.asarray(run_efficiency(new, self.inputs), dtype=float)])
        order = np.argsort(counts)
        counts, values = counts[order], values[order]
        self._table = (counts, values)
        return values[np.searchsorted(counts, gpus)]


class CeilingTable:
    """`WholeRunInputs.efficiency_ceiling` by whole systems, listed once per inputs and looked up.

    Why: the deadline search's bound asks for the ceiling at one GPU count per layout (a few thousand per search,
    `deadline._lowest_index`; `deadline_miss.py` too), about twenty numpy operations over them each time. The
    ceiling depends on the GPU count only through its systems (`WholeRunInputs.systems`), so its values at 0..S
    systems are worked out once (the same expression on the same systems: the same values) and read by systems.
    The list grows (doubling) when a larger count is asked for and is replaced whole, never changed in place."""

    def __init__(self, inputs: WholeRunInputs) -> None:
        self.inputs = inputs
        self._values = np.zeros(0)

    def __call__(self, gpus: np.ndarray) -> np.ndarray:
        """The ceiling at each of `gpus` (GPU counts)."""
        systems = self.inputs.systems(gpus).astype(np.int64)
        values = self._values
        top = int(systems.max(initial=0))
        if top >= len(values):
            size = max(top + 1, 2 * len(values), 64)
            values = self.inputs.efficiency_ceiling(np.arange(size, dtype=float) * self.inputs.gpus_per_system)
            self._values = values
        return values.take(systems)


# One table per distinct `WholeRunInputs` (a frozen dataclass, hashed by value).
COUNT_EFFICIENCIES: LruCache[CountEfficiency] = LruCache(32)
CEILINGS: LruCache[CeilingTable] = LruCache(32)


def ceiling_table(inputs: WholeRunInputs) -> CeilingTable:
    """The shared ceiling table of these inputs (`CEILINGS`)."""
    return CEILINGS.get_or_build(inputs, lambda: CeilingTable(inputs))


def count_efficiency(inputs: WholeRunInputs) -> CountEfficiency:
    """The shared table of these inputs (`COUNT_EFFICIENCIES`)."""
    return COUNT_EFFICIENCIES.get_or_build(inputs, lambda: CountEfficiency(inputs))
