"""The plan form: a few common fields, or a whole request as JSON.

The form does no checking of its own beyond parsing text: it builds the request dict and hands
it to the one request validator (engine), then puts each field error back on the form
field it belongs to, so the browser, the API and the command report the same problems.
"""

from __future__ import annotations

import json
import re
import typing
from typing import TYPE_CHECKING, Any

from django import forms

from .adapter import RequestInvalid, choices_of, field_at, load_catalog, request_validate
from .choices import Workload
from .presenters import lookup

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

# The request fields the form shows, in page order: (request path, label, value an empty form starts with).
# The rest comes from the request schema (engine/request): each field's form name, whether it is a choice and of
# what, its default and its help text. "Advanced" fields (folded away in the page) may be left blank: blank
# means the schema's default. The model and system choices come from the catalog.
COMMON_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("name", "Name", None),
    ("workload", "Workload", Workload.TRAINING),
    ("model.preset", "Model", "llama-3-70b"),
    ("training.tokens", "Tokens to train", "15e12"),
    ("training.deadline_days", "Deadline (days)", "90"),
    ("training.gpus", "or fixed GPU count", None),
    ("training.precision", "Training precision", None),
    ("inference.requests_per_s", "Requests / s", "10"),
    ("inference.prompt_tokens", "Prompt tokens", "1000"),
    ("inference.output_tokens", "Output tokens", "250"),
    ("inference.ttft_ms", "TTFT target (ms)", "500"),
    ("inference.tpot_ms", "TPOT target (ms)", "50"),
    ("inference.precision", "Serving precision", None),
    ("hardware.system", "System", "auto"),
    ("envelope.facility_mw", "Facility power limit (MW)", None),
    ("envelope.it_mw", "IT power limit (MW)", None),
    ("envelope.racks", "Most racks", None),
    ("envelope.capex_usd", "Capex limit (USD)", None),
    ("envelope.gpus", "Most GPUs", None),
)
ADVANCED_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("training.global_batch_tokens", "Global batch (tokens)", None),
    ("training.deadline_percentile", "Meet the deadline at", None),
    ("training.parallelism.tp", "Pin tensor parallel", None),
    ("training.parallelism.pp", "Pin pipeline parallel", None),
    ("training.parallelism.dp", "Pin data parallel", None),
    ("training.parallelism.micro_batch", "Pin micro-batch", None),
    ("training.parallelism.cp", "Pin context parallel", None),
    ("training.parallelism.cp_comm", "Pin context-parallel exchange", None),
    ("training.parallelism.interleave", "Pin virtual stages (interleave)", None),
    ("training.parallelism.ep", "Pin expert parallel (MoE)", None),
    ("training.parallelism.etp", "Pin expert tensor parallel (MoE: 1 folds experts over TP)", None),
    ("training.parallelism.ep_overlap", "Pin expert all-to-all overlap (MoE)", None),
    ("training.parallelism.recompute", "Pin recompute", None),
    ("training.parallelism.zero_stage", "Pin ZeRO stage", None),
    ("training.memory.activation_offload_layers", "Pin layers with activations in host memory", None),
    ("inference.parallelism.tp", "Pin replica tensor parallel", None),
    ("inference.parallelism.pp", "Pin replica pipeline parallel", None),
    ("hardware.fabric", "Compute fabric", None),
    ("hardware.rack_kw", "Rack power budget (kW)", None),
    ("hardware.cooling", "Cooling", None),
    ("site.pue", "PUE", None),
    ("site.electricity_usd_per_kwh", "Electricity (USD/kWh)", None),
    ("site.colo_usd_per_kw_month", "Colocation (USD/kW-month)", None),
    ("site.ambient_c", "Design outdoor temperature (C)", None),
    ("site.ownership", "Site: rented or owned", None),
    ("rollout.by", "Roll-out phases counted in", None),
    ("rollout.per_phase", "Roll-out: scalable units or MW per phase", None),
    ("rollout.months_between", "Roll-out: months between phases", None),
    ("pricing.years", "TCO years", "3"),
    ("pricing.regions", "AWS regions", "us-east-1, us-west-2"),
)
CATALOG_CHOICES = {"model.preset": "models", "hardware.system": "systems"}
# The form's own words where the schema's description is written for API clients (field paths, catalog URLs): a
# person filling the form knows the fields by their labels above, not as `deadline_days` or `GET /api/catalog/`.
FORM_HELP = {
    "workload": "Which target below to plan for; capacity: the largest cluster of the chosen system inside the "
    "envelope (no model needed).",
    "model.preset": "A published model's shape; the model's own fields, when given, override it.",
    "hardware.system": "The GPU system to build with, or auto: try every system and pick the cheapest that meets "
    "the target.",
    "training.deadline_days": "Finish within this many days (at least 0.01, about 15 minutes); give this or a fixed "
    "GPU count, not both.",
    "training.gpus": "Train on exactly this many GPUs; give this or a deadline.",
    "training.global_batch_tokens": "Tokens per optimizer step (at least the model's sequence length); blank: the "
    "model's published batch, else 4,194,304.",
    "training.deadline_percentile": "Which whole-run time must meet the deadline: p50, the expected run, or p90, a "
    "time nine runs in ten finish within (it needs more GPUs, since the whole-run range is wide). Blank: p50.",
    "training.parallelism.cp": "Context parallelism: GPUs that split each sequence (twice this number must divide "
    "the model's sequence length); searched when blank.",
    "training.parallelism.cp_comm": "How context-parallel GPUs exchange attention inputs: ring passes key and value "
    "chunks round a ring under the attention compute; all-gather gathers the whole sequence's keys and values first "
    "(Llama 3); all-to-all trades sequence chunks for heads (DeepSpeed-Ulysses; context parallelism must divide a "
    "tensor-parallel GPU's key-value heads); hierarchical does an all-to-all inside an NVLink domain and a ring "
    "across the groups. Layers that attend through a sliding window take all-gather or all-to-all whatever is pinned "
    "here. Needs context parallelism; blank: the fastest the layout allows.",
    "training.parallelism.ep_overlap": "On: each expert all-to-all of one micro-batch runs under the attention or "
    "expert computation of another (Megatron-Core's EP overlap; needs expert parallel above 1, no full recompute "
    "and, with pipeline parallel, virtual stages); off: on the critical path; blank: searched.",
    "training.memory.activation_offload_layers": "Layers whose activations wait in host or Grace memory between "
    "the forward and backward passes (Megatron-Core's layer-level activation offload; needs pipeline parallel 1 "
    "and no recompute, and leaves at least one layer on the GPU); 0 turns it off; blank: searched (none, a quarter, "
    "half or three quarters of the layers).",
    "rollout.by": "What a phase is counted in: scalable units of systems, or MW of facility power. Blank: scalable "
    "units.",
}


