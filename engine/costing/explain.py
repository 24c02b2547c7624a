"""`explain` entries for the costs: for each headline figure its formula, the inputs it used and their source.

Inputs are stored as plain JSON values (money as its decimal string), like every other explain entry of the plan.
"""

from __future__ import annotations

from typing import Any

from engine.explain.wording import explain_entry
from engine.result.codec import encode
from engine.result.costs import CloudRow, Costs, OnpremSection
from engine.result.plan import ExplainEntry

from .cloud import RESERVED_YEARS
from .evaluation import Evaluation
from .money import r
from .providers import provider_name

__all__ = ["costs_explain"]


SPOT_FORMULA = (
    "instances x median-zone spot usd_per_hour x job_hours x (1 + overhead); overhead = C/tau + "
    "(tau + C)/(2M) + R/M, M = 1/(instances x lambda), lambda = -ln(1 - f)/730, tau = Daly"
)
SPOT_KEYS = (
    "band",
    "checkpoint_write_min",
    "restart_min",
    "job_mtbf_hours",
    "checkpoint_interval_hours",
    "overhead_fraction",
)


def _entry(formula: str, inputs: dict[str, Any], source: str) -> ExplainEntry:
    return explain_entry(formula, encode(inputs), source)


def _onprem(ev: Evaluation, on: OnpremSection) -> dict[str, ExplainEntry]:
    """The owned cluster's figures in the order the page shows them: buying and running it, its cost per GPU-hour
    and per job, and (when the hardware is priced) its net present value."""
    return {**_ownership_entries(ev, on), **_unit_cost_entries(ev, on), **_npv_entries(on)}


def _ownership_entries(ev: Evaluation, on: OnpremSection) -> dict[str, ExplainEntry]:
    """Capex (hardware and the lines beyond it), the first year's running costs, and the undiscounted TCO."""
    o, job, p = ev.onprem, ev.job, ev.params
    hw_source = (
        "every BOM line x its unit price (component price references, each with its source and date)"
        if o.coverage.basis == "bom"
        else "the cluster's systems x the system's price (component price references); no BOM in this plan"
    )
    extras = {f"{i.name}_usd": i.extended_price_usd for i in o.extras}
    return {
        "costs.onprem.capex_usd": _entry(
            "hardware + the capex lines beyond it (spares pool, installation, freight, sales/use tax, prepaid "
            "support, software licences; on an owned site also its electrical chain, cooling plant and building at "
            "IT kW x USD per kW, instead of colocation), each a BOM line of its own, so the BOM total equals capex",
            {"hardware_usd": on.hardware_usd, **extras, "coverage": o.coverage.basis},
            hw_source + "; the percentages are the named cost parameters (each with its public source in the cost "
            "parameters table)",
        ),
        "costs.onprem.opex_usd_per_year": _entry(
            "first year: facility_kw x 8760 x utilization x electricity_usd_per_kwh + it_kw x colo_usd_per_kw_month "
            "x 12 (0 on an owned site) + maintenance (0 while the prepaid support runs, then hardware x "
            "maintenance_percent_per_year / 100, the support contract's own rate and base; an owned site's lines "
            "instead x facility_upkeep_percent_per_year / "
            "100 from year 1) "
            "+ staff (staff_usd_per_year + gpus / staff_gpus_per_fte x staff_usd_per_fte_year) + capex x "
            "insurance_percent_per_year / 100",
            {
                "facility_kw": job.facility_kw,
                "it_kw": job.it_kw,
                "utilization": str(o.utilization),
                "electricity_usd_per_kwh": str(o.electricity_usd_per_kwh),
                "colo_usd_per_kw_month": str(p["colo_usd_per_kw_month"]),
                "maintenance_percent_per_year": str(p["maintenance_percent_per_year"]),
                "support_bundled_years": str(p["support_bundled_years"]),
                "staff_gpus_per_fte": str(p["staff_gpus_per_fte"]),
                "staff_usd_per_fte_year": str(p["staff_usd_per_fte_year"]),
                "insurance_percent_per_year": str(p["insurance_percent_per_year"]),
            },
            "EIA, Electric Power Monthly (industrial electricity prices); CBRE, North America Data Center Trends "
            "(colocation); BLS, Occupational Employment and Wage Statistics (wages); the cost parameters table gives "
            "each value's source and date; site figures given in the request override electricity and colocation",
        ),
        "costs.onprem.tco_usd": _entry(
            "capex + the running costs of each year of the horizon (escalated, nominal, no residual value)",
            {"capex_usd": on.capex_usd, "years": p.years},
            "the capex and each year's running costs as derived above (their sources), added up without discounting",
        ),
    }


