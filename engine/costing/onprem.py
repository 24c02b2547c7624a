"""On-prem: price the hardware (the BOM, else the GPU systems), add the capex lines beyond it, then the finance.

capex = priced hardware + the extra capex lines (installation, freight, tax, spares, support, software;
capex_lines.py), each a BOM line of its own, so the BOM total is the capex to the cent. What owning costs per year,
its NPV and the job's cost follow in ownership.py (annuity capital charge, running costs by year, residual value).

Extended-price rule (the one rule; the CSV and the page read `extended_price_usd`, never recompute it): the unit
price is rounded to the cent first (prices are quoted and stored in cents: `ComponentPrice.unit_price_usd` has
2 decimals), then extended price = quantity x that unit price, rounded to the cent. So a 10.005 USD override
becomes 10.01 and 3 of them 30.03, and a reader multiplying the shown unit price by the quantity gets the shown
extended price. The hardware total is the sum of the hardware lines' extended prices; capex adds the extra lines'.

Price basis: every priced line says what its price rests on (`price_basis`): a user override for this plan, a
vendor quote the owner uploaded, or the reference's confidence (list_price, public_estimate, assumption).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal

from engine.result.costs import Coverage, SystemLine, UnpricedLine
from engine.result.physical import BomLine

from .capex_lines import CapexItem, HardwareBase, capex_items
from .finance import YearFlow
from .inputs import CostInputs, CostJob, PartPrice, RequestTerms, Scales
from .money import D, cents
from .parameters import Params
from .providers import system_display_name
from .site_capex import SITE_CATEGORY, site_items

__all__ = [
    "EXTRA_CATEGORIES",
    "OnpremCosts",
    "PriceIndex",
    "bom_capex_usd",
    "extended_price",
    "onprem_costs",
    "price_index",
]

NO_BOM_NOTE = (
    "No BOM in this plan: capex prices the GPU systems only (the cluster's systems x the system's price). Fabric "
    "switches, optics, cables, storage, racks, PDUs and CDUs are not included, so capex is a lower bound."
)
# Categories of the capex lines beyond the hardware (capex_lines.py): never part of `hardware_usd`.
EXTRA_CATEGORIES = frozenset({"services", "tax", "spares", "support", "software", SITE_CATEGORY})


@dataclass
class OnpremCosts:
    """On-prem figures in Decimal (money to the cent); None where the hardware has no sourced price.

    `opex_usd_per_year` and its parts are the first year's running costs; `flows` every year's (ownership.py).
    """

    hardware_usd: Decimal | None
    lines: list[SystemLine]
    coverage: Coverage
    bom: list[BomLine] | None
    install_usd: Decimal | None = None
    capex_usd: Decimal | None = None
    extras: list[CapexItem] = field(default_factory=list)
    energy_usd_per_year: Decimal | None = None
    colocation_usd_per_year: Decimal | None = None
    maintenance_usd_per_year: Decimal | None = None
    staff_usd_per_year: Decimal | None = None
    insurance_usd_per_year: Decimal | None = None
    opex_usd_per_year: Decimal | None = None
    tco_usd: Decimal | None = None
    depreciation_usd_per_year: Decimal | None = None
    capital_charge_usd_per_year: Decimal | None = None
    levelized_opex_usd_per_year: Decimal | None = None
    energy_levelized_per_utilization: Decimal | None = None  # levelised energy at 100 % use (break-even slope)
    residual_value_usd: Decimal | None = None
    value_at_horizon_usd: Decimal | None = None
    npv_usd: Decimal | None = None
    lease_npv_usd: Decimal | None = None
    flows: list[YearFlow] = field(default_factory=list)
    usd_per_gpu_hour: Decimal | None = None  # a rate: not rounded to the cent
    job_usd: Decimal | None = None
    job_usd_shared: Decimal | None = None
    job_hours: float = 0.0
    utilization: Decimal = Decimal(0)
    electricity_usd_per_kwh: Decimal = Decimal(0)
    bom_total_usd: Decimal | None = field(default=None)


@dataclass(frozen=True)
class PriceIndex:
    """Reference prices, the owner's uploaded quotes and this plan's overrides, each keyed by part number and by
    catalog id. Precedence: this plan's override, then a quote, then the reference."""

    references: dict[str, PartPrice]
    overrides: dict[str, PartPrice]
    quotes: dict[str, PartPrice] = field(default_factory=dict)

    def _tables(self) -> tuple[dict[str, PartPrice], ...]:
        return (self.overrides, self.quotes, self.references)

    def get(self, key: str) -> PartPrice | None:
        return next((t[key] for t in self._tables() if key in t), None)

    def for_line(self, line: BomLine) -> PartPrice | None:
        """An override (then a quote) wins over any reference, whether it names the line's part number or its
        catalog id (a catalog id covers every length of a cable); then the reference for the part number, then the
        catalog id."""
        keys = [k for k in (line.part_number, line.catalog_id) if k]
        for table in self._tables():
            for key in keys:
                if key in table:
                    return table[key]
        return None


