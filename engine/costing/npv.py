"""NPV of each way to have the owned cluster's capacity over the analysis horizon, in today's money.

Owning: capex now, the running costs at each year's end, less the value left at the horizon (ownership.py);
leasing, when a lease rate is given: the lease payments and running costs (finance.lease_npv); renting: for each
purchase option, the obtainable row that does the owned cluster's work most cheaply (series.rented_capacity),
paid at each year's end. All at the plan's cost of capital, so the figures compare.
"""

from __future__ import annotations

from engine.result.costs import NpvOption

from .evaluation import Evaluation
from .finance import npv_of_yearly
from .providers import row_option
from .series import rented_capacity

__all__ = ["NPV_BASIS", "npv_options"]

NPV_BASIS = (
    "present value at the cost of capital of keeping the owned cluster's capacity for the horizon: owning pays "
    "capex now and the running costs at each year's end, less the value left at the horizon; each cloud option "
    "rents the GPUs that do the same work, paid at each year's end; lower is cheaper"
)


def npv_options(ev: Evaluation) -> tuple[NpvOption, ...] | None:
    """Owning, leasing (with a lease rate) and the best obtainable row of each purchase option, cheapest first."""
    o = ev.onprem
    if o.npv_usd is None:
        return None
    years, rate_ = ev.params.years, ev.params["cost_of_capital"]
    out = [NpvOption("onprem", "On-prem, owned (capex, running costs, value left at the horizon)", o.npv_usd)]
    if o.lease_npv_usd is not None:
        out.append(NpvOption("onprem_lease", "On-prem, leased (lease payments and running costs)", o.lease_npv_usd))
    for chosen, per_year in rented_capacity(ev):
        row = chosen.row
        label = f"{row_option(row, row.region)}, the same work"
        out.append(NpvOption(row.purchase, label, npv_of_yearly([per_year] * years, rate_)))
    return tuple(sorted(out, key=lambda x: x.npv_usd))