class _NotJson(ValueError):
    """NaN, Infinity or -Infinity: Python's json module reads them, the JSON standard (RFC 8259) does not."""


def _refuse_constant(name: str) -> float:
    raise _NotJson(name)


def _form_name(path: str) -> str:
    """The form field of a request path: training.parallelism.tp -> training_tp, model.preset -> model_preset."""
    return path.replace(".parallelism.", ".").replace(".", "_")


# form field -> request path
FIELD_PATHS: dict[str, str] = {_form_name(path): path for path, _, _ in (*COMMON_FIELDS, *ADVANCED_FIELDS)}
PATH_FIELDS = {path: field for field, path in FIELD_PATHS.items()}
SECTION_OF_FIELD = {"training": Workload.TRAINING, "inference": Workload.INFERENCE}


def _schema_field(path: str) -> FieldInfo:
    field = field_at(path)
    if field is None:  # a typo in the tables above: fail at import, not on a user's submit
        raise LookupError(f"{path} is not a field of the plan request schema")
    return field


def _is_list(field: FieldInfo) -> bool:
    return typing.get_origin(field.annotation) in (tuple, list)


def _shown(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _help_text(field: FieldInfo, *, advanced: bool) -> str:
    text = field.description or ""
    if field.is_required():  # no default to name (a required field of an optional section)
        return text.strip()
    default = field.get_default(call_default_factory=True)
    if advanced and default is not None and not isinstance(default, tuple) and "default:" not in text:
        text += f" Blank: {_shown(default)}."
    return text.strip()


def _build_field(path: str, label: str, initial: str | None, *, advanced: bool) -> forms.Field:
    """One Django form field from the schema field at `path` (text boxes are parsed by `_number_or_text`)."""
    field = _schema_field(path)
    help_text = FORM_HELP.get(path) or _help_text(field, advanced=advanced)
    default = field.get_default(call_default_factory=True)
    choices = choices_of(tuple(path.split(".")))
    if path in CATALOG_CHOICES:
        return forms.ChoiceField(label=label, choices=(), initial=initial, help_text=help_text)
    if _is_switch(path):  # a yes/no pin: blank leaves it to the search
        return forms.ChoiceField(label=label, required=False, choices=_SWITCH_CHOICES, help_text=help_text)
    if choices and not advanced:
        return forms.ChoiceField(
            label=label,
            choices=[(c, _choice_label(c)) for c in choices],
            initial=initial or default,
            help_text=help_text,
        )
    if choices:
        blank = ("", _choice_label(str(default)) if default is not None else "searched")
        options = [(c, _choice_label(c)) for c in choices if c != default]
        return forms.ChoiceField(label=label, required=False, choices=[blank, *options], help_text=help_text)
    max_length = next((m.max_length for m in field.metadata if getattr(m, "max_length", None)), None)
    return forms.CharField(label=label, required=False, initial=initial, max_length=max_length, help_text=help_text)


# Choice values whose words a person reads with hyphens; the rest read with spaces ("scalable_units").
_CHOICE_WORDS = {"all_gather": "all-gather", "all_to_all": "all-to-all", "mw": "MW"}


def _choice_label(value: str) -> str:
    """A choice as the form shows it; the value sent stays the API's (`all_gather`)."""
    return _CHOICE_WORDS.get(value, value.replace("_", " "))


def _types_in(annotation: object) -> list[object]:
    return [annotation, *(inner for arg in typing.get_args(annotation) for inner in _types_in(arg))]


_SWITCH_CHOICES = [("", "searched"), ("true", "on"), ("false", "off")]


def _is_switch(path: str) -> bool:
    """Whether the field is a true/false pin (the form offers searched, on, off)."""
    return bool in _types_in(_schema_field(path).annotation)


def _is_text(path: str) -> bool:
    """Whether the typed text goes into the request as text (choices, names) rather than as a number."""
    return str in _types_in(_schema_field(path).annotation) or bool(choices_of(tuple(path.split("."))))


TEXT_FIELDS = {_form_name(path) for path in FIELD_PATHS.values() if _is_text(path)}
SWITCH_FIELDS = {_form_name(path) for path in FIELD_PATHS.values() if _is_switch(path)}
LIST_FIELDS = {_form_name(path) for path in FIELD_PATHS.values() if _is_list(_schema_field(path))}


# Digits grouped by commas in threes, as a thousands separator writes them (an optional sign, fraction and exponent).
# No leading zero: "0,125" is a decimal comma, never 125.
THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")


def _number_or_text(text: str) -> Any:
    """Turn typed text into an int or float when it is one; otherwise keep the text.

    Text that is not a number is passed on unchanged so the validator names the field in its
    own words ("training.tokens must be a number"), as it does for the API. "nan", "inf" and a
    number too large for a float ("1e400") go on as the float they are, so the message says what
    is wrong with them ("must be a finite number"), not that a number typed was "a string".

    A comma is read as a thousands separator only where it is one ("15,000", "1,234.5"): "1,5" is a decimal comma
    in much of the world, and reading it as 15 would plan a ten-times-longer deadline without a word, so such text
    goes on as text and the field says it must be a number.
    """
    text = text.strip()
    if THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    text = text.replace("_", "")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value


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
        if isinstance(value, bool):
            initial[field] = "true" if value else "false"
        elif value is not None and field != "name":
            initial[field] = ", ".join(map(str, value)) if isinstance(value, list) else value
    return initial


# The request fields as a form class (the declarative metaclass keeps this order), for PlanForm to extend.
_RequestFields = type(forms.Form)(
    "_RequestFields",
    (forms.Form,),
    {
        "__module__": __name__,
        **{
            _form_name(path): _build_field(path, label, initial, advanced=advanced)
            for rows, advanced in ((COMMON_FIELDS, False), (ADVANCED_FIELDS, True))
            for path, label, initial in rows
        },
    },
)


class PlanForm(_RequestFields):
    """The request fields (COMMON_FIELDS, ADVANCED_FIELDS, built from the request schema), then a JSON box."""

    request_json = forms.CharField(
        label="Advanced: whole request as JSON",
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text="When given, it replaces the fields above (see the request contract in the README).",
    )

    # The advanced fields by fieldset: (legend, the workload it belongs to or "" for both, request-path prefix).
    ADVANCED_GROUPS = (
        ("Training details", "training", "training."),
        ("Replica shape", "inference", "inference."),
        ("Build and site", "", ""),
    )

    def advanced_groups(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        """Every advanced field in its fieldset, in ADVANCED_FIELDS order, so a field added there is on the
        page without a template edit (the template once listed them by hand and left eleven out)."""
        groups: list[tuple[str, str, list[forms.BoundField]]] = []
        taken: set[str] = set()
        for legend, workload, prefix in self.ADVANCED_GROUPS:
            names = [
                _form_name(path)
                for path, _, _ in ADVANCED_FIELDS
                if path.startswith(prefix) and _form_name(path) not in taken
            ]
            taken.update(names)
            groups.append((legend, workload, [self[name] for name in names]))
        return groups

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model_preset"].choices = _catalog_choices("models")
        self.fields["hardware_system"].choices = _catalog_choices("systems", ("auto", "auto: try every system"))
        self.request_data: dict[str, Any] | None = None

    def _request_from_fields(self) -> dict[str, Any]:
        """Nested request from the filled-in fields; the other workload's section is left out."""
        data = self.cleaned_data
        workload = data.get("workload")
        request: dict[str, Any] = {"workload": workload, "hardware": {"system": "auto"}}
        if workload in SECTION_OF_FIELD:
            request[workload] = {}
        for field, path in FIELD_PATHS.items():
            keys = path.split(".")
            if field == "workload" or (keys[0] in SECTION_OF_FIELD and keys[0] != workload):
                continue
            if workload == Workload.CAPACITY and keys[0] == "model":
                continue  # a capacity plan has no model
            raw = data.get(field)
            if raw in (None, ""):
                continue
            if field in SWITCH_FIELDS:
                value: Any = raw == "true"
            elif field in LIST_FIELDS:
                value = [part.strip() for part in str(raw).split(",") if part.strip()]
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
                request = json.loads(raw_json, parse_constant=_refuse_constant)
            except json.JSONDecodeError as exc:
                self.add_error("request_json", f"Malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).")
                return cleaned
            except _NotJson as exc:
                self.add_error("request_json", f"Malformed JSON: {exc} is not a JSON number; give a finite number.")
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


class QuoteUploadForm(forms.Form):
    """A vendor or cloud quote: who quoted, its reference and date, and the file (CSV, or XLSX with openpyxl)."""

    vendor = forms.CharField(max_length=200, help_text="Who quoted: vendor, reseller or cloud.")
    reference = forms.CharField(max_length=255, help_text="The quotation's number or document title.")
    quoted_on = forms.DateField(
        label="Quoted on",
        help_text="The date printed on the quotation.",
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )
    file = forms.FileField(
        label="Quote file",
        help_text="CSV (or XLSX) with columns part_number (or catalog_id), unit_price_usd, and optionally currency "
        "(USD) and description.",
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.xlsx,text/csv"}),
    )
