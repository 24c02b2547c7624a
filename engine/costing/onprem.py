"""On-prem: price the hardware (the BOM, else the GPU systems), then capex, opex per year, TCO and the job's cost.

capex = priced hardware + install/integration %; opex per year = facility kW x 8760 x utilisation x $/kWh +
colocation $/kW-month x 12 x IT kW + maintenance % x capex + staff; TCO = capex + years x opex;
$/GPU-hour = TCO / (GPUs x 8760 x utilisation x years); the job bought for itself pays the whole capex plus its own
running cost, a shared cluster charges the job GPU-hours x $/GPU-hour. Every amount is rounded to the cent where
it is produced (money.py), so capex = hardware + install and opex = its four parts exactly.

Extended-price rule (the one rule; the CSV and the page read `extended_price_usd`, never recompute it): the unit
price is rounded to the cent first (prices are quoted and stored in cents: `ComponentPrice.unit_price_usd` has
2 decimals), then extended price = quantity x that unit price, rounded to the cent. So a 10.005 USD override
becomes 10.01 and 3 of them 30.03, and a reader multiplying the shown unit price by the quantity gets the shown
extended price. The hardware total is the sum of the extended prices.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal

from engine.result.costs import Coverage, OnpremSection, OpexBreakdown, SystemLine, UnpricedLine
from engine.result.physical import BomLine

from .inputs import CostInputs, CostJob, PartPrice, Scales
from .money import HOURS_PER_YEAR, D, cents, r, rate
from .parameters import Params

__all__ = ["OnpremCosts", "PriceIndex", "extended_price", "onprem_costs", "onprem_section", "price_index"]

NO_BOM_NOTE = (
    "No BOM in this plan: capex prices the GPU systems only (cluster.systems x system price). Fabric "
    "switches, optics, cables, storage, racks, PDUs and CDUs are not included, so capex is a lower bound."
)


@dataclass
class OnpremCosts:
    """On-prem figures in Decimal (money to the cent); None where the hardware has no sourced price."""

    hardware_usd: Decimal | None
    lines: list[SystemLine]
    coverage: Coverage
    bom: list[BomLine] | None
    install_usd: Decimal | None = None
    capex_usd: Decimal | None = None
    energy_usd_per_year: Decimal | None = None
    colocation_usd_per_year: Decimal | None = None
    maintenance_usd_per_year: Decimal | None = None
    staff_usd_per_year: Decimal | None = None
    opex_usd_per_year: Decimal | None = None
    tco_usd: Decimal | None = None
    depreciation_usd_per_year: Decimal | None = None
    usd_per_gpu_hour: Decimal | None = None  # a rate: not rounded to the cent
    job_usd: Decimal | None = None
    job_usd_shared: Decimal | None = None
    job_hours: float = 0.0
    utilization: Decimal = Decimal(0)
    electricity_usd_per_kwh: Decimal = Decimal(0)
    bom_total_usd: Decimal | None = field(default=None)


@dataclass(frozen=True)
class PriceIndex:
    """Reference prices and this plan's overrides, each keyed by part number and by catalog id."""

    references: dict[str, PartPrice]
    overrides: dict[str, PartPrice]

    def get(self, key: str) -> PartPrice | None:
        return self.overrides.get(key) or self.references.get(key)

    def for_line(self, line: BomLine) -> PartPrice | None:
        """A user override wins over any reference, whether it names the line's part number or its catalog id (a
        catalog id covers every length of a cable); then the reference for the part number, then the catalog id."""
        keys = [k for k in (line.part_number, line.catalog_id) if k]
        for table in (self.overrides, self.references):
            for key in keys:
                if key in table:
                    return table[key]
        return None


