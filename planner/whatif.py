"""The what-if panel of a plan page: which inputs it offers, their current values (the plan's own), and reading the
posted fields back into request overrides.

The fields are named by their request path (`pricing.utilization`, `pricing.parameters.cost_of_capital`,
`pricing.component_prices.<system>`, `site.electricity_usd_per_kwh`, `training.deadline_days`), so the page's
script, the API (`POST /api/plans/{id}/whatif/`) and "save as a new plan" all speak the request's own language and
an error names the same path. Every value shown comes from the stored plan (its costs' parameters, its request,
its priced BOM), never from the live references.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .outputs.formatting import catalog_name
from .outputs.plan_view import PlanView

__all__ = ["WhatIfField", "overrides_from_post", "whatif_fields"]

DEADLINE = "training.deadline_days"


@dataclass(frozen=True)
class WhatIfField:
    """One input of the panel: `name` is its request path; `value` is in the request's unit, `minimum`, `maximum`
    and `step` in the shown unit (value x `scale`: a percentage shown for a fraction has scale 100); `resizes`
    marks the deadline, which needs a new plan."""

    name: str
    label: str
    value: float
    minimum: float
    maximum: float
    step: float
    unit: str
    help: str
    scale: float = 1.0
    resizes: bool = False

    @property
    def shown(self) -> str:
        """The plan's value in the field's unit, without trailing zeros and never in exponent form (a system
        price of 3,400,000 reads "3400000", not "3.4e+06"); ten significant figures drop float noise (8.000000000000002)
        and keep a price to the cent."""
        return format(Decimal(f"{self.value * self.scale:.10g}").normalize(), "f")

    @property
    def slider(self) -> bool:
        return not self.resizes


def _parameter(view: PlanView, name: str) -> Decimal | None:
    costs = view.costs
    used = (costs.parameters or {}).get(name) if costs else None
    return used.value if used is not None else None


def _system_price(view: PlanView) -> tuple[str, Decimal] | None:
    """(catalog id, unit price) of the plan's GPU system as its BOM priced it."""
    result = view.result
    if result is None or result.cluster is None:
        return None
    for line in view.bom_lines or ():
        if line.category == "compute" and line.unit_price_usd is not None:
            return result.cluster.system, Decimal(line.unit_price_usd)
    return None


def whatif_fields(view: PlanView) -> list[WhatIfField]:
    """The panel's inputs for a priced plan (none when it has no costs)."""
    costs = view.costs
    if not view or costs is None or not costs.available or view.result is None:
        return []
    fields: list[WhatIfField] = []
    utilization = costs.onprem.utilization if costs.onprem else _parameter(view, "utilization")
    if utilization is not None:
        fields.append(
            WhatIfField("pricing.utilization", "Utilisation of the owned cluster", float(utilization), 5, 100, 5,
                        "%", "Share of hours the owned cluster does paid work.", scale=100)
        )  # fmt: skip
    electricity = _parameter(view, "electricity_usd_per_kwh")
    if electricity is not None:
        fields.append(
            WhatIfField("site.electricity_usd_per_kwh", "Electricity price", float(electricity), 0.01, 0.5, 0.01,
                        "$/kWh", "What the site pays per kWh.")
        )  # fmt: skip
    system = _system_price(view)
    if system is not None:
        system_id, price = system
        label = f"Price of one {catalog_name(system_id)}"
        fields.append(
            WhatIfField(f"pricing.component_prices.{system_id}", label, float(price),
                        float(price) * 0.2, float(price) * 2, max(1000.0, round(float(price) / 100, -3)), "$",
                        "Unit price of one GPU system, as quoted to you.")
        )  # fmt: skip
    spot = _parameter(view, "spot_price_factor")
    fields.append(
        WhatIfField("pricing.parameters.spot_price_factor", "Spot prices", float(spot if spot is not None else 1),
                    20, 200, 5, "% of observed", "Spot prices as a share of the snapshot's (lower = deeper "
                    "discount).", scale=100)
    )  # fmt: skip
    years = view.result.request.get("pricing", {}).get("years")
    if years is not None:
        fields.append(
            WhatIfField("pricing.years", "Horizon", float(years), 1, 10, 1, "years", "Years the TCO and NPV cover.")
        )
    capital = _parameter(view, "cost_of_capital")
    if capital is not None:
        fields.append(
            WhatIfField("pricing.parameters.cost_of_capital", "Cost of capital", float(capital), 0, 30, 0.5,
                        "% a year", "Your WACC or the rate of the debt that funds the cluster.", scale=100)
        )  # fmt: skip
    deadline = (view.result.request.get("training") or {}).get("deadline_days")
    if deadline is not None:
        fields.append(
            WhatIfField(DEADLINE, "Deadline", float(deadline), 1, 3650, 1, "days",
                        "A new deadline changes the cluster's size: it makes a new plan.", resizes=True)
        )  # fmt: skip
    return fields


def _number(raw: str) -> float | str:
    try:
        return float(raw)
    except ValueError:
        return raw  # the request schema names the field and says what it must be


def overrides_from_post(post: Mapping[str, str], fields: list[WhatIfField], *, deadline: bool) -> dict[str, Any]:
    """Request overrides from the posted fields that differ from the plan's values (`deadline`: include the
    deadline, for "re-plan with this deadline"). Shown units are turned back into the request's."""
    out: dict[str, Any] = {}
    for field in fields:
        if field.resizes and not deadline:
            continue
        raw = (post.get(field.name) or "").strip()
        if not raw or raw == field.shown:
            continue
        value = _number(raw)
        if isinstance(value, float):
            value = value / field.scale
            if field.name == "pricing.years" and value.is_integer():
                value = int(value)
        section, _, rest = field.name.partition(".")
        target = out.setdefault(section, {})
        head, _, leaf = rest.partition(".")
        if leaf:
            target.setdefault(head, {})[leaf] = value
        else:
            target[head] = value
    return out
