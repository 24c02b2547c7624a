"""GPU instance specs from `ec2.describe_instance_types`, corrected by a curated override table, mapped to catalog GPUs.

Pure Python (no Django, boto3 or network): `AwsPriceFetcher.instance_types` pages through the API and hands the
items here. Three steps, each stated once:

1. `instance_spec_parse`: one `InstanceTypeInfo` -> `InstanceSpec` (GPU count, name, maker and memory per GPU in
   MiB, vCPUs, memory, EFA interfaces), exactly as AWS says it, errors included.
2. `SPEC_OVERRIDES` (versioned): the known data errors public catalog builders report (SkyPilot's fetcher,
   ec2instances.info #705/#751/#776, aws-cli #8970). Each row names the field, the *wrong* values AWS is known to
   return, the correction, the reason and the source. A row fires only when AWS still returns a known-wrong value,
   so a fix on AWS's side turns the override into a no-op instead of a silent overwrite; an API value that is
   neither the known error nor the correction is kept and reported (someone should look at it).
3. `GPU_MODELS`: (maker, name, API MiB per GPU) -> catalog GPU id and marketing memory. AWS reports usable MiB,
   which sit below the marketing figure (A10G/L4 22888 MiB for "24 GB", L40S 45776 for "48 GB"), so the stored
   `gpu_memory_gib` comes from this table (the catalog's `hbm_gib` where the catalog has the part), never from
   MiB / 1024.

The result feeds `CloudInstanceType` rows (one per type per snapshot) and, through them, the GPU model and count
that costing matches plans against. `pricing.aws.instances.INSTANCE_GPUS` stays as the fallback for snapshots
stored without specs; a test keeps the two in agreement.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

__all__ = [
    "GPU_INSTANCE_TYPE_PATTERNS",
    "GPU_MODELS",
    "SPEC_OVERRIDES",
    "SPEC_OVERRIDES_VERSION",
    "GpuModel",
    "InstanceSpec",
    "ResolvedSpec",
    "SpecOverride",
    "describe_instance_types_params",
    "instance_spec_parse",
    "instance_spec_resolve",
    "instance_specs_resolve",
    "instance_type_patterns",
]

# `describe_instance_types` has no gpu-info filter: select by instance-type wildcards (EC2 API reference).
GPU_INSTANCE_TYPE_PATTERNS = ("p4d.*", "p4de.*", "p5.*", "p5e.*", "p5en.*", "p6-b200.*", "g6e.*", "g6f.*")
L4_MIB = 22888  # what the API reports for one whole L4 (and A10G); g6f fractions are memory / this


def instance_type_patterns(instance_types: Iterable[str] = ()) -> list[str]:
    """The default GPU families plus the family wildcard of every requested type, in a stable order."""
    patterns = list(GPU_INSTANCE_TYPE_PATTERNS)
    for instance_type in instance_types:
        pattern = f"{instance_type.split('.', 1)[0]}.*"
        if pattern not in patterns:
            patterns.append(pattern)
    return patterns


def describe_instance_types_params(patterns: Sequence[str]) -> dict[str, Any]:
    """Arguments of the `describe_instance_types` query (the paginator adds MaxResults and NextToken)."""
    return {"Filters": [{"Name": "instance-type", "Values": list(patterns)}]}


@dataclass(frozen=True)
class InstanceSpec:
    """One instance type as `describe_instance_types` describes it (or after overrides: see `ResolvedSpec`)."""

    instance_type: str
    gpus: int
    gpu_name: str | None
    gpu_manufacturer: str | None
    gpu_memory_mib: int | None  # per GPU
    vcpus: int | None
    memory_mib: int | None
    efa_max_interfaces: int
    gpu_fraction: Decimal | None = None  # share of one GPU, for fractional-GPU types (g6f); None = whole GPUs
    raw: dict = field(default_factory=dict, compare=False, repr=False)


def instance_spec_parse(item: Mapping[str, Any]) -> InstanceSpec:
    """One `InstanceTypeInfo` -> `InstanceSpec`, faithfully: no correction here (that is `instance_spec_resolve`).

    A type with several GPU entries (none of the priced families has one) keeps the first entry's model and the
    total count. `GpuPartitionSize` is AWS's own fraction for partitioned GPUs when it sends one.
    """
    gpu_info = item.get("GpuInfo") or {}
    devices = gpu_info.get("Gpus") or []
    first = devices[0] if devices else {}
    partition = first.get("GpuPartitionSize")
    efa = ((item.get("NetworkInfo") or {}).get("EfaInfo") or {}).get("MaximumEfaInterfaces")
    return InstanceSpec(
        instance_type=item["InstanceType"],
        gpus=sum(int(d.get("Count") or 0) for d in devices),
        gpu_name=first.get("Name"),
        gpu_manufacturer=first.get("Manufacturer"),
        gpu_memory_mib=(first.get("MemoryInfo") or {}).get("SizeInMiB") if devices else None,
        vcpus=(item.get("VCpuInfo") or {}).get("DefaultVCpus"),
        memory_mib=(item.get("MemoryInfo") or {}).get("SizeInMiB"),
        efa_max_interfaces=int(efa or 0),
        gpu_fraction=Decimal(str(partition)) if partition is not None else None,
        raw=dict(item),
    )


# ------------------------------------------------------------------------------------------- override table

SPEC_OVERRIDES_VERSION = "2026-11-23"
_ERRORS = (
    "known describe_instance_types data errors (SkyPilot AWS catalog fetcher; ec2instances.info issues 705, 751, "
    "776; aws-cli issue 8970)"
)


@dataclass(frozen=True)
class SpecOverride:
    """Correct `field` of the types matching `pattern` when AWS returns one of the known-`wrong` values.

    `value` is the correction; `derive` names a rule computed from the spec instead (see `_DERIVED`).
    """

    pattern: str  # fnmatch pattern on the instance type
    field: str
    wrong: tuple[Any, ...]
    reason: str
    source: str
    value: Any = None
    derive: str = ""

    def matches(self, instance_type: str) -> bool:
        return fnmatch.fnmatchcase(instance_type, self.pattern)


def _l4_fraction(spec: InstanceSpec) -> Decimal | None:
    if not spec.gpu_memory_mib:
        return None
    return (Decimal(spec.gpu_memory_mib) / L4_MIB).quantize(Decimal("0.0001"))


_DERIVED = {"l4_fraction": _l4_fraction}

SPEC_OVERRIDES: tuple[SpecOverride, ...] = (
    SpecOverride(
        "p4de.*",
        "gpu_name",
        ("A100",),
        value="A100 80GB",
        reason="p4de's GPU is named plain 'A100', like p4d's 40 GB part; it is the 80 GB A100 (81920 MiB)",
        source=f"{_ERRORS} (p4de Name 'A100'; ec2instances.info #705)",
    ),
    SpecOverride(
        "p5en.*",
        "gpu_name",
        ("NVIDIA",),
        value="H200",
        reason="p5en's GPU was named 'NVIDIA' (the maker) instead of the model; p5en carries 8 H200",
        source=f"{_ERRORS} (p5en once Name 'NVIDIA'; ec2instances.info #776)",
    ),
    SpecOverride(
        "p5.*",
        "gpu_name",
        ("None", "", None),
        value="H100",
        reason="p5's GPU model came back as 'None'; p5 carries H100 80GB",
        source=f"{_ERRORS} (p5 once model 'None'/0 GB; SkyPilot fetcher)",
    ),
    SpecOverride(
        "p5.*",
        "gpu_memory_mib",
        (0, None),
        value=81920,
        reason="p5's GPU memory came back as 0; an H100 SXM reports 81920 MiB",
        source=f"{_ERRORS} (p5 once model 'None'/0 GB; SkyPilot fetcher)",
    ),
    SpecOverride(
        "g6e.*",
        "gpu_memory_mib",
        (0, None),
        value=45776,
        reason="g6e's GPU memory came back as 0; an L40S reports 45776 MiB (48 GB marketing)",
        source=f"{_ERRORS} (g6e 0 GB; ec2instances.info #751)",
    ),
    SpecOverride(
        "p5e.48xlarge",
        "gpus",
        (0, None),
        value=8,
        reason="p5e has no GpuInfo at all; p5e.48xlarge carries 8 H200",
        source=f"{_ERRORS} (p5e missing H200; aws-cli #8970)",
    ),
    SpecOverride(
        "p5e.*",
        "gpu_name",
        ("", None),
        value="H200",
        reason="p5e has no GpuInfo at all; its GPU is the H200",
        source=f"{_ERRORS} (p5e missing H200; aws-cli #8970)",
    ),
    SpecOverride(
        "p5e.*",
        "gpu_manufacturer",
        ("", None),
        value="NVIDIA",
        reason="p5e has no GpuInfo at all; the H200 is NVIDIA's",
        source=f"{_ERRORS} (p5e missing H200; aws-cli #8970)",
    ),
    SpecOverride(
        "p5e.*",
        "gpu_memory_mib",
        (0, None),
        value=144384,
        reason="p5e has no GpuInfo at all; an H200 reports 144384 MiB (as on p5en)",
        source=f"{_ERRORS} (p5e missing H200; section 4 table, p5e/p5en 144384 MiB)",
    ),
    SpecOverride(
        "g6f.*",
        "gpus",
        (1,),
        value=0,
        reason="g6f sells a fraction of one L4 but reports Count 1: no whole GPU, so it cannot host a plan's GPUs",
        source=f"{_ERRORS} (g6f fractional GPUs, Count 0/1)",
    ),
    SpecOverride(
        "g6f.*",
        "gpu_fraction",
        (None,),
        derive="l4_fraction",
        reason="g6f's fraction of an L4 is not reported; it is the GPU memory / 22888 MiB (one whole L4)",
        source=f"{_ERRORS} (g6f fraction = memory / 22888)",
    ),
)


# ------------------------------------------------------------------------------------------ catalog mapping


@dataclass(frozen=True)
class GpuModel:
    gpu_model: str  # catalog GPU id (engine/data/catalog/gpus.json) where the catalog has the part, else descriptive
    memory_gib: int  # marketing memory: the catalog's hbm_gib, or the vendor's figure for non-catalog parts
    in_catalog: bool


# (manufacturer, API name after overrides, API MiB per GPU) -> model. API MiB as describe_instance_types reports it.
GPU_MODELS: dict[tuple[str, str, int], GpuModel] = {
    ("NVIDIA", "A100", 40960): GpuModel("a100-40gb-sxm", 40, in_catalog=True),
    ("NVIDIA", "A100 80GB", 81920): GpuModel("a100-80gb-sxm", 80, in_catalog=True),
    ("NVIDIA", "H100", 81920): GpuModel("h100-sxm", 80, in_catalog=True),
    ("NVIDIA", "H200", 144384): GpuModel("h200-sxm", 141, in_catalog=True),
    ("NVIDIA", "B200", 183359): GpuModel("b200-hgx", 180, in_catalog=True),
    ("NVIDIA", "L40S", 45776): GpuModel("l40s", 48, in_catalog=False),
    ("NVIDIA", "L4", 22888): GpuModel("l4", 24, in_catalog=False),
    ("NVIDIA", "A10G", 22888): GpuModel("a10g", 24, in_catalog=False),
}


@dataclass(frozen=True)
class ResolvedSpec:
    """A spec after the override table and the catalog mapping; `overridden` lists every correction made."""

    spec: InstanceSpec  # corrected values
    api: InstanceSpec  # what AWS said
    gpu_model: str  # catalog id ("" when the GPU is unknown or the type has no whole GPU)
    gpu_memory_gib: int | None  # marketing memory per GPU
    overridden: tuple[dict, ...] = ()
    warnings: tuple[str, ...] = ()
    overrides_version: str = SPEC_OVERRIDES_VERSION

    @property
    def instance_type(self) -> str:
        return self.spec.instance_type

    @property
    def overridden_fields(self) -> list[str]:
        return [o["field"] for o in self.overridden]


def _json_value(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def instance_spec_resolve(
    api: InstanceSpec, *, overrides: Sequence[SpecOverride] = SPEC_OVERRIDES, models: Mapping = GPU_MODELS
) -> ResolvedSpec:
    """Apply every matching override (in table order), then map the GPU to the catalog."""
    spec = api
    applied: list[dict] = []
    warnings: list[str] = []
    for row in overrides:
        if not row.matches(api.instance_type):
            continue
        current = getattr(spec, row.field)
        if current in row.wrong:
            new = _DERIVED[row.derive](spec) if row.derive else row.value
            if new == current:
                continue
            spec = replace(spec, **{row.field: new})
            applied.append(
                {
                    "field": row.field,
                    "api": _json_value(current),
                    "value": _json_value(new),
                    "reason": row.reason,
                    "source": row.source,
                }
            )
        elif not row.derive and current != row.value:
            warnings.append(
                f"{api.instance_type}: AWS returns {row.field}={current!r}, neither the known error "
                f"{row.wrong!r} nor the curated {row.value!r}; kept AWS's value, check the override table"
            )
    gpu_model, memory_gib = "", None
    if spec.gpus > 0 and spec.gpu_name:
        known = models.get((spec.gpu_manufacturer or "", spec.gpu_name, spec.gpu_memory_mib or 0))
        if known is None:
            warnings.append(
                f"{api.instance_type}: GPU {spec.gpu_manufacturer} {spec.gpu_name!r} with {spec.gpu_memory_mib} MiB "
                "is not in the GPU model table; not matched to the catalog"
            )
        else:
            gpu_model, memory_gib = known.gpu_model, known.memory_gib
    return ResolvedSpec(
        spec=spec,
        api=api,
        gpu_model=gpu_model,
        gpu_memory_gib=memory_gib,
        overridden=tuple(applied),
        warnings=tuple(warnings),
    )


def instance_specs_resolve(items: Iterable[Mapping[str, Any]]) -> list[ResolvedSpec]:
    """API items -> resolved specs, one per type (the last item wins on a repeat), sorted by instance type."""
    by_type = {item["InstanceType"]: item for item in items}
    return [instance_spec_resolve(instance_spec_parse(by_type[name])) for name in sorted(by_type)]
