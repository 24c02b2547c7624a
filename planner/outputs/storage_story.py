"""The storage card told as a story: what the file system must do, and what sets each figure.

Why: the storage section of a plan holds about twenty figures (issue 17: checkpoint write, data loader read,
capacity for retained checkpoints and the data set, the reference design's guidance for each), and shown as a
table they read as a list of numbers with no answer. A buyer wants the appliance and its count, an infra engineer
wants to know which need sizes it, a finance reader wants to know whether the figure is a rule of thumb or the
workload's own. So the card leads with one sentence (what is bought, what it must deliver, what sets the count),
then one sentence per need naming what sets it ("Write 2.56 TB/s: the reference design; the checkpoint alone needs
579 GB/s to save 5.68 TB within 9.8 s"), and keeps every figure behind a disclosure.

Every number here is read from the typed result (`StorageSummary`, the BOM line of the appliance, the assumptions
the plan used); nothing is re-derived. Plans stored before the storage needs were split out (no `write_set_by`)
read as set by the reference design, which is what those plans did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .formatting import significant
from .view_models import StorageStory

if TYPE_CHECKING:
    from planner.adapter import BomLine

    from .plan_view import PlanView

__all__ = ["rate_text", "seconds_text", "size_text", "storage_story"]

# How each checkpointing mode gets the checkpoint to storage, as the write sentence says it.
_HOW = {
    "synchronous": "while training waits (synchronous checkpoints)",
    "asynchronous": "in the background before the next save (asynchronous checkpoints)",
    "in_memory": "in the background from the in-memory copy (in-memory checkpoints)",
    "elastic": "in the background before the next save (elastic recovery)",
}
_MODE = {"in_memory": "in-memory", "none": "none"}
_BINDING = {"read": "read bandwidth", "write": "write bandwidth", "capacity": "capacity"}
_DESIGN = "the SuperPOD reference design"
_SOURCES = ("storage.write_gbps", "storage.read_gbps", "storage.capacity_tb", "storage.appliances")


def rate_text(gbps: float) -> str:
    """A bandwidth in GB/s as people say it: '2.56 TB/s', '160 GB/s', '28.0 MB/s' (three significant figures)."""
    return _thousands(gbps, ("MB/s", "GB/s", "TB/s"))


def size_text(tb: float) -> str:
    """A size in TB as '988 GB', '5.68 TB', '1.25 PB' (three significant figures)."""
    return _thousands(tb, ("GB", "TB", "PB"))


def _thousands(value: float, units: tuple[str, str, str]) -> str:
    """`value` in the middle unit, shown in the unit a thousand times smaller or larger when it reads better."""
    smaller, unit, larger = units
    if value >= 1000:
        return f"{significant(value / 1000)} {larger}"
    if 0 < value < 1:
        return f"{significant(value * 1000)} {smaller}"
    return f"{significant(value)} {unit}"


def seconds_text(seconds: float) -> str:
    """A duration in seconds as '9.8 s', '33 s' or, from two minutes, '15 min' (two significant figures)."""
    if seconds >= 120:
        return f"{significant(seconds / 60, 2)} min"
    return f"{significant(seconds, 2)} s"


def _appliance_line(view: PlanView) -> BomLine | None:
    storage = view.result.storage
    return next((line for line in view.bom_lines or () if line.catalog_id == storage.appliance), None)


def _appliance_name(view: PlanView) -> tuple[str, str]:
    """(maker and model, what it is) of the storage appliance, from its BOM line; the catalog id never shows."""
    line = _appliance_line(view)
    if line is None:
        return "storage appliance", ""
    model = line.part_number or ""
    name = model if line.manufacturer and model.startswith(line.manufacturer) else f"{line.manufacturer} {model}"
    return name.strip() or "storage appliance", line.description or ""


def _assumption(view: PlanView, name: str) -> float | None:
    entry = view.assumptions.get(name)
    return float(entry.value) if entry is not None and isinstance(entry.value, int | float) else None


def _appliances_text(view: PlanView) -> str:
    """'4 x DDN AI400X2 parallel file system appliance (NVMe)': the BOM's description when it names the model."""
    s = view.result.storage
    name, what = _appliance_name(view)
    thing = what if what and name.split()[-1] in what else f"{name} ({what})" if what else name
    return f"One {thing}" if s.appliances == 1 else f"{s.appliances:,} x {thing}"


def _lead(view: PlanView) -> str:
    s = view.result.storage
    needs = [f"write {rate_text(s.write_gbps)}", f"read {rate_text(s.read_gbps)}"]
    if s.capacity_tb > 0:
        needs.append(f"hold {size_text(s.capacity_tb)}")
    must = ", ".join(needs[:-1]) + f" and {needs[-1]}"
    binding = _BINDING.get(s.binding, s.binding)
    if s.appliances == 1:
        return f"{_appliances_text(view)}: it must {must}; {binding} comes closest to its limit."
    return f"{_appliances_text(view)}: together they must {must}; {binding} sets how many."


def _guidance_words(view: PlanView) -> str:
    ratio = _assumption(view, "storage_write_to_read_ratio")
    if ratio is None:
        return _DESIGN
    share = "half" if ratio == 0.5 else f"{ratio:g} x"
    return f"{_DESIGN} (write at {share} the read bandwidth)"


