"""Numbers and names as people read them: the one set of rules the page, the PDF and the compare table share.

Why here and not in each template: "$56.9M" on the page and "$56,925,851.00" in the PDF would read as two
answers. Money goes through the engine's `usd_text` (three significant figures, k/M/B), so the verdict sentence
the engine writes and every figure around it agree; other numbers keep thousands separators and a precision that
follows their size; field names become words (`step_time_s` -> "step time", unit "s"); nothing internal (None,
True/False, a raw dict, a field path) reaches the reader.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from planner.adapter import catalog_names, load_catalog, usd_text

__all__ = [
    "DASH",
    "UNIT_SUFFIXES",
    "device_short_name",
    "field_text",
    "figure_text",
    "figure_title",
    "human",
    "key_label",
    "key_unit",
    "money",
    "number",
    "power",
    "prose_words",
    "significant",
    "words",
]

DASH = "\u2013"
# Longest suffix first, so `tokens_per_s` reads "/s", not "s".
UNIT_SUFFIXES = {
    "_per_gpu_gib": "GiB/GPU",
    "_tflops_per_gpu": "TFLOP/s per GPU",
    "_usd_per_year": "USD/year",
    "_usd_per_gpu_hour": "USD/GPU-hour",
    "_per_s": "/s",
    "_gib": "GiB",
    "_tb": "TB",
    "_gbps": "GB/s",
    "_kw": "kW",
    "_mwh": "MWh",
    "_ms": "ms",
    "_us": "µs",
    "_days": "days",
    "_hours": "hours",
    "_usd": "USD",
    "_tflops": "TFLOP/s",
    "_kg": "kg",
    "_w": "W",
    "_s": "s",
    "_c": "°C",  # temperatures and lengths in assumption names: "air chilled water supply c" read as a word
    "_f": "°F",
    "_m": "m",
}
# Words a field name spells in lower case that a reader knows in another case.
_PROPER = {
    "gpu": "GPU",
    "gpus": "GPUs",
    "mfu": "MFU",
    "hfu": "HFU",
    "mbu": "MBU",
    "pue": "PUE",
    "tco": "TCO",
    "npv": "NPV",
    "bom": "BOM",
    "it": "IT",
    "kv": "KV",
    "ttft": "time to first token",
    "tpot": "time per output token",
    "tp": "TP",
    "pp": "PP",
    "dp": "DP",
    "ep": "EP",
    "etp": "expert TP",
    "cp": "CP",
    "zero": "ZeRO",
    "su": "SU",
    "oob": "out-of-band",
    "inband": "in-band",
    "onprem": "on-prem",
    "hbm": "HBM",
    "cdu": "CDU",
    "cdus": "CDUs",
    "rdhx": "rear-door heat exchanger",
    "gib": "GiB",
    "roce": "RoCE",
    "pdus": "PDUs",
    "mtbf": "MTBF",
    "usd": "USD",
    "tco2e": "t CO2e",
    "gco2e": "g CO2e",
}
# Figure paths whose generic reading is poor: the title a reader expects.
_TITLES = {
    "costs.verdict": "Verdict: build or rent",
    "costs.comparison.cheapest": "Cheapest obtainable option",
    "costs.comparison.break_even": "Break-even utilisation",
    "costs.time_to_capacity.onprem_start_days": "Time to capacity if built",
    "costs.comparison.obtainable.deadline": "Rule: finish by the deadline",
    "costs.comparison.obtainable.spot_fleet": "Rule: largest spot fleet one job can count on",
    "costs.comparison.obtainable.on_demand_fleet": "Rule: largest on-demand fleet one job can count on",
    "costs.comparison.obtainable.serving_on_spot": "Rule: no spot for production serving",
    "costs.comparison.obtainable.anomalous_price": "Rule: no implausibly cheap spot price",
    "selection.system": "Which system was chosen",
    "training.step_breakdown_s.activation_offload": "Activation copies to host memory, per step",
    "training.step_breakdown_s.context_parallel_comm": "Context-parallel exchange, per step",
    "cooling.method": "Cooling method",
}
_WORDISH = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
# One-word stored values that are abbreviations, not words (the racks headline read "3 racks ... rdhx").
_ONE_WORD = {"rdhx": "rear-door heat exchanger"}


def _as_decimal(value: Any) -> Any:
    """The shared first step of `money` and `number`: None stays None, a bool becomes its word (a string), a string
    that reads as a number becomes a Decimal and any other string is returned as it is (text, not a figure); numbers
    pass through. Callers print a string unchanged and format anything else."""
    if value is None:
        return None
    if isinstance(value, bool):
        return human(value)
    if isinstance(value, str):
        try:
            return Decimal(value)
        except InvalidOperation:
            return value
    return value


def money(value: Any) -> str:
    """Money for a person ($56.9M, $796k, $2.46); a dash for no value; text that is not a number unchanged."""
    parsed = _as_decimal(value)
    if parsed is None or parsed == "":
        return DASH
    if isinstance(parsed, str):
        return parsed
    return usd_text(parsed)


def number(value: Any) -> str:
    """1234567.891 -> '1,234,568'; 12.345 -> '12.3'; 0.4123 -> '0.412'; FLOP totals as 3.14e23."""
    value = _as_decimal(value)
    if value is None:
        return DASH
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        value = float(value)
    if not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    magnitude = abs(value)
    if magnitude >= 1e15:  # FLOP totals: digits past the third are noise to a reader
        mantissa, exponent = f"{value:.3e}".split("e")
        return f"{float(mantissa):.3g}e{int(exponent)}"
    if isinstance(value, int) or magnitude >= 1000 or float(value).is_integer():
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:,.1f}"
    return f"{value:.3g}"


def power(kw: Any) -> str:
    """A power in kW as people say it: '5.74 MW' from 1,000 kW up, else '812 kW' (three significant figures)."""
    if kw is None:
        return DASH
    kw = float(kw)
    return f"{significant(kw / 1000)} MW" if abs(float(f"{kw:.3g}")) >= 1000 else f"{significant(kw)} kW"


def significant(value: float, digits: int = 3) -> str:
    """`digits` significant figures, trailing zeros kept (4.1 -> '4.10'); whole figures beyond them stay."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    rounded = float(f"{value:.{digits}g}")
    whole = math.floor(math.log10(abs(rounded))) + 1 if rounded else 1
    return f"{rounded:,.{max(digits - whole, 0)}f}"