def _unit_cost_entries(ev: Evaluation, on: OnpremSection) -> dict[str, ExplainEntry]:
    """The cost per GPU-hour (annuity capital charge plus levelised running costs), and the job's cost bought for
    it alone or charged on a shared cluster."""
    job, fin = ev.job, on.finance
    finance_inputs: dict[str, Any] = {}
    if fin is not None:
        finance_inputs = {
            "capital_charge_usd_per_year": fin.capital_charge_usd_per_year,
            "levelized_opex_usd_per_year": fin.levelized_opex_usd_per_year,
            "cost_of_capital": fin.cost_of_capital,
            "useful_life_years": fin.useful_life_years,
            "residual_value_usd": fin.residual_value_usd,
        }
    return {
        "costs.onprem.usd_per_gpu_hour": _entry(
            "(capital charge + levelised running costs) / (gpus x 8760 x utilization); capital charge = (capex - "
            "residual x (1 + r)^-n) x r / (1 - (1 + r)^-n), r = cost of capital, n = useful life",
            {**finance_inputs, "gpus": job.working_gpus, "utilization": str(ev.onprem.utilization)},
            "equivalent annual cost (Brealey, Myers and Allen, Principles of Corporate Finance); useful life from "
            "Amazon's 2024 Form 10-K; cost of capital and residual value as in the cost parameters table",
        ),
        "costs.onprem.job_usd": _entry(
            "bought for this job alone: capex + facility_kw x job_hours x electricity_usd_per_kwh + (colocation + "
            "maintenance + staff + insurance per year) x job_hours / 8760 - residual value x (1 + r)^-(job_hours / "
            "8760) (resold when the job ends)",
            {
                "capex_usd": on.capex_usd,
                "facility_kw": job.facility_kw,
                "job_hours": on.job_hours,
                "residual_value_usd": fin.residual_value_usd if fin else "not computed (no hardware price)",
            },
            "the plan's training days (or one year of serving)",
        ),
        "costs.onprem.job_usd_shared": _entry(
            "job cost on an owned cluster: job_gpus x job_hours x usd_per_gpu_hour (the annuity capital charge "
            "and levelised running costs per used GPU-hour)",
            {"job_gpus": job.job_gpus, "job_hours": on.job_hours, "usd_per_gpu_hour": on.usd_per_gpu_hour},
            "a shared cluster charges the job for the GPU-hours it uses",
        ),
    }


def _npv_entries(on: OnpremSection) -> dict[str, ExplainEntry]:
    """Owning's net present value over the horizon (none when the hardware is not priced, so no finance)."""
    fin = on.finance
    if fin is None:
        return {}
    return {
        "costs.onprem.finance.npv_usd": _entry(
            "capex + sum over the horizon of running costs_t x (1 + r)^-t - value at the horizon x (1 + r)^-H; the "
            "value falls in a straight line from the hardware cost to the residual over the useful life",
            {
                "capex_usd": on.capex_usd,
                "cost_of_capital": fin.cost_of_capital,
                "horizon_years": fin.horizon_years,
                "useful_life_years": fin.useful_life_years,
                "value_at_horizon_usd": fin.value_at_horizon_usd,
            },
            "net present value at the cost of capital (Brealey, Myers and Allen, Principles of Corporate Finance)",
        )
    }


def _cloud_row(row: CloudRow) -> ExplainEntry:
    inputs: dict[str, Any] = {
        "instances": row.instances,
        "usd_per_hour": row.usd_per_hour,
        "job_hours": row.job_hours,
        "gpus_needed": row.sized_on.gpus,
        "gpus_per_instance": row.gpus_per_instance,
    }
    formula = "instances x usd_per_hour x job_hours; instances = ceil(gpus_needed / gpus_per_instance)"
    if row.purchase in RESERVED_YEARS:
        formula = "instances x usd_per_hour (effective, upfront spread over the term) x commitment_hours"
        inputs["commitment_hours"] = row.commitment_hours
    elif row.purchase == "capacity_block":
        formula = "instances x usd_per_hour x block_days x 24 (shortest bookable duration covering the job)"
        inputs["block_days"] = row.block_days
    elif row.purchase == "spot" and row.spot is not None:
        formula = SPOT_FORMULA
        inputs["spot"] = {k: getattr(row.spot, k) for k in SPOT_KEYS}
    return _entry(formula, inputs, _cloud_source(row))