def _write(view: PlanView, training: bool, serving: bool) -> str:
    s = view.result.storage
    head = f"Write {rate_text(s.write_gbps)}"
    budget = s.checkpoint_write_budget_s
    how = _HOW.get(s.checkpointing or "", "")
    save = f"to save {size_text(s.checkpoint_tb)}" + (f" within {seconds_text(budget)}" if budget else "")
    save += f" {how}" if how else ""
    if not training or s.checkpoint_write_gbps <= 0:
        why = "serving writes no checkpoints" if serving else "this plan has no workload to checkpoint"
        return f"{head}: {_guidance_words(view)}; {why}."
    if s.write_set_by == "checkpoint":
        guide = s.write_guidance_gbps
        rest = f"; {_DESIGN} alone would ask {rate_text(guide)}" if guide is not None else ""
        return f"{head}: set by the checkpoint, {save}{rest}."
    return f"{head}: {_guidance_words(view)}; the checkpoint alone needs {rate_text(s.checkpoint_write_gbps)} {save}."


def _read(view: PlanView, training: bool) -> str:
    s = view.result.storage
    head = f"Read {rate_text(s.read_gbps)}"
    guide = f'{s.read_gbps_per_su:g} GB/s per scalable unit, its "{s.tier}" tier'
    if s.read_guidance_gbps is not None and s.read_guidance_gbps < s.read_gbps_per_su:
        guide = f"below one scalable unit: its share of {guide}, at least the single-system figure"
    loader = s.loader_read_gbps
    if s.read_set_by == "data loader" and loader is not None:
        design = rate_text(s.read_guidance_gbps or 0)
        return f"{head}: set by the data loader; {_DESIGN} ({guide}) would ask {design}."
    tail = f"; the data loader needs only {rate_text(loader)}" if training and loader else ""
    return f"{head}: {_DESIGN} ({guide}){tail}."


def _hold(view: PlanView, training: bool, serving: bool) -> str:
    s = view.result.storage
    if s.capacity_tb <= 0:
        return (
            "Capacity is not sized: this plan has no model or data set, so size it for the checkpoints and data "
            "you will keep."
        )
    headroom = _assumption(view, "storage_headroom_fraction")
    free = f", plus {headroom * 100:.0f} % free space" if headroom else ""
    kept = s.checkpoints_retained
    if training:
        raw, tokenised = s.dataset_raw_tb, s.dataset_tokenised_tb
        data = (
            f"the data set ({size_text(raw)} of raw text and {size_text(tokenised)} tokenised)"
            if raw is not None and tokenised is not None
            else f"the data set ({size_text(s.dataset_tb)})"
        )
        checkpoints = f"{kept} checkpoints of {size_text(s.checkpoint_tb)}" if kept else "the checkpoints"
        return f"Hold {size_text(s.capacity_tb)}: {checkpoints} and {data}{free}."
    if serving:
        versions = f", {kept} versions kept" if kept else ""
        weights = size_text(s.checkpoint_tb)
        return f"Hold {size_text(s.capacity_tb)}: the served model's weights ({weights}){versions}{free}."
    return f"Hold {size_text(s.capacity_tb)}{free}."


def _details(view: PlanView, training: bool) -> tuple[tuple[str, str], ...]:
    s = view.result.storage
    name, what = _appliance_name(view)
    rows: list[tuple[str, str | None]] = [
        ("File system", f"{s.appliances:,} x {name}" + (f": {what}" if what else "")),
        ("Appliance count set by", _BINDING.get(s.binding, s.binding)),
        ("Write needed", rate_text(s.write_gbps)),
        ("Write, reference design", _maybe(rate_text, s.write_guidance_gbps)),
        ("Write, checkpoint", rate_text(s.checkpoint_write_gbps) if training else None),
        ("Checkpointing", _MODE.get(s.checkpointing or "", s.checkpointing) if training else None),
        ("Time allowed to write a checkpoint", _maybe(seconds_text, s.checkpoint_write_budget_s) if training else None),
        ("Read needed", rate_text(s.read_gbps)),
        ("Read, reference design", _maybe(rate_text, s.read_guidance_gbps)),
        ("Reference design tier", f"{s.tier}: {s.read_gbps_per_su:g} GB/s read per scalable unit"),
        ("Read, data loader", _maybe(rate_text, s.loader_read_gbps) if training else None),
        ("Capacity", size_text(s.capacity_tb) if s.capacity_tb > 0 else "not sized (no model or data set)"),
        ("Checkpoint size" if training else "Model weights", size_text(s.checkpoint_tb) if s.checkpoint_tb else None),
        ("Checkpoints kept" if training else "Versions kept", str(s.checkpoints_retained) if s.checkpoint_tb else None),
        ("Data set, raw text", _maybe(size_text, s.dataset_raw_tb) if training else None),
        ("Data set, tokenised", _maybe(size_text, s.dataset_tokenised_tb) if training else None),
    ]
    return tuple((label, text) for label, text in rows if text)


def _maybe(fmt, value: float | None) -> str | None:
    return None if value is None else fmt(value)


def _sources(view: PlanView) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for path in _SOURCES:
        entry = view.explain.get(path)
        if entry is not None and entry.source:
            seen.setdefault(entry.source)
    return tuple(seen)


def storage_story(view: PlanView) -> StorageStory | None:
    """The storage card of a plan with a storage section (None without one)."""
    result = view.result
    if result is None or result.storage is None:
        return None
    training, serving = result.training is not None, result.inference is not None
    return StorageStory(
        lead=_lead(view),
        needs=(_write(view, training, serving), _read(view, training), _hold(view, training, serving)),
        details=_details(view, training),
        sources=_sources(view),
    )