def words(value: str) -> str:
    """`air_containment` -> 'air containment'; `gpu_hours` -> 'GPU hours'; `rdhx` -> 'rear-door heat exchanger';
    other text unchanged."""
    if isinstance(value, str) and value in _ONE_WORD:
        return _ONE_WORD[value]
    if not isinstance(value, str) or not _WORDISH.match(value):
        return value
    return " ".join(_PROPER.get(part, part) for part in value.split("_"))


def key_unit(key: Any) -> str:
    """The unit a field name carries (design rule: units in names)."""
    text = str(key)
    if text in _KEY_UNITS:
        return _KEY_UNITS[text]
    for suffix, label in UNIT_SUFFIXES.items():
        if text.endswith(suffix):
            return label
    return ""


# Field names whose plain reading would be ambiguous beside other figures (the cluster's `racks` are its compute
# racks; the rack layout's total counts network and management racks too).
_KEY_LABELS = {
    "racks": "compute racks",
    "racks_total": "racks, all roles",
    "it_kw": "IT power (racks + optics in cables)",
    "pue": "PUE",
    # The stage tables' fields whose suffix rule reads wrongly ("GPU 3,836,092 hours", "Tokens 3,480,646 /s").
    "gpu_hours": "GPU-hours",
    "days": "days (expected whole run)",
    "days_ideal": "days, steady state",
    "days_steady_state": "days, steady state",
    # the layout's two offloads: optimizer state vs activations ("offload none" did not say of what)
    "offload": "optimizer offload",
    "activation_offload_layers": "layers' activations in host memory",
    "activation_offload": "activation copies to host (exposed)",
    "optimizer_offload": "optimizer offload copies (exposed)",
    "host_overflow": "offloaded state the host cannot hold",
    "cp_comm": "context-parallel exchange",
    "cp_comm_windowed": "context-parallel exchange of windowed layers",
    "ep_overlap": "expert all-to-alls under another micro-batch",
    "context_parallel_comm": "context-parallel exchange (exposed)",
    "tokens_per_s": "throughput",
    "model_tflops_per_gpu": "model FLOP/s achieved",
    "hardware_tflops_per_gpu": "hardware FLOP/s achieved",
    "flops_per_token": "FLOPs per token",
    "hardware_flops_per_token": "hardware FLOPs per token",
    "total_flops": "total FLOPs",
    "usable_feed_kw": "usable power per feed",
    "feeds": "power feeds",
    "worst_feed_after_failure_kw": "worst feed after a feed fails",
    "airflow_cfm": "airflow",
    "coolant_lpm": "coolant flow",
    "tons": "cooling (refrigeration)",
    "cdu_part": "CDU model",
    # a serving plan's fields ("KV bytes per token 163,840", "Demand tokens 100,000 /s" had no or half a unit)
    "kv_bytes_per_token": "KV cache per token",
    "demand_tokens_per_s": "demand",
    "tokens_per_s_per_gpu": "throughput per GPU",
    "capacity_requests_per_s_per_replica": "capacity per replica",
    # a unit in the middle of a name ("KV cache GiB per replica 566.0" read the unit as part of the label)
    "kv_cache_gib_per_replica": "KV cache allocated per replica",
    "kv_cache_used_gib_per_replica": "KV cache in use per replica at the planned load",
    "weights_gib_per_gpu": "weights per GPU",
    # a serving GPU's memory: what it holds (the breakdown's total, the cache as allocated) and what the planned
    # load fills of the cache ("Memory 37.4 GiB/GPU" beside a breakdown of 80 GiB read as a contradiction)
    "memory_allocated_gib_per_gpu": "memory allocated per GPU (the breakdown's total)",
    "kv_cache_in_use_gib_per_gpu": "KV cache in use per GPU at the planned load",
    # counts of sequences ("Batch 69", "Global batch sequences 512": what is counted goes beside the number); a
    # serving plan's per replica and whole fleet ("Batch in flight 41" on 2 replicas read as the fleet's)
    "batch": "batch in flight per replica",
    "batch_fleet": "batch in flight, whole fleet",
    "concurrency_fleet": "concurrency, whole fleet",
    "global_batch_sequences": "global batch",
    "global_batch_sequences_requested": "global batch requested",
}
# Units a field's suffix does not spell, or spells as a reader would not.
_KEY_UNITS = {
    "gpu_hours": "GPU-hours",
    "tokens_per_s": "tokens/s",
    "airflow_cfm": "CFM",
    "coolant_lpm": "L/min",
    "tons": "tons",
    "kv_bytes_per_token": "bytes",
    "demand_tokens_per_s": "tokens/s",
    "tokens_per_s_per_gpu": "tokens/s",
    "capacity_requests_per_s_per_replica": "requests/s",
    "kv_cache_gib_per_replica": "GiB",
    "kv_cache_used_gib_per_replica": "GiB",
    "weights_gib_per_gpu": "GiB",
    "memory_allocated_gib_per_gpu": "GiB",
    "kv_cache_in_use_gib_per_gpu": "GiB",
    "batch": "sequences",
    "batch_fleet": "sequences",
    "concurrency_fleet": "sequences",
    "batch_per_replica": "sequences",
    "capacity_batch_per_replica": "sequences",
    "concurrency_per_replica": "sequences",
    "max_sequences_by_memory": "sequences",
    "global_batch_sequences": "sequences",
    "global_batch_sequences_requested": "sequences",
}
# Fields stored as fractions (0.364) that people read as percentages (36.4 %).
_FRACTION_KEYS = {"mfu", "hfu", "effective_mbu", "utilization", "utilization_target"}


