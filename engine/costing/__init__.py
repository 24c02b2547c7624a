"""Costing: build or rent. Prices a plan on-prem (capex, opex, TCO) and in the cloud (AWS, Azure, Google Cloud,
neoclouds: every purchase option), compares them, and adds carbon. Pure Python (no Django, boto3 or network).

Modules, one concern each, in the order a plan is priced:
money (the one rounding rule), inputs (price dataclasses; `cost_job_from_result`, the only reader of the plan),
parameters (named parameters with overrides), onprem (hardware, the extended-price rule, capex/opex/TCO),
spot (interruptions, Daly interval, overhead), cloud (rows per region x type x purchase option), comparison
(options, cheapest, break-even), evaluation (one pass at given scales), series (cumulative cost), sensitivity,
carbon, explain, result (`CostResult`) and price_plan (`plan_costs`, `selection_price_data`). The sections they
build are the typed `costs` types of engine/result/costs.py.
"""

from .cloud import (
    CAPACITY_BLOCK_MAX_DAYS,
    CAPACITY_BLOCK_MAX_INSTANCES,
    CAPACITY_BLOCK_MAX_INSTANCES_PER_BLOCK,
    PURCHASE_ORDER,
    capacity_block_days,
)
from .inputs import (
    CloudPrice,
    CostInputs,
    CostJob,
    CostParameter,
    PartPrice,
    RequestTerms,
    Scales,
    Sizing,
    SpotBand,
    cost_job_from_result,
    plan_request,
    request_overrides,
    request_terms,
)
from .money import cents, rate, usd
from .onprem import OnpremCosts, extended_price
from .price_plan import plan_costs, selection_price_data
from .providers import PROVIDER_NAMES, provider_name
from .result import CostResult
from .spot import (
    SPOT_AT_ON_DEMAND_RATIO,
    SPOT_BAND_FRACTIONS,
    UNLISTED_SPOT_BAND,
    checkpoint_overhead_fraction,
    daly_interval_hours,
    interruption_rate_per_instance_hour,
    job_mtbf_hours,
    percentile,
    spot_net_saving,
    young_interval_hours,
)

__all__ = [
    "CAPACITY_BLOCK_MAX_DAYS",
    "CAPACITY_BLOCK_MAX_INSTANCES",
    "CAPACITY_BLOCK_MAX_INSTANCES_PER_BLOCK",
    "PROVIDER_NAMES",
    "PURCHASE_ORDER",
    "SPOT_AT_ON_DEMAND_RATIO",
    "SPOT_BAND_FRACTIONS",
    "UNLISTED_SPOT_BAND",
    "CloudPrice",
    "CostInputs",
    "CostJob",
    "CostParameter",
    "CostResult",
    "OnpremCosts",
    "PartPrice",
    "RequestTerms",
    "Scales",
    "Sizing",
    "SpotBand",
    "capacity_block_days",
    "cents",
    "checkpoint_overhead_fraction",
    "cost_job_from_result",
    "daly_interval_hours",
    "extended_price",
    "interruption_rate_per_instance_hour",
    "job_mtbf_hours",
    "percentile",
    "plan_costs",
    "plan_request",
    "provider_name",
    "rate",
    "request_overrides",
    "request_terms",
    "selection_price_data",
    "spot_net_saving",
    "usd",
    "young_interval_hours",
]
