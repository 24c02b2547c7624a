"""Capex beyond the hardware, as BOM lines of their own: installation, freight, sales/use tax, a spares pool,
software licences and the support contract bought with the systems.

Why lines and not a percentage hidden in a formula: procurement orders them (an integrator's services, a support
contract, licences), finance capitalises them, and a BOM whose total is the capex to the cent is the one figure
both can check. Each line's amount comes from one named, sourced cost parameter (fixtures/prices/parameters.json,
reported in costs.parameters), rounded to the cent by the one extended-price rule. A line worth nothing (a 0 %
parameter) is left out, and the explain entry of capex says which parameters were zero.

- services: installation and integration = hardware x install_integration_percent; freight = hardware x
  freight_percent;
- tax: sales/use tax = (hardware + spares) x sales_tax_percent (goods only);
- spares: the spares pool = GPU systems x spares_percent;
- support: hardware x maintenance_percent_per_year x support_bundled_years, prepaid with the purchase;
- software: NVIDIA AI Enterprise at software_usd_per_gpu_year x GPUs x software_licence_years, except on NVIDIA
  DGX systems, whose datasheets list NVIDIA AI Enterprise as included software.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from engine.catalog.hardware import load_catalog
from engine.result.costs import ParameterUsed

from .money import cents

__all__ = ["CapexItem", "HardwareBase", "capex_item", "capex_items", "software_bundled"]

# NVIDIA DGX systems ship with NVIDIA AI Enterprise (DGX H100/H200/B200/B300 datasheets, "Software" row); a system
# is one when the catalog's part number names a DGX product (the DGX GB200 NVL72 rack too, not only the dgx-* ids).
DGX_PART_PREFIX = "DGX "
HUNDRED = Decimal(100)
# Each line's input name in the explain entry of capex (the support line's part number carries its years).
ITEM_NAMES = {
    "SPARES-POOL": "spares_pool",
    "SVC-INSTALL": "installation",
    "SVC-FREIGHT": "freight",
    "TAX-SALES-USE": "sales_use_tax",
    "SUPPORT": "support_prepaid",
    "SW-NVAIE": "software_licences",
}


@dataclass(frozen=True)
class HardwareBase:
    """What the extra lines are a share of: all priced hardware and the GPU systems within it."""

    hardware_usd: Decimal
    systems_usd: Decimal
    system: str
    gpus: int


@dataclass(frozen=True)
class CapexItem:
    """One extra capex line: a part number of ours (no vendor part exists), what it is, how many of what."""

    part_number: str
    name: str  # what it is, as an input name: installation, freight, spares_pool, ...
    category: str  # services | tax | spares | support | software
    description: str
    quantity: int
    unit_price_usd: Decimal
    extended_price_usd: Decimal
    parameter: str  # the named cost parameter that prices it
    source: str
    as_of: str
    confidence: str


def software_bundled(system: str) -> bool:
    """Whether the system's price already carries NVIDIA AI Enterprise: an NVIDIA DGX product, told by the part
    number the catalog gives the system (an OEM or cloud system has none of DGX's)."""
    physical = load_catalog().parts.systems.get(system)
    return physical is not None and physical.part_number.startswith(DGX_PART_PREFIX)


def capex_item(
    part: str, name: str, category: str, description: str, quantity: int, unit_usd: Decimal, parameter: str,
    used: ParameterUsed,
) -> CapexItem:  # fmt: skip
    """The one way an extra capex line is made (these lines and the owned site's): the unit price rounded to the
    cent, extended = quantity x that unit, and the source, date and confidence of the cost parameter behind it."""
    unit = cents(unit_usd)
    return CapexItem(
        part_number=part,
        name=name,
        category=category,
        description=description,
        quantity=quantity,
        unit_price_usd=unit,
        extended_price_usd=cents(unit * quantity),
        parameter=parameter,
        source=used.source or "",
        as_of=used.as_of or "",
        confidence=used.confidence or "assumption",
    )


def _item(
    part: str, category: str, description: str, quantity: int, unit: Decimal, name: str, used: ParameterUsed
) -> CapexItem:
    item_name = ITEM_NAMES.get(part) or ITEM_NAMES[part.split("-")[0]]
    return capex_item(part, item_name, category, description, quantity, unit, name, used)


def capex_items(base: HardwareBase, value: dict[str, Decimal], used: dict[str, ParameterUsed]) -> list[CapexItem]:
    """The extra lines, in the order a quotation lists them; lines worth 0.00 are left out."""
    hw = base.hardware_usd
    install_pct, freight_pct = value["install_integration_percent"], value["freight_percent"]
    spares_pct, tax_pct = value["spares_percent"], value["sales_tax_percent"]
    maint_pct, support_years = value["maintenance_percent_per_year"], int(value["support_bundled_years"])
    licence_years, per_gpu_year = int(value["software_licence_years"]), value["software_usd_per_gpu_year"]
    spares = cents(base.systems_usd * spares_pct / HUNDRED)
    items = [
        _item(
            "SPARES-POOL",
            "spares",
            f"On-site spares pool (field-replaceable units): {spares_pct.normalize():f} % of the GPU systems",
            1,
            spares,
            "spares_percent",
            used["spares_percent"],
        ),
        _item(
            "SVC-INSTALL",
            "services",
            f"Installation, integration, burn-in and acceptance: {install_pct.normalize():f} % of the hardware",
            1,
            hw * install_pct / HUNDRED,
            "install_integration_percent",
            used["install_integration_percent"],
        ),
        _item(
            "SVC-FREIGHT",
            "services",
            f"Freight, insurance in transit and rigging: {freight_pct.normalize():f} % of the hardware",
            1,
            hw * freight_pct / HUNDRED,
            "freight_percent",
            used["freight_percent"],
        ),
        _item(
            "TAX-SALES-USE",
            "tax",
            f"Sales/use tax: {tax_pct.normalize():f} % of the goods (hardware and spares)",
            1,
            (hw + spares) * tax_pct / HUNDRED,
            "sales_tax_percent",
            used["sales_tax_percent"],
        ),
        _item(
            f"SUPPORT-{support_years}Y",
            "support",
            f"Hardware support contract, {support_years} years prepaid: "
            f"{maint_pct.normalize():f} % of the hardware per year",
            support_years,
            hw * maint_pct / HUNDRED,
            "maintenance_percent_per_year",
            used["maintenance_percent_per_year"],
        ),
    ]
    if not software_bundled(base.system):
        items.append(
            _item(
                "SW-NVAIE",
                "software",
                f"NVIDIA AI Enterprise licence, per GPU-year: {base.gpus:,} GPUs x {licence_years} years",
                base.gpus * licence_years,
                per_gpu_year,
                "software_usd_per_gpu_year",
                used["software_usd_per_gpu_year"],
            )
        )
    return [i for i in items if i.extended_price_usd > 0]
