"""An owned site's capex: the electrical chain, the heat-rejection plant and the building, priced per kW of IT load.

Why only when owned: a colocated cluster rents all three through the colocation price per kW-month (opex), so
pricing them in capex as well would count them twice. With `site.ownership = owned` the plan buys them instead
(three capex lines, category `site`) and pays no colocation. The plant a plan counts (`plan.plant`: feeds,
transformers, UPS, generators, chillers or dry coolers) is what these lines buy; they are priced per kW of critical
load because that is how the public cost guides quote data-centre construction (no public list prices exist for
switchgear or chillers at this scale).

The building outlives the hardware: what is left of the site's cost when the hardware's useful life ends is its
residual value (straight line over facility_useful_life_years), so owning is not charged for a 20-year asset in 5.
Its upkeep is its own rate (facility_upkeep_percent_per_year) from year 1, in the maintenance column; the hardware
support percentage applies to the rest of capex only.
"""

from __future__ import annotations

from decimal import Decimal

from .capex_lines import CapexItem, capex_item
from .money import D, cents
from .parameters import Params

__all__ = ["SITE_CATEGORY", "SITE_LINES", "site_items", "site_residual_usd", "site_upkeep_fraction"]

SITE_CATEGORY = "site"
# (part number, input name, cost parameter, what it buys)
SITE_LINES = (
    (
        "SITE-ELECTRICAL",
        "site_electrical",
        "facility_electrical_usd_per_kw",
        "utility service, substation, transformers, switchgear, UPS and generators",
    ),
    (
        "SITE-MECHANICAL",
        "site_mechanical",
        "facility_mechanical_usd_per_kw",
        "heat rejection (chillers or dry coolers), pumps and the cooling plant",
    ),
    (
        "SITE-BUILDING",
        "site_building",
        "facility_building_usd_per_kw",
        "building shell, site work, white space, back of house and offices (no land)",
    ),
)


def _priced(params: Params) -> bool:
    names = [line[2] for line in SITE_LINES]
    return all(name in params.base or name in params.overrides for name in names)


def site_items(it_kw: float, owned: bool, params: Params) -> list[CapexItem]:
    """The owned site's three lines: whole kW of IT load x each line's USD per kW (none when colocated, or when the
    loaded prices predate these parameters)."""
    if not owned or it_kw <= 0 or not _priced(params):
        return []
    kw = max(1, round(it_kw))
    report = params.report()
    items = []
    for part, name, parameter, what in SITE_LINES:
        unit = cents(params[parameter])
        description = f"Owned site: {what}; {kw:,} kW of IT load x {unit:,.0f} USD per kW"
        items.append(capex_item(part, name, SITE_CATEGORY, description, kw, unit, parameter, report[parameter]))
    return [i for i in items if i.extended_price_usd > 0]


def site_residual_usd(site_usd: Decimal, params: Params) -> Decimal:
    """What is left of the site's cost after the hardware's useful life: straight line over the facility's life."""
    if site_usd <= 0 or "facility_useful_life_years" not in params.base:
        return Decimal("0.00")
    life = params["useful_life_years"]
    facility_life = params["facility_useful_life_years"]
    left = max(Decimal(0), 1 - D(life) / D(facility_life))
    return cents(site_usd * left)


def site_upkeep_fraction(site_usd: Decimal, params: Params) -> Decimal:
    """The owned site's yearly upkeep as a fraction of its cost (facility_upkeep_percent_per_year), from year 1; the
    hardware support percentage never applies to the building."""
    name = "facility_upkeep_percent_per_year"
    if site_usd <= 0 or (name not in params.base and name not in params.overrides):
        return Decimal(0)
    return params[name] / 100
