"""The explain entry of the hot spares an elastic-recovery build carries (`cluster.hot_spares`).

Why its own entry: the spares are bought, racked and powered like the job's systems, so they move the capex, the
power and the racks; a buyer asked to pay for them sees the formula, the failure rate and repair time they come
from, and the service level they buy, in one place.
"""

from __future__ import annotations

from engine.physical.spares import HotSpares

__all__ = ["hot_spares_explain"]

SPARES_SOURCE = (
    "Failure rate: Meta, 'The Llama 3 Herd of Models' (arXiv 2407.21783, July 2024), section 3.3.4: 419 "
    "unexpected interruptions in 54 days on 16,384 H100 GPUs, the system MTBF the job's goodput uses. Mean "
    "systems down at once = failure rate x repair time (Little's law); independent failures make that count "
    "Poisson distributed (the M/G/infinity queue). Elastic recovery rejoining from spares: PyTorch torchft "
    "(2025). Repair time and service level: named assumptions spare_repair_hours and hot_spare_percentile."
)


def hot_spares_explain(spares: HotSpares | None) -> dict[str, dict[str, object]]:
    """{"cluster.hot_spares": entry}, or nothing when the build carries no spares (no elastic recovery)."""
    if spares is None:
        return {}
    return {
        "cluster.hot_spares": {
            "formula": (
                "mean systems down = job systems x repair hours / system MTBF hours; spares = the smallest count "
                "whose Poisson probability of that many or fewer down reaches the service level. The spares are "
                "whole systems, racked, cabled and powered (hot) like the others: their racks, fabric ports, "
                "feeds and cooling are sized for full load (a spare runs the failed system's share the moment it "
                "rejoins) and their energy is charged at that load (an idle spare draws less, so this errs high). "
                "A spare is a whole system: for a rack-scale system (NVL72) a whole rack, since a failed tray takes "
                "its NVLink domain's replica out until the tray is swapped; spare trays inside each rack (running "
                "fewer GPUs per domain) are not modelled."
            ),
            "inputs": {
                "job_systems": spares.job_systems,
                "system_mtbf_hours": round(spares.node_mtbf_hours, 1),
                "repair_hours": spares.repair_hours,
                "mean_systems_down": round(spares.mean_systems_down, 2),
                "service_level": spares.percentile,
                "hot_spares": spares.systems,
            },
            "source": SPARES_SOURCE,
        }
    }
