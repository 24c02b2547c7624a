"""The plan form: a few common fields, or a whole request as JSON.

The form does no checking of its own beyond parsing text: it builds the request dict and hands
it to the one request validator (engine), then puts each field error back on the form
field it belongs to, so the browser, the API and the command report the same problems.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django import forms

from engine import RequestInvalid, load_catalog

from .adapter import request_validate
from .choices import Workload
from .presenters import lookup

# form field -> request path
FIELD_PATHS: dict[str, str] = {
    "name": "name",
    "workload": "workload",
    "model_preset": "model.preset",
    "training_tokens": "training.tokens",
    "training_deadline_days": "training.deadline_days",
    "training_gpus": "training.gpus",
    "training_precision": "training.precision",
    "inference_requests_per_s": "inference.requests_per_s",
    "inference_prompt_tokens": "inference.prompt_tokens",
    "inference_output_tokens": "inference.output_tokens",
    "inference_ttft_ms": "inference.ttft_ms",
    "inference_tpot_ms": "inference.tpot_ms",
    "inference_precision": "inference.precision",
    "hardware_system": "hardware.system",
    # Advanced (folded away in the page): every other field of the request.
    "training_global_batch_tokens": "training.global_batch_tokens",
    "training_tp": "training.parallelism.tp",
    "training_pp": "training.parallelism.pp",
    "training_dp": "training.parallelism.dp",
    "training_micro_batch": "training.parallelism.micro_batch",
    "training_ep": "training.parallelism.ep",
    "training_recompute": "training.parallelism.recompute",
    "inference_tp": "inference.parallelism.tp",
    "inference_pp": "inference.parallelism.pp",
    "hardware_fabric": "hardware.fabric",
    "hardware_rack_kw": "hardware.rack_kw",
    "hardware_cooling": "hardware.cooling",
    "site_pue": "site.pue",
    "site_electricity_usd_per_kwh": "site.electricity_usd_per_kwh",
    "site_colo_usd_per_kw_month": "site.colo_usd_per_kw_month",
    "pricing_years": "pricing.years",
    "pricing_regions": "pricing.regions",
}
# Fields whose text goes through as text (choices), and the one that is a list.
TEXT_FIELDS = {"training_precision", "inference_precision", "training_recompute", "hardware_fabric",
               "hardware_cooling", "hardware_system", "model_preset", "workload", "name"}
LIST_FIELDS = {"pricing_regions"}
PATH_FIELDS = {path: field for field, path in FIELD_PATHS.items()}
SECTION_OF_FIELD = {"training": Workload.TRAINING, "inference": Workload.INFERENCE}


def _number_or_text(text: str) -> Any:
    """Turn typed text into an int or float when it is one; otherwise keep the text.

    Text that is not a number is passed on unchanged so the validator names the field in its
    own words ("training.tokens must be a number"), as it does for the API.
    """
    text = text.strip().replace(",", "").replace("_", "")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def _catalog_choices(kind: str, blank: tuple[str, str] | None = None) -> list[tuple[str, str]]:
    records = getattr(load_catalog(), kind)
    choices = [(key, getattr(record, "name", key) or key) for key, record in sorted(records.items())]
    return ([blank] if blank else []) + choices


def _leaf_paths(data: Any, prefix: str = "") -> list[str]:
    if isinstance(data, dict) and data:
        return [path for key, value in data.items() for path in _leaf_paths(value, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


def initial_from_request(request: dict[str, Any], *, name: str) -> dict[str, Any]:
    """Form values that reproduce a stored request ("duplicate and edit").

    Requests the fields can express fill those fields; anything richer (explicit model shapes,
    assumptions, price overrides...) goes into the JSON box whole, so nothing is lost.
    """
    initial: dict[str, Any] = {"name": name, "workload": request.get("workload")}
    if any(path not in PATH_FIELDS for path in _leaf_paths(request)):
        # The JSON box wins on submit, so filling the fields too would invite edits that are ignored.
        initial["request_json"] = json.dumps(request, indent=2)
        return initial
    for field, path in FIELD_PATHS.items():
        value = lookup(request, path)
        if value is not None and field != "name":
            initial[field] = ", ".join(map(str, value)) if isinstance(value, list) else value
    return initial


class PlanForm(forms.Form):
    name = forms.CharField(max_length=200, required=False, help_text="Optional; named after the model when empty.")
    workload = forms.ChoiceField(choices=Workload.choices, initial=Workload.TRAINING)
    model_preset = forms.ChoiceField(label="Model", choices=())
    training_tokens = forms.CharField(label="Tokens to train", required=False, initial="15e12")
    training_deadline_days = forms.CharField(label="Deadline (days)", required=False, initial="90")
    training_gpus = forms.CharField(label="or fixed GPU count", required=False)
    training_precision = forms.ChoiceField(choices=[("bf16", "BF16"), ("fp8", "FP8")], initial="bf16")
    inference_requests_per_s = forms.CharField(label="Requests / s", required=False, initial="10")
    inference_prompt_tokens = forms.CharField(label="Prompt tokens", required=False, initial="1000")
    inference_output_tokens = forms.CharField(label="Output tokens", required=False, initial="250")
    inference_ttft_ms = forms.CharField(label="TTFT target (ms)", required=False, initial="500")
    inference_tpot_ms = forms.CharField(label="TPOT target (ms)", required=False, initial="50")
    inference_precision = forms.ChoiceField(
        choices=[(p, p.upper()) for p in ("bf16", "fp8", "int8", "int4", "fp4")], initial="bf16"
    )
    hardware_system = forms.ChoiceField(label="System", choices=())
    # Advanced fields: blank means the engine's documented default.
    training_global_batch_tokens = forms.CharField(label="Global batch (tokens)", required=False,
                                                   help_text="Default 4,194,304 (4M tokens).")
    training_tp = forms.CharField(label="Pin tensor parallel", required=False, help_text="Blank: searched.")
    training_pp = forms.CharField(label="Pin pipeline parallel", required=False, help_text="Blank: searched.")
    training_dp = forms.CharField(label="Pin data parallel", required=False, help_text="Blank: searched.")
    training_micro_batch = forms.CharField(label="Pin micro-batch", required=False, help_text="Blank: searched.")
    training_ep = forms.CharField(label="Pin expert parallel (MoE)", required=False,
                                 help_text="Blank: searched for mixture-of-experts models; 1 for dense.")
    training_recompute = forms.ChoiceField(
        label="Pin recompute", required=False,
        choices=[("", "searched"), ("none", "none"), ("selective", "selective"), ("full", "full")],
    )
    inference_tp = forms.CharField(label="Pin replica tensor parallel", required=False, help_text="Blank: searched.")
    inference_pp = forms.CharField(label="Pin replica pipeline parallel", required=False, help_text="Blank: searched.")
    hardware_fabric = forms.ChoiceField(
        label="Compute fabric", required=False,
        choices=[("", "auto"), *[(f, f) for f in ("infiniband-ndr", "infiniband-xdr", "roce-400g", "roce-800g")]],
    )
    hardware_rack_kw = forms.CharField(label="Rack power budget (kW)", required=False,
                                       help_text="Blank: the system's reference rack.")
    hardware_cooling = forms.ChoiceField(
        label="Cooling", required=False,
        choices=[("", "auto (by rack kW)"), ("air", "air"), ("rdhx", "rear-door HX"), ("liquid", "liquid")],
    )
    site_pue = forms.CharField(label="PUE", required=False, help_text="Blank: by cooling method (1.2-1.4).")
    site_electricity_usd_per_kwh = forms.CharField(label="Electricity (USD/kWh)", required=False,
                                                   help_text="Blank: the sourced default in the plan's costs.")
    site_colo_usd_per_kw_month = forms.CharField(label="Colocation (USD/kW-month)", required=False,
                                                 help_text="Blank: the sourced default in the plan's costs.")
    pricing_years = forms.CharField(label="TCO years", required=False, initial="3")
    pricing_regions = forms.CharField(label="AWS regions", required=False, initial="us-east-1, us-west-2",
                                      help_text="Comma-separated region codes.")
    request_json = forms.CharField(
        label="Advanced: whole request as JSON",
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text="When given, it replaces the fields above (see the request contract in the README).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model_preset"].choices = _catalog_choices("models")
        self.fields["model_preset"].initial = "llama-3-70b"
        self.fields["hardware_system"].choices = _catalog_choices("systems", ("auto", "auto: try every system"))
        self.fields["hardware_system"].initial = "auto"
        self.request_data: dict[str, Any] | None = None

    def _request_from_fields(self) -> dict[str, Any]:
        """Nested request from the filled-in fields; the other workload's section is left out."""
        data = self.cleaned_data
        workload = data.get("workload")
        request: dict[str, Any] = {"workload": workload, workload: {}, "hardware": {"system": "auto"}}
        for field, path in FIELD_PATHS.items():
            keys = path.split(".")
            if field == "workload" or (keys[0] in SECTION_OF_FIELD and keys[0] != workload):
                continue
            raw = data.get(field)
            if raw in (None, ""):
                continue
            if field in LIST_FIELDS:
                value: Any = [part.strip() for part in str(raw).split(",") if part.strip()]
            elif field in TEXT_FIELDS:
                value = raw
            else:
                value = _number_or_text(raw)
            target = request
            for key in keys[:-1]:
                target = target.setdefault(key, {})
            target[keys[-1]] = value
        return request

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.errors:
            return cleaned
        raw_json = (cleaned.get("request_json") or "").strip()
        if raw_json:
            try:
                request = json.loads(raw_json)
            except json.JSONDecodeError as exc:
                self.add_error("request_json", f"Malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).")
                return cleaned
            except (ValueError, RecursionError):  # huge integers, absurd nesting
                self.add_error("request_json", "Malformed JSON: a number is too long or the nesting too deep.")
                return cleaned
        else:
            request = self._request_from_fields()
        try:
            request_validate(request)
        except RequestInvalid as exc:
            self._attach_errors(exc.errors, from_json=bool(raw_json))
            return cleaned
        self.request_data = request
        return cleaned

    def _attach_errors(self, errors: dict[str, list[str]], *, from_json: bool) -> None:
        for path, messages in errors.items():
            field = None if from_json else PATH_FIELDS.get(path)
            if from_json:
                field = "request_json"
            for message in messages:
                text = message if message.startswith(path) or path == "__all__" else f"{path}: {message}"
                self.add_error(field, text)
