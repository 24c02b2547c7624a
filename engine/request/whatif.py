"""The what-if body: a plan's `pricing` and `site` blocks, changed in place and re-costed without a new search.

Only costing reads these two sections (the sizing reads neither, apart from `site.pue`, which the facility power
uses, so a what-if refuses it). The model reuses the request's own sections, so the API documents the same fields,
bounds and descriptions as for a new plan; `planner/adapter.plan_whatif` validates the merged request with the one
request schema, so errors carry the same paths (`pricing.utilization must be <= 1`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from engine.request.site import PricingSpec, SiteSpec

__all__ = ["WhatIfRequest"]


class WhatIfRequest(BaseModel):
    """`POST /api/plans/{id}/whatif/`: the fields given replace the plan's own (component prices and parameters
    are merged key by key); anything else is refused by name."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="WhatIfRequest")

    pricing: PricingSpec | None = Field(
        None,
        description="Costing horizon, regions, utilisation, component prices (e.g. the GPU system's) and "
        "named cost parameters (cost_of_capital, spot_price_factor, ...).",
    )
    site: SiteSpec | None = Field(
        None, description="Electricity and colocation prices (pue changes the sizing: re-plan for that)."
    )
