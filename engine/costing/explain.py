"""`explain` entries for the costs: for each headline figure its formula, the inputs it used and their source.

Inputs are stored as plain JSON values (money as its decimal string), like every other explain entry of the plan.
"""

from __future__ import annotations

from typing import Any

from engine.result.codec import encode
from engine.result.costs import CloudRow, Costs, OnpremSection
from engine.result.plan import ExplainEntry

from .cloud import RESERVED_YEARS
from .evaluation import Evaluation
from .money import r
from .providers import provider_name
from .sensitivity import SENSITIVITY_STEP

__all__ = ["costs_explain"]

SRC_PARAMS = "fixtures/prices/parameters.json (see costs.parameters for each value's source)"
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
    return ExplainEntry(formula=formula, inputs=encode(inputs), source=source)


def _onprem(ev: Evaluation, on: OnpremSection) -> dict[str, ExplainEntry]:
    o, job, p = ev.onprem, ev.job, ev.params
    hw_source = (
        "BOM lines x fixtures/prices/components.json"
        if o.coverage.basis == "bom"
        else "cluster.systems x system price (fixtures/prices/components.json); no BOM in this plan"
    )
    utilization = str(o.utilization)
    return {
        "costs.onprem.capex_usd": _entry(
            "hardware + hardware x install_integration_percent / 100",
            {
                "hardware_usd": on.hardware_usd,
                "install_integration_percent": str(p["install_integration_percent"]),
                "coverage": o.coverage.basis,
            },
            hw_source,
        ),
        "costs.onprem.opex_usd_per_year": _entry(
            "facility_kw x 8760 x utilization x electricity_usd_per_kwh + it_kw x colo_usd_per_kw_month x "
            "12 + capex x maintenance_percent_per_year / 100 + staff_usd_per_year",
            {
                "facility_kw": job.facility_kw,
                "it_kw": job.it_kw,
                "utilization": utilization,
                "electricity_usd_per_kwh": str(o.electricity_usd_per_kwh),
                "colo_usd_per_kw_month": str(p["colo_usd_per_kw_month"]),
                "maintenance_percent_per_year": str(p["maintenance_percent_per_year"]),
                "staff_usd_per_year": str(p["staff_usd_per_year"]),
            },
            SRC_PARAMS + "; request site block overrides electricity and colocation",
        ),
        "costs.onprem.tco_usd": _entry(
            "capex + years x opex_per_year",
            {"capex_usd": on.capex_usd, "opex_usd_per_year": on.opex_usd_per_year, "years": p.years},
            "request pricing.years",
        ),
        "costs.onprem.usd_per_gpu_hour": _entry(
            "tco / (gpus x 8760 x utilization x years)",
            {"tco_usd": on.tco_usd, "gpus": job.cluster_gpus, "utilization": utilization, "years": p.years},
            SRC_PARAMS,
        ),
        "costs.onprem.job_usd": _entry(
            "capex + facility_kw x job_hours x electricity_usd_per_kwh + (colocation + maintenance + "
            "staff per year) x job_hours / 8760  (bought for this job; no resale value counted)",
            {"capex_usd": on.capex_usd, "facility_kw": job.facility_kw, "job_hours": on.job_hours},
            "plan training.days (or one year of serving)",
        ),
        "costs.onprem.job_usd_shared": _entry(
            "job_gpus x job_hours x usd_per_gpu_hour",
            {"job_gpus": job.job_gpus, "job_hours": on.job_hours, "usd_per_gpu_hour": on.usd_per_gpu_hour},
            "a shared cluster charges the job for the GPU-hours it uses",
        ),
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
            "the on-prem and cloud figures of this plan; the obtainability rules under costs.comparison.obtainable",
        ),
        "costs.comparison.break_even": _entry(
            "u where capex/years + colocation + maintenance + staff + facility_kw x 8760 x u x $/kWh = "
            "gpus x work_ratio x 8760 x cloud $/GPU-hour x u (pay per use) or = gpus x work_ratio x 8760 x cloud "
            "$/GPU-hour (reserved); work_ratio = the cloud option's GPU-hours for this job / on-prem's (job GPUs x "
            "job hours), so both sides do the same work",
            {
                "gpus": job.cluster_gpus,
                "onprem_job_gpu_hours": r(job.job_gpus * ev.onprem.job_hours, 1),
                "years": p.years,
            },
            "each cloud option sized with the planner's own training search (or serving search) on its own "
            "hardware; spot uses its expected $/GPU-hour including interruption overhead",
        ),
        "costs.sensitivity": _entry(
            "each input moved by -20 % and +20 % alone; rows sorted by the swing of cloud - on-prem",
            {"step": SENSITIVITY_STEP},
            "recomputed with the same prices",
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
