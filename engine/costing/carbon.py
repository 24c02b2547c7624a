"""Carbon, location-based: energy x grid intensity, for the on-prem job and year and each cloud region.

On-prem uses the plan's one facility power (every IT part x PUE); a cloud option replicates the GPU systems, so
every sized-on system (chosen or not) counts its GPU systems' kW (`Sizing.systems_kw`) x AWS's PUE.
"""

from __future__ import annotations

from engine.result.costs import CarbonCloud, CarbonOnprem, CarbonSection

from .evaluation import Evaluation
from .inputs import CostInputs
from .money import HOURS_PER_YEAR, D, r

__all__ = ["carbon"]

ONPREM_NOTE = "facility kW (IT at rated maximum x PUE) for the job's hours: an upper bound."
CLOUD_NOTE = (
    "power of the equivalent on-prem GPU systems at rated maximum (AWS's own network and storage are not counted) "
    "x AWS average PUE; location-based (AWS's market-based figures, which count its renewable purchases, are lower)."
)


def _onprem(ev: Evaluation, inputs: CostInputs) -> CarbonOnprem | None:
    site = inputs.carbon.get("site")
    if site is None:
        return None
    facility_kw, o = D(ev.job.facility_kw), ev.onprem
    job_kwh = facility_kw * D(o.job_hours)
    year_kwh = facility_kw * HOURS_PER_YEAR * o.utilization
    return CarbonOnprem(
        grid_gco2e_per_kwh=site.value,
        source=site.source,
        job_energy_mwh=r(float(job_kwh / 1000), 3),
        job_tco2e=r(float(job_kwh * site.value / 1_000_000), 3),
        energy_mwh_per_year=r(float(year_kwh / 1000), 3),
        tco2e_per_year=r(float(year_kwh * site.value / 1_000_000), 3),
        note=ONPREM_NOTE,
    )


def carbon(ev: Evaluation, inputs: CostInputs) -> CarbonSection:
    """One cloud entry per (region, sized-on system): the job's hours without spot's interruption overhead."""
    cloud_pue = ev.params["cloud_pue"]
    seen = set()
    cloud = []
    for priced in ev.rows:
        row = priced.row
        key = (row.region, row.sized_on.system)
        if key in seen:
            continue
        seen.add(key)
        intensity = inputs.carbon.get(row.region)
        sizing = next(s for s in ev.job.sizings if s.system == row.sized_on.system)
        hours = D(row.job_hours) if row.purchase != "spot" else D(sizing.days * 24)
        kwh = D(sizing.systems_kw) * cloud_pue * hours
        cloud.append(
            CarbonCloud(
                region=row.region,
                sized_on=sizing.system,
                gpu=sizing.gpu,
                cloud_pue=cloud_pue,
                grid_gco2e_per_kwh=None if intensity is None else intensity.value,
                source=None if intensity is None else intensity.source,
                job_energy_mwh=r(float(kwh / 1000), 3),
                job_tco2e=None if intensity is None else r(float(kwh * intensity.value / 1_000_000), 3),
                note=CLOUD_NOTE if intensity else "no sourced grid carbon intensity is recorded for this region",
            )
        )
    return CarbonSection(
        unit="t CO2e",
        method="location-based: energy x grid intensity",
        onprem=_onprem(ev, inputs),
        cloud=tuple(cloud),
    )