CONFIDENCE_WORDS = {
    "list_price": "a published list price",
    "quote": "a quote",
    "public_estimate": "a public estimate, not a list price",
    "assumption": "an assumption, not a published price",
}


def _cloud_source(row: CloudRow) -> str:
    """Where a cloud row's price came from, for a reader: provider, primary source, its date and how firm it is."""
    confidence = row.price_confidence or "list_price"
    firmness = CONFIDENCE_WORDS.get(confidence, confidence)
    date = row.price_observed_at[:10] if row.price_observed_at else "an unknown date"
    if row.price_source:
        return f"{provider_name(row.provider)}: {row.price_source}; price dated {date}; {firmness}"
    return (
        f"AWS prices dated {date}: the AWS Price List API (on-demand, reserved), EC2 spot price history and the "
        f"Spot Instance Advisor (spot), EC2 Capacity Blocks offerings (capacity blocks); {firmness}"
    )


def _comparison_and_carbon(ev: Evaluation, costs: Costs) -> dict[str, ExplainEntry]:
    job, p, comp, carbon, on = ev.job, ev.params, costs.comparison, costs.carbon, costs.onprem
    assert comp is not None and carbon is not None and on is not None
    ex = {
        "costs.comparison.cheapest": _entry(
            "min job_usd over the obtainable options: on-prem (bought, shared) and every available cloud row, "
            "each sized for the same work on its own hardware",
            {
                "cheapest": comp.cheapest.label if comp.cheapest else "none obtainable",
                "options": len(comp.options),
                "obtainable": sum(1 for o in comp.options if o.obtainable),
            },
            "the on-prem and cloud job costs derived above; the rules that keep an option out of the running are "
            "explained one by one, each with its public source",
        ),
        "costs.comparison.break_even": _entry(
            "u where capital charge + levelised fixed running costs + levelised energy at full use x u = "
            "gpus x work_ratio x 8760 x cloud $/GPU-hour x u (pay per use) or = gpus x work_ratio x 8760 x cloud "
            "$/GPU-hour (reserved); work_ratio = the cloud option's GPU-hours for this job / on-prem's (job GPUs x "
            "job hours), so both sides do the same work",
            {
                "gpus": job.working_gpus,
                "onprem_job_gpu_hours": r(job.job_gpus * ev.onprem.job_hours, 1),
                "years": p.years,
            },
            "each cloud option sized with the planner's own training search (or serving search) on its own "
            "hardware; spot uses its expected $/GPU-hour including interruption overhead",
        ),
        "costs.sensitivity": _entry(
            "each input moved alone to the low and the high end of the range of its price basis (quote, list "
            "price, public estimate, assumption); rows sorted by the swing of cloud - on-prem",
            {row.input: row.range_basis for row in costs.sensitivity.rows} if costs.sensitivity else {},
            "AACE International Recommended Practice 18R-97, Cost Estimate Classification System (2020)",
        ),
    }
    if carbon.onprem is not None:
        ex["costs.carbon.onprem.job_tco2e"] = _entry(
            "facility_kw x job_hours x grid g/kWh / 1e6",
            {
                "facility_kw": job.facility_kw,
                "job_hours": on.job_hours,
                "grid_gco2e_per_kwh": carbon.onprem.grid_gco2e_per_kwh,
            },
            carbon.onprem.source,
        )
    systems_kw = {s.system: s.systems_kw for s in job.sizings}
    for c in carbon.cloud:
        ex[f"costs.carbon.cloud.{c.region}.{c.sized_on}.job_tco2e"] = _entry(
            "systems_kw x cloud_pue x job_hours x grid g/kWh / 1e6",
            {
                "systems_kw": systems_kw[c.sized_on],
                "cloud_pue": c.cloud_pue,
                "grid_gco2e_per_kwh": c.grid_gco2e_per_kwh,
            },
            c.source or c.note,
        )
    return ex


def costs_explain(ev: Evaluation, costs: Costs) -> dict[str, ExplainEntry]:
    """Every `costs.*` explain entry, in the order on-prem, cloud rows, comparison, sensitivity, carbon."""
    assert costs.onprem is not None and costs.cloud is not None
    ex = _onprem(ev, costs.onprem)
    for row in costs.cloud:
        ex[f"costs.cloud.{row.region}.{row.instance_type}.{row.purchase}.job_usd"] = _cloud_row(row)
    ex.update(_comparison_and_carbon(ev, costs))
    return ex