def key_label(key: Any) -> str:
    """`step_time_s` -> 'step time' (the unit is shown beside the value); `tp` -> 'TP'."""
    text = str(key)
    if text in _KEY_LABELS:
        return _KEY_LABELS[text]
    for suffix in UNIT_SUFFIXES:
        if text.endswith(suffix) and len(text) > len(suffix):
            text = text[: -len(suffix)]
            break
    return " ".join(_PROPER.get(part, part) for part in text.split("_"))


def figure_title(path: str, known: Mapping[str, str] | None = None) -> str:
    """An explain entry's figure path as a title: the headline label when there is one, else its last parts in
    words ("costs.cloud.us-east-1.p5.48xlarge.spot.job_usd" -> "Job cost: p5.48xlarge spot, us-east-1")."""
    if known and path in known:
        return known[path]
    if path in _TITLES:
        return _TITLES[path]
    parts = path.split(".")
    if parts[:2] == ["costs", "cloud"] and len(parts) >= 5:
        region, field = parts[2], parts[-1]
        purchase, instance = parts[-2], ".".join(parts[3:-2])
        name = key_label(field).capitalize() + (" cost" if key_unit(field) == "USD" else "")
        return f"{name}: {instance} {words(purchase)}, {region}"
    tail = [p for p in parts if p not in {"costs", "comparison", "onprem"}][-2:] or parts[-1:]
    text = " · ".join(key_label(p) for p in tail)
    unit = key_unit(parts[-1])
    title = text[:1].upper() + text[1:]
    if unit == "USD":
        return f"{title} cost" if not title.endswith("cost") else title
    return f"{title} ({unit})" if unit else title


def catalog_name(value: Any) -> Any:
    """A catalog id of a system or GPU as its maker names it ("dgx-b200" -> "NVIDIA DGX B200"); anything else
    unchanged. A plan stores ids; a reader knows products."""
    return catalog_names().get(value, value) if isinstance(value, str) else value


def request_value(value: Any, path: str) -> Any:
    """A request input as a reader knows it: a model preset by the model's name ("llama-3-70b" -> "Meta Llama 3
    70B"), a system or GPU by its product name; anything else unchanged (the compare page's inputs)."""
    if path == "model.preset" and isinstance(value, str):
        preset = load_catalog().models.get(value)
        return preset.name if preset is not None else value
    return catalog_name(value)


