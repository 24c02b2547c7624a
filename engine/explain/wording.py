"""The words an explain entry shows for the names its formula is written in.

Why one table: the engine's formulas are written the way engineers read them, in the names of the fields and
named assumptions they use (`checkpoints_retained x checkpoint_tb`), but the people who read a plan are buyers,
not the code's authors: the page, the PDF and the API show "checkpoints kept x checkpoint size". Every formula and
every text input of an explain entry passes through `in_words` once, where the entry is made, so the same name
reads the same everywhere. The table is explicit on purpose: a name that is not listed is left as it is, and the
golden plans' wording test (tests/golden/test_user_text.py) fails on it, so a new formula gets its words written by
a person, not guessed. A named assumption keeps its key only in the plan's assumption list, where a user can
override it; here it reads as words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engine.result.plan import ExplainEntry

__all__ = ["TERMS", "explain_entry", "in_words", "inputs_in_words"]

# name -> words. Field names, formula variables, named assumptions and cost parameters, and request paths.
TERMS: dict[str, str] = {
    # training sizing
    "activations_per_layer": "activation memory per layer",
    "body_stage_time": "a middle stage's time",
    "compute_params_active": "active parameters",
    "days_ideal": "the steady-state days",
    "flops_per_token": "FLOPs per token",
    "gemm_efficiency": "GEMM efficiency",
    "global_batch_tokens": "the global batch in tokens",
    "job_mtbf": "the job's mean time between failures",
    "micro_batch": "micro-batch size",
    "micro_batches": "micro-batches per step",
    "params_per_gpu": "parameters per GPU",
    "peak_tflops_per_gpu": "the GPU's peak TFLOP/s",
    "reserve_fraction": "the framework reserve share",
    "seq_len": "sequence length",
    "stage_time": "stage time",
    "step_time_s": "step time (s)",
    "tokens_per_s": "tokens per second",
    "tokens_per_step": "tokens per step",
    "elastic_whole_job_failure_fraction": "the share of failures elastic recovery cannot absorb",
    "goodput_target": "the goodput target",
    # serving
    "batch_cap": "the batch cap",
    "decode_mbu": "the decode memory-bandwidth utilisation",
    "decode_step_overhead_ms": "the decode step overhead (ms)",
    "gpus_per_replica": "GPUs per replica",
    "head_dim": "head size",
    "inference_allreduce_latency_us": "the all-reduce latency (µs)",
    "inference_memory_utilization": "the usable share of GPU memory",
    "kv_bytes_per_token": "KV-cache bytes per token",
    "kv_cache_bytes_per_element": "KV-cache bytes per element",
    "kv_heads": "KV heads",
    "max_batch_per_replica": "the largest batch per replica",
    "output_tokens": "output tokens",
    "prefill_chunk_tokens": "the prefill chunk (tokens)",
    "prefill_half_mfu_tokens": "the prompt length at half the prefill MFU",
    "prefill_mfu": "the prefill MFU",
    "requests_per_s": "requests per second",
    "serving_utilization_target": "the serving utilisation target",
    "weights_read": "weight bytes read",
    # cluster, fabric, storage
    "compute_upper_oversubscription": "the spine-to-core oversubscription",
    "gpus_per_system": "GPUs per system",
    "job_gpus": "the job's GPUs",
    "su_systems": "systems per scalable unit",
    "systems_per_rack": "systems per rack",
    "checkpoint_async_write_fraction": "the share of the checkpoint interval a background write may take",
    "checkpoint_tb": "checkpoint size (TB)",
    "checkpoints_retained": "checkpoints kept",
    "dataset_bytes_per_token": "data set bytes per token",
    "dataset_epochs": "passes over the data",
    "storage_headroom_fraction": "the storage headroom",
    "storage_read_gbps_per_su": "the read guidance per scalable unit (GB/s)",
    "storage_write_to_read_ratio": "the write-to-read ratio",
    # racks, campus, cooling, power, plant
    "building_pitch_m": "the distance between buildings (m)",
    "cable_slack_m": "the cable slack (m)",
    "hall_pitch_m": "the distance between halls (m)",
    "halls_per_building": "halls per building",
    "row_pitch_m": "the row pitch (m)",
    "air_containment": "air with aisle containment",
    "air_delta_t_f": "the air temperature rise (F)",
    "cdu_max_units": "the CDU limit (working units)",
    "cdu_redundant_units": "the redundant CDUs",
    "cooling_air_max_kw": "the room-air limit per rack (kW)",
    "cooling_containment_max_kw": "the containment limit per rack (kW)",
    "cooling_rdhx_max_kw": "the rear-door limit per rack (kW)",
    "liquid_delta_t_k": "the coolant temperature rise (K)",
    "liquid_kw": "liquid-cooled kW",
    "liquid_residual_air_fraction": "the share of a liquid-cooled system's heat left to air",
    "it_kw": "IT kW",
    "facility_kw": "facility kW",
    "facility_mw": "facility MW",
    "systems_kw": "the systems' kW",
    "pue_air": "the PUE of room-air cooling",
    "pue_air_containment": "the PUE of contained-air cooling",
    "pue_liquid": "the PUE of liquid cooling",
    "pue_rdhx": "the PUE of rear-door cooling",
    "air_chilled_water_supply_c": "the chilled-water supply temperature (C)",
    "dry_cooler_approach_k": "the dry-cooler approach (K)",
    "electrical_redundancy_block_units": "working units per redundant unit",
    "generator_facility_fraction": "the share of facility power on generators",
    "generator_unit_kw": "the generator rating (kW)",
    "liquid_facility_supply_c": "the facility-water supply temperature (C)",
    "mv_lv_transformer_mva": "the MV/LV transformer rating (MVA)",
    "mv_service_max_mva": "the largest medium-voltage service (MVA)",
    "site_design_ambient_c": "the site's design ambient temperature (C)",
    "substation_transformer_mva": "the substation transformer rating (MVA)",
    "ups_it_fraction": "the share of IT power on UPS",
    "ups_module_kw": "the UPS module rating (kW)",
    "utility_feed_mva": "the utility feed rating (MVA)",
    "utility_feeds_redundant": "the redundant utility feeds",
    # costs
    "block_days": "days booked",
    "build_days": "build days",
    "burn_in_days": "burn-in days",
    "cloud_pue": "the cloud's PUE",
    "colo_usd_per_kw_month": "colocation $ per kW-month",
    "commitment_hours": "the hours of the term",
    "costs_t": "costs in year t",
    "deadline_days": "the deadline (days)",
    "electricity_usd_per_kwh": "the electricity price ($/kWh)",
    "facility_upkeep_percent_per_year": "facility upkeep (% a year)",
    "finish_days_p90": (
        "the finish the deadline judges (days: the p50 whole run, spot with its interruptions at their p90; every "
        "option at its p90 when the deadline is to be met at p90)"
    ),
    "gpus_needed": "GPUs needed",
    "gpus_per_instance": "GPUs per instance",
    "insurance_percent_per_year": "insurance (% a year)",
    "job_hours": "job hours",
    "job_usd": "the job cost",
    "lead_time_gpu_servers_days": "the GPU-server lead time",
    "lead_time_network_days": "the network lead time",
    "lead_time_rack_scale_days": "the rack-scale system lead time",
    "list_price": "list price",
    "maintenance_percent_per_year": "maintenance (% a year)",
    "on_demand_fleet_max_instances": "the largest on-demand fleet (instances)",
    "onprem_start_days": "the on-prem start (days)",
    "public_estimate": "public estimate",
    "spot_fleet_max_instances": "the largest spot fleet (instances)",
    "staff_gpus_per_fte": "GPUs per staff member",
    "staff_usd_per_fte_year": "the cost of a staff member a year",
    "staff_usd_per_year": "staff cost a year",
    "start_days": "the start (days)",
    "system_usd": "the system price",
    "systems_only": "GPU systems only",
    "usd_per_gpu_hour": "$ per GPU-hour",
    "usd_per_hour": "$ per instance-hour",
    "work_ratio": "the work ratio",
    # request fields and plan paths
    "costs.comparison.options": "the options table",
    "site.pue": "the site's PUE",
    "training.checkpointing": "the checkpointing option",
    "training.global_batch_tokens": "the requested global batch",
    "training.gpus": "the requested GPU count",
}

# A name as the test finds one: snake_case or a dotted path, never part of a longer token (p5.48xlarge, gd-8xh100).
_NAME = re.compile(r"(?<![\w.-])[a-z][a-z0-9_]*(?:[_.][a-z0-9_]+)+(?![\w-])")


def in_words(text: str) -> str:
    """`text` with every name of `TERMS` in words; other names left as they are (the wording test finds them)."""
    return _NAME.sub(lambda match: TERMS.get(match.group(0), match.group(0)), text)


def inputs_in_words(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """An explain entry's inputs with each text value in words (keys are field names the outputs label; numbers
    and structures unchanged)."""
    return {key: _value_in_words(value) for key, value in inputs.items()}


def _value_in_words(value: Any) -> Any:
    if isinstance(value, str):
        return in_words(value)
    if isinstance(value, Mapping):
        return {k: _value_in_words(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_value_in_words(v) for v in value)
    return value


def explain_entry(formula: str, inputs: Mapping[str, Any], source: str) -> ExplainEntry:
    """An explain entry as a reader gets it: its formula and text inputs in words, its source as cited."""
    return ExplainEntry(formula=in_words(formula), inputs=inputs_in_words(inputs), source=source)
