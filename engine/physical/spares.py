"""Hot spares: the spare GPU systems a build carries when its training job uses elastic recovery.

Why: in elastic recovery (engine/performance/recovery.py, `training.checkpointing = elastic`, or `auto` at very
large scale) a failed data-parallel replica drops out and rejoins from a spare system while the others continue.
The job's goodput assumes such a spare is there, so the build must own it: spares are whole systems, bought,
racked, cabled into the fabrics and powered (hot), and counted in the BOM, the capex and the facility power like
the others. A plan without elastic recovery restarts on its own repaired or replaced system and carries none.

How many: failed systems are out for `spare_repair_hours` each and fail once per system MTBF, so the mean number
down at one moment is systems x repair_hours / node_mtbf_hours (Little's law). Independent failures make that
count Poisson distributed (the M/G/infinity queue), and the build carries the smallest count whose Poisson
probability reaches `hot_spare_percentile` (0.99 by default). The MTBF is the one the job's goodput used (the
system's catalog value from the Llama 3 interruption rate, or the `node_mtbf_hours` override): every
job-interrupting failure is counted as one that needs a spare, which errs on the side of more spares. A spare is
a whole system, so a rack-scale system (GB200/GB300 NVL72) is spared by whole racks: a failed compute tray takes
its rack's NVLink domain, and so the data-parallel replica on it, out of the job until the tray is swapped.
Keeping spare trays inside each rack (a layout of fewer GPUs per domain) would need far fewer; it is not modelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions
from engine.performance.goodput import Goodput

__all__ = ["ELASTIC", "HotSpares", "hot_spares", "poisson_quantile", "spares_for"]

ELASTIC = "elastic"  # the recovery mode that rejoins from a spare (engine/performance/recovery.py)


@dataclass(frozen=True)
class HotSpares:
    """The spares of one build and the figures they were sized from."""

    systems: int  # spare systems bought (whole systems, on top of the job's)
    job_systems: int
    node_mtbf_hours: float
    repair_hours: float
    mean_systems_down: float
    percentile: float


def poisson_quantile(mean: float, probability: float) -> int:
    """The smallest k with P(X <= k) >= probability for X ~ Poisson(mean). Each term exp(k ln m - m - ln k!) is
    formed in log space so a large mean (thousands of systems down) neither underflows nor overflows."""
    if mean <= 0:
        return 0
    log_mean, total, k = math.log(mean), 0.0, 0
    limit = int(mean + 12.0 * math.sqrt(mean) + 12.0)  # beyond any probability below 1 - 1e-15
    while k <= limit:
        total += math.exp(k * log_mean - mean - math.lgamma(k + 1.0))
        if total >= probability:
            return k
        k += 1
    return limit


def hot_spares(job_systems: int, node_mtbf_hours: float, a: Assumptions) -> HotSpares:
    """Spares for `job_systems` systems each failing once per `node_mtbf_hours` (see the module docstring)."""
    repair_h = a["spare_repair_hours"]
    percentile = a["hot_spare_percentile"]
    mean = job_systems * repair_h / node_mtbf_hours if node_mtbf_hours > 0 else 0.0
    return HotSpares(
        systems=poisson_quantile(mean, percentile),
        job_systems=job_systems,
        node_mtbf_hours=node_mtbf_hours,
        repair_hours=repair_h,
        mean_systems_down=mean,
        percentile=percentile,
    )


def spares_for(goodput: Goodput | None, rented: bool, a: Assumptions) -> HotSpares | None:
    """The spares of a training job whose goodput used elastic recovery;
    None otherwise, and for a rented system (the provider replaces a failed instance; nothing is bought). The
    assumptions are read only here, so a plan without elastic recovery does not list them."""
    if rented or goodput is None or goodput.checkpointing != ELASTIC:
        return None
    return hot_spares(goodput.systems, goodput.node_mtbf_hours, a)