def products_named(text: Any) -> Any:
    """Prose from the engine with each catalog id in it named ("The largest gb200-nvl72 cluster ..." -> "The
    largest NVIDIA GB200 NVL72 rack cluster ..."); a whole id only, never part of a longer token."""
    if not isinstance(text, str) or not text:
        return text
    names = catalog_names()
    return _id_pattern(tuple(names)).sub(lambda match: names[match.group(0)], text)


@functools.cache
def _id_pattern(ids: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    return re.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w-])")


def human(value: Any, depth: int = 0) -> str:
    """Any stored value as text for a person: no None, True/False, quotes or braces, no catalog ids."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float | Decimal):
        return number(value)
    if isinstance(value, str):
        named = catalog_name(value)
        return named if named is not value else words(value)
    if isinstance(value, Mapping):
        if depth > 1:
            return f"{len(value)} items"
        pairs = (
            f"{catalog_name(k) if k in catalog_names() else key_label(k)} {human(v, depth + 1)}{_spaced(key_unit(k))}"
            for k, v in value.items()
        )
        return "; ".join(pairs) or DASH
    if isinstance(value, Sequence):
        shown = [human(v, depth + 1) for v in list(value)[:8]]
        more = f" and {len(value) - 8} more" if len(value) > 8 else ""
        return (", ".join(shown) + more) or DASH
    return str(value)


def _spaced(unit: str) -> str:
    return f" {unit}" if unit else ""


def field_text(key: Any, value: Any) -> str:
    """A stored field's value with its unit, by its name: money as money ($172M, never '171565402.56 USD'), kW as
    kW or MW, fractions named as such as percentages (MFU 36.4 %), anything else as `human` plus the unit."""
    text = str(key)
    unit = key_unit(text)
    number_like = isinstance(value, int | float | Decimal | str) and not isinstance(value, bool)
    if number_like and unit == "USD":
        return money(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        if unit == "kW":
            return power(value)
        if text in _FRACTION_KEYS or text.endswith("_fraction"):
            return f"{value * 100:.1f} %"
    return f"{human(value)}{_spaced(unit)}"


def figure_text(value: Any, unit: str) -> str:
    """A headline figure (`plan_view.HEADLINES`) as the compare table shows it, by the headline's unit: money as
    money, kW as kW or MW, a p10-p90 range as "61.8 - 98.5", a name in words or as its product; never a Python
    repr or an eleven-digit dollar figure."""
    if value is None:
        return DASH
    if hasattr(value, "p10") and hasattr(value, "p90"):  # the typed range (FloatPercentiles)
        return f"{number(value.p10)} - {number(value.p90)}"
    if unit == "USD":
        return money(value)
    if unit == "kW" and isinstance(value, int | float) and not isinstance(value, bool):
        return power(value)
    return human(value)


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def device_short_name(device_id: str, label: str, part_number: str | None = None) -> str:
    """What a rack elevation prints in a device too narrow for its full name: the model as its maker prints it in
    that name ("qm9700" -> "QM9700", "ddn-ai400x2" -> "AI400X2"), else the part number the BOM orders
    ("mgmt-server-2s" -> "PowerEdge R760"); the catalog id only when neither is known."""
    wanted = _alnum(device_id)
    tokens = [t for t in re.split(r"[\s(),]+", label or "") if t]
    spans = [" ".join(tokens[i:j]) for i in range(len(tokens)) for j in range(i + 1, min(i + 3, len(tokens)) + 1)]
    found = [s for s in spans if len(_alnum(s)) >= 4 and _alnum(s) in wanted and re.search(r"\d", s)]
    if found:
        return max(found, key=lambda s: len(_alnum(s)))
    return part_number or device_id


def prose_words(text: Any) -> Any:
    """Engine prose that names its enums ("public_estimate range -15 %/+20 %") with each snake_case word in words
    ("public estimate range ..."); for short labels only, not sources, which may cite an API by its own name."""
    if not isinstance(text, str):
        return text
    return re.sub(r"\b[a-z]+(?:_[a-z0-9]+)+\b", lambda match: words(match.group(0)), text)


def price_warning_items(warnings: Any, headlines: Any) -> list[dict[str, str]]:
    """Each price warning as {headline, text}: the engine's short headline beside its full sentence. A plan stored
    before warnings had headlines gets the sentence's opening words up to its list ("AWS prices older than 180
    days"), so the page and the PDF read alike for old and new plans."""
    texts = list(warnings or ())
    shorts = list(headlines or ())
    if len(shorts) != len(texts):
        shorts = [text.split(" (", 1)[0].split(":", 1)[0] for text in texts]
    return [{"headline": short, "text": text} for short, text in zip(shorts, texts, strict=True)]