def price_index(inputs: CostInputs) -> PriceIndex:
    references: dict[str, PartPrice] = {}
    for p in inputs.parts:
        for key in (p.catalog_id, p.part_number):
            if key:
                references[key] = p
    overrides: dict[str, PartPrice] = {}
    for key, value in inputs.part_overrides.items():
        known = references.get(key)
        overrides[key] = PartPrice(
            part_number=known.part_number if known else key,
            catalog_id=known.catalog_id if known else "",
            unit_price_usd=D(value),
            source=f"user override for this plan ({key})",
            as_of="",
            confidence="user_override",
            description=known.description if known else "",
            category=known.category if known else "",
        )
    return PriceIndex(references=references, overrides=overrides)


def extended_price(quantity: int | float | Decimal, unit_price_usd: Decimal) -> tuple[Decimal, Decimal]:
    """(unit price, extended price): the unit price rounded to the cent first, then quantity x it, to the cent."""
    unit = cents(unit_price_usd)
    return unit, cents(D(quantity) * unit)


def _price_bom(bom: tuple[BomLine, ...], index: PriceIndex, scale: Decimal) -> OnpremCosts:
    """Each BOM line priced by the one extended-price rule (unpriced lines keep null prices and are listed)."""
    priced_bom, unpriced, total = [], [], Decimal(0)
    for line in bom:
        price = index.for_line(line)
        if price is None:
            priced_bom.append(
                replace(
                    line,
                    unit_price_usd=None,
                    extended_price_usd=None,
                    price_source=None,
                    price_as_of=None,
                    price_confidence=None,
                    priced=True,
                )
            )
            unpriced.append(UnpricedLine(line.part_number, line.description, line.quantity))
            continue
        unit, extended = extended_price(line.quantity or 0, price.unit_price_usd * scale)
        total += extended
        priced_bom.append(
            replace(
                line,
                unit_price_usd=unit,
                extended_price_usd=extended,
                price_source=price.source,
                price_as_of=price.as_of,
                price_confidence=price.confidence,
                priced=True,
            )
        )
    notes = []
    systems_unpriced = [line for line in bom if line.category == "compute" and index.for_line(line) is None]
    if systems_unpriced:
        # The GPU systems are most of the capex: a total without them would mislead more than no total.
        names = ", ".join(sorted({line.description for line in systems_unpriced}))
        notes.append(f"{names} has no sourced price: on-prem cost is not computed (the other lines are priced).")
    elif unpriced:
        notes.append(
            f"{len(unpriced)} of {len(bom)} BOM lines have no sourced price and are left out of capex "
            "(listed in unpriced_lines); capex is therefore a lower bound."
        )
    coverage = Coverage("bom", len(bom) - len(unpriced), tuple(unpriced), tuple(notes))
    hardware = total if total > 0 and not systems_unpriced else None
    return OnpremCosts(hardware_usd=hardware, lines=[], coverage=coverage, bom=priced_bom, bom_total_usd=total)


def _price_systems(job: CostJob, index: PriceIndex, scale: Decimal) -> OnpremCosts:
    price = index.get(job.cluster_system)
    if price is None:
        coverage = Coverage(
            basis="systems_only",
            priced_lines=0,
            unpriced_lines=(UnpricedLine(job.cluster_system, "GPU system", job.cluster_systems),),
            notes=(NO_BOM_NOTE, f"{job.cluster_system} has no sourced price: on-prem cost is not computed."),
        )
        return OnpremCosts(hardware_usd=None, lines=[], coverage=coverage, bom=None)
    unit, extended = extended_price(job.cluster_systems, price.unit_price_usd * scale)
    line = SystemLine(
        catalog_id=job.cluster_system,
        part_number=price.part_number or None,
        description=price.description or job.cluster_system,
        category="system",
        quantity=job.cluster_systems,
        unit_price_usd=unit,
        extended_price_usd=extended,
        price_source=price.source,
        price_as_of=price.as_of,
        price_confidence=price.confidence,
    )
    coverage = Coverage(basis="systems_only", priced_lines=1, unpriced_lines=(), notes=(NO_BOM_NOTE,))
    return OnpremCosts(hardware_usd=extended, lines=[line], coverage=coverage, bom=None)