def _keyed(prices: Iterable[PartPrice]) -> dict[str, PartPrice]:
    """Prices by catalog id and by part number (a later record wins a shared key)."""
    out: dict[str, PartPrice] = {}
    for p in prices:
        for key in (p.catalog_id, p.part_number):
            if key:
                out[key] = p
    return out


def price_index(inputs: CostInputs) -> PriceIndex:
    references = _keyed(inputs.parts)
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
    return PriceIndex(references=references, overrides=overrides, quotes=_keyed(inputs.quotes))


def extended_price(quantity: int | float | Decimal, unit_price_usd: Decimal) -> tuple[Decimal, Decimal]:
    """(unit price, extended price): the unit price rounded to the cent first, then quantity x it, to the cent."""
    unit = cents(unit_price_usd)
    return unit, cents(D(quantity) * unit)


def _price_factor(scales: Scales, confidence: str) -> Decimal:
    """The sensitivity's multiplier for a price of this basis (1 for the plan as given)."""
    factor = dict(scales.part_price).get(confidence, 1.0)
    return D(scales.system_price) * D(factor)


def _price_bom(bom: tuple[BomLine, ...], index: PriceIndex, scales: Scales) -> OnpremCosts:
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
        unit, extended = extended_price(
            line.quantity or 0, price.unit_price_usd * _price_factor(scales, price.confidence)
        )
        total += extended
        priced_bom.append(
            replace(
                line,
                unit_price_usd=unit,
                extended_price_usd=extended,
                price_source=price.source,
                price_as_of=price.as_of,
                price_confidence=price.confidence,
                price_basis=price.confidence,
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


def _price_systems(job: CostJob, index: PriceIndex, scales: Scales) -> OnpremCosts:
    price = index.get(job.cluster_system)
    if price is None:
        coverage = Coverage(
            basis="systems_only",
            priced_lines=0,
            unpriced_lines=(UnpricedLine(job.cluster_system, "GPU system", job.cluster_systems),),
            notes=(
                NO_BOM_NOTE,
                f"{system_display_name(job.cluster_system)} has no sourced price: on-prem cost is not computed.",
            ),
        )
        return OnpremCosts(hardware_usd=None, lines=[], coverage=coverage, bom=None)
    unit, extended = extended_price(job.cluster_systems, price.unit_price_usd * _price_factor(scales, price.confidence))
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


def _extra_bom_line(item: CapexItem) -> BomLine:
    return BomLine(
        part_number=item.part_number,
        manufacturer=None,
        description=item.description,
        category=item.category,
        quantity=item.quantity,
        source=f"cost parameter {item.parameter}",
        unit_price_usd=item.unit_price_usd,
        extended_price_usd=item.extended_price_usd,
        price_source=item.source,
        price_as_of=item.as_of,
        price_confidence=item.confidence,
        price_basis=item.confidence,
        priced=True,
    )


def _extra_system_line(item: CapexItem) -> SystemLine:
    return SystemLine(
        catalog_id=item.parameter,
        part_number=item.part_number,
        description=item.description,
        category=item.category,
        quantity=item.quantity,
        unit_price_usd=item.unit_price_usd,
        extended_price_usd=item.extended_price_usd,
        price_source=item.source,
        price_as_of=item.as_of,
        price_confidence=item.confidence,
    )


def _add_capex_lines(o: OnpremCosts, job: CostJob, params: Params) -> None:
    """Capex = hardware + the extra lines, each appended to the BOM (or to the systems-only lines)."""
    assert o.hardware_usd is not None
    if o.bom is not None:
        systems = sum((x.extended_price_usd or Decimal(0) for x in o.bom if x.category == "compute"), Decimal(0))
    else:
        systems = o.hardware_usd
    names = (
        "install_integration_percent",
        "freight_percent",
        "spares_percent",
        "sales_tax_percent",
        "maintenance_percent_per_year",
        "support_bundled_years",
        "software_licence_years",
        "software_usd_per_gpu_year",
    )
    values = {name: params[name] for name in names}
    report = params.report()
    base = HardwareBase(o.hardware_usd, systems, job.cluster_system, job.cluster_gpus)
    o.extras = capex_items(base, values, {name: report[name] for name in names})
    o.extras.extend(site_items(job.it_kw, job.terms.facility_owned, params))
    install = [i.extended_price_usd for i in o.extras if i.part_number == "SVC-INSTALL"]
    o.install_usd = install[0] if install else Decimal("0.00")
    o.capex_usd = o.hardware_usd + sum((i.extended_price_usd for i in o.extras), Decimal(0))
    if o.bom is not None:
        o.bom.extend(_extra_bom_line(i) for i in o.extras)
        o.bom_total_usd = sum((x.extended_price_usd or Decimal(0) for x in o.bom), Decimal(0))
    else:
        o.lines.extend(_extra_system_line(i) for i in o.extras)


def onprem_costs(job: CostJob, inputs: CostInputs, params: Params, scales: Scales) -> OnpremCosts:
    """Price the hardware and the extra capex lines (ownership.py adds the yearly figures and the job's cost)."""
    index = price_index(inputs)
    o = _price_bom(job.bom, index, scales) if job.bom else _price_systems(job, index, scales)
    o.utilization = min(Decimal(1), params["utilization"] * D(scales.utilization))
    o.electricity_usd_per_kwh = params["electricity_usd_per_kwh"] * D(scales.power_price)
    o.job_hours = job.chosen.days * 24 / scales.mfu
    if o.hardware_usd is None:
        return o
    _add_capex_lines(o, job, params)
    return o


def bom_capex_usd(
    bom: tuple[BomLine, ...],
    system_id: str,
    systems: int,
    gpus: int,
    inputs: CostInputs,
    terms: RequestTerms,
    it_kw: float = 0.0,
) -> Decimal | None:
    """Capex of a built cluster's unpriced BOM, by the same rules as the plan's costing (`onprem_costs`): each line
    priced (override, quote, reference), then the extra capex lines. None when the GPU systems have no price.
    The envelope search (engine/envelope) prices each count it builds with it, so its capex limit and the plan's
    `costs.onprem.capex_usd` are one figure. `terms` are the request's (its own part and parameter prices apply);
    `it_kw` prices an owned site's lines (site_capex.py)."""
    inputs = replace(
        inputs,
        part_overrides={**inputs.part_overrides, **terms.part_overrides},
        parameter_overrides={**inputs.parameter_overrides, **terms.parameter_overrides},
    )
    params = Params(inputs, terms)
    o = _price_bom(bom, price_index(inputs), Scales())
    if o.hardware_usd is None:
        return None
    job = CostJob(
        workload="capacity",
        sizings=(),
        deadline_days=None,
        cluster_system=system_id,
        cluster_systems=systems,
        cluster_gpus=gpus,
        job_gpus=gpus,
        it_kw=it_kw,
        facility_kw=0.0,
        bom=bom,
        terms=terms,
    )
    _add_capex_lines(o, job, params)
    return o.capex_usd