def onprem_costs(job: CostJob, inputs: CostInputs, params: Params, scales: Scales) -> OnpremCosts:
    """Price the hardware, then every on-prem figure that follows from it (see the module docstring)."""
    index, scale = price_index(inputs), D(scales.system_price)
    o = _price_bom(job.bom, index, scale) if job.bom else _price_systems(job, index, scale)
    o.utilization = min(Decimal(1), params["utilization"] * D(scales.utilization))
    o.electricity_usd_per_kwh = params["electricity_usd_per_kwh"] * D(scales.power_price)
    o.job_hours = job.chosen.days * 24 / scales.mfu
    if o.hardware_usd is None:
        return o
    years = params.years
    o.install_usd = cents(o.hardware_usd * params["install_integration_percent"] / 100)
    o.capex_usd = o.hardware_usd + o.install_usd
    facility_kw, it_kw = D(job.facility_kw), D(job.it_kw)
    o.energy_usd_per_year = cents(facility_kw * HOURS_PER_YEAR * o.utilization * o.electricity_usd_per_kwh)
    o.colocation_usd_per_year = cents(it_kw * params["colo_usd_per_kw_month"] * 12)
    o.maintenance_usd_per_year = cents(o.capex_usd * params["maintenance_percent_per_year"] / 100)
    o.staff_usd_per_year = cents(params["staff_usd_per_year"])
    running = o.colocation_usd_per_year + o.maintenance_usd_per_year + o.staff_usd_per_year
    o.opex_usd_per_year = o.energy_usd_per_year + running
    o.tco_usd = o.capex_usd + o.opex_usd_per_year * years
    o.depreciation_usd_per_year = cents(o.capex_usd / years)
    used_gpu_hours = D(job.cluster_gpus) * HOURS_PER_YEAR * o.utilization * years
    o.usd_per_gpu_hour = o.tco_usd / used_gpu_hours if used_gpu_hours > 0 else None
    hours = D(o.job_hours)
    energy = facility_kw * hours * o.electricity_usd_per_kwh
    o.job_usd = cents(o.capex_usd + energy + running * hours / HOURS_PER_YEAR)
    if o.usd_per_gpu_hour is not None:
        o.job_usd_shared = cents(D(job.job_gpus) * hours * o.usd_per_gpu_hour)
    return o


def onprem_section(o: OnpremCosts, job: CostJob, years: int) -> OnpremSection:
    """The `costs.onprem` section: amounts to the cent, the $/GPU-hour rate to at most 6 decimals."""
    breakdown = None
    if o.opex_usd_per_year is not None:
        assert o.energy_usd_per_year is not None and o.colocation_usd_per_year is not None
        assert o.maintenance_usd_per_year is not None and o.staff_usd_per_year is not None
        breakdown = OpexBreakdown(
            energy=o.energy_usd_per_year,
            colocation=o.colocation_usd_per_year,
            maintenance=o.maintenance_usd_per_year,
            staff=o.staff_usd_per_year,
        )
    return OnpremSection(
        capex_usd=o.capex_usd,
        hardware_usd=o.hardware_usd,
        install_usd=o.install_usd,
        opex_usd_per_year=o.opex_usd_per_year,
        opex_breakdown_usd_per_year=breakdown,
        tco_usd=o.tco_usd,
        years=years,
        depreciation_usd_per_year=o.depreciation_usd_per_year,
        utilization=o.utilization,
        gpus=job.cluster_gpus,
        usd_per_gpu_hour=rate(o.usd_per_gpu_hour),
        job_usd=o.job_usd,
        job_usd_shared=o.job_usd_shared,
        job_hours=r(o.job_hours, 3),
        job_gpus=job.job_gpus,
        lines=tuple(o.lines),
    )
