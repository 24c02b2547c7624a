"""Hardware and model-preset catalog: loads `engine/data/catalog/*.json` into frozen dataclasses.

The catalog is data, not code, so every spec carries its `source` and `as_of` date and can be reviewed and
updated without touching the engine. The files are package data, read with `importlib.resources`, so the engine
is self-contained wherever it is installed or run from. The version string hashes the files' names and bytes
(never their location) so a stored plan records exactly which catalog produced it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from engine.catalog.host import host_fields

__all__ = ["CATALOG_SERIES", "Catalog", "Gpu", "ModelPreset", "System", "default_catalog_dir", "load_catalog"]

# Human-readable prefix of the catalog version; the hash suffix is what identifies the exact content.
CATALOG_SERIES = "2026.11"
# Preset keys beyond the dataclass fields: the full moe record, multi-head latent attention, the published batch.
PRESET_EXTRA_KEYS = ("head_dim", "moe", "mla", "sliding_window", "global_batch_tokens", "batch_ramp", "batch_source")


@dataclass(frozen=True)
class Gpu:
    """One accelerator. Peaks are dense tensor rates: sparse peaks would double MFU denominators wrongly."""

    id: str
    name: str
    bf16_dense_tflops: float
    fp8_dense_tflops: float | None
    fp4_dense_tflops: float | None
    hbm_gib: float
    hbm_tbps: float
    scaleup_gbyte_s: float
    tdp_w: float
    confidence: str
    source: str
    as_of: str
    generation: str = "hopper"  # selects the calibrated efficiency constants (assumptions gemm_efficiency_<gen>)
    sm_count: int | None = None  # streaming multiprocessors: GEMM tile waves (wave quantisation) depend on it

    def dense_tflops(self, precision: str) -> float | None:
        """Native dense peak for a compute precision, or None when the GPU has no tensor cores for it."""
        return {"bf16": self.bf16_dense_tflops, "fp8": self.fp8_dense_tflops, "fp4": self.fp4_dense_tflops}.get(
            precision
        )


@dataclass(frozen=True)
class System:
    """One orderable system (8-GPU node or NVL72 rack); the unit the cluster is built from."""

    id: str
    name: str
    gpu: str
    gpus_per_system: int
    nvlink_domain_gpus: int
    rack_units: int
    max_power_kw: float
    compute_nic_count: int
    compute_nic_gbps: float
    systems_per_rack: int
    su_systems: int
    cooling: str
    confidence: str
    source: str
    as_of: str
    node_mtbf_hours: float  # per system; see mtbf_source (required: no unsourced fallback)
    # Host (CPU) side, for offloaded optimizer state and activations; required, parsed by engine.catalog.host.
    host_memory_gib: float  # CPU memory of the whole system as shipped by default
    host_link_gbyte_s_per_gpu: float  # per GPU and direction with every GPU transferring at once
    host_link_derivation: str  # the link figure worked out in words (generation, achieved rate, GPUs sharing)
    host_source: str
    host_as_of: str
    host_confidence: str
    mtbf_source: str = ""
    network: str = "infiniband"  # scale-out fabric kind: infiniband, roce or efa (collective efficiency differs)
    cloud_instance_type: str | None = None  # set for a cloud instance planned as a system (e.g. p5.48xlarge)
    # False for systems a buyer cannot order to build with (rented cloud instances, export-market variants): they
    # are planned when named, never picked by `system: auto`.
    auto_candidate: bool = True

    @property
    def rented(self) -> bool:
        """A cloud instance type planned as a system: nothing to rack, cable or power on site."""
        return self.cloud_instance_type is not None

    @property
    def host_memory_gib_per_gpu(self) -> float:
        """Host memory each GPU can count on when all of them offload at once: the system's share, GiB."""
        return self.host_memory_gib / self.gpus_per_system

    @property
    def scaleout_gbyte_s_per_gpu(self) -> float:
        """Compute-fabric bandwidth per GPU and direction, GB/s: NICs x line rate / 8 bits / GPUs (rail-optimised)."""
        return self.compute_nic_count * self.compute_nic_gbps / 8.0 / self.gpus_per_system


@dataclass(frozen=True)
class ModelPreset:
    """A published model shape, so users can ask for `llama-3-70b` instead of typing its config."""

    id: str
    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    seq_len: int
    ffn_gated: bool
    tied_embeddings: bool
    learned_positions: bool
    biases: bool
    moe_experts: int | None
    moe_active: int | None
    published_params: float | None
    published_active_params: float | None
    source: str
    as_of: str
    # The preset's raw record (moe details, mla, published batch and its source): newer fields are read from here
    # by the request schema, so adding one needs no new dataclass field.
    extra: dict[str, Any] | None = field(default=None, hash=False, compare=False)


@dataclass(frozen=True)
class Catalog:
    """Everything the engine knows about hardware and presets, keyed by id."""

    version: str
    gpus: dict[str, Gpu]
    systems: dict[str, System]
    models: dict[str, ModelPreset]
    # Build parts and per-system physical data (engine.catalog.parts.PartsCatalog); loaded with the rest.
    parts: Any = None

    def auto_systems(self) -> list[str]:
        """The systems `system: auto` compares: every system a buyer can order and build with, by id."""
        return sorted(sid for sid, system in self.systems.items() if system.auto_candidate)

    def gpu_of(self, system: System) -> Gpu:
        """The GPU record a system is built from."""
        return self.gpus[system.gpu]


def default_catalog_dir() -> Traversable:
    """The catalog shipped in the engine package (`engine/data/catalog`); a `pathlib.Path` when the package is
    installed as files, as it always is here."""
    return resources.files("engine") / "data" / "catalog"


def _records(directory: Traversable, name: str) -> list[dict[str, Any]]:
    data = json.loads((directory / name).read_text(encoding="utf-8"))
    return list(data["records"])


def _gpu(rec: dict[str, Any]) -> Gpu:
    return Gpu(
        id=rec["id"],
        name=rec["name"],
        bf16_dense_tflops=float(rec["bf16_dense_tflops"]),
        fp8_dense_tflops=None if rec.get("fp8_dense_tflops") is None else float(rec["fp8_dense_tflops"]),
        fp4_dense_tflops=None if rec.get("fp4_dense_tflops") is None else float(rec["fp4_dense_tflops"]),
        hbm_gib=float(rec["hbm_gib"]),
        hbm_tbps=float(rec["hbm_tbps"]),
        scaleup_gbyte_s=float(rec["scaleup_gbyte_s"]),
        tdp_w=float(rec["tdp_w"]),
        confidence=rec.get("confidence", ""),
        source=rec["source"],
        as_of=rec["as_of"],
        generation=rec.get("generation", "hopper"),
        sm_count=None if rec.get("sm_count") is None else int(rec["sm_count"]),
    )


def _system(rec: dict[str, Any]) -> System:
    return System(
        id=rec["id"],
        name=rec["name"],
        gpu=rec["gpu"],
        gpus_per_system=int(rec["gpus_per_system"]),
        nvlink_domain_gpus=int(rec["nvlink_domain_gpus"]),
        rack_units=int(rec["rack_units"]),
        max_power_kw=float(rec["max_power_kw"]),
        compute_nic_count=int(rec["compute_nics"]["count"]),
        compute_nic_gbps=float(rec["compute_nics"]["gbps"]),
        systems_per_rack=int(rec["systems_per_rack"]),
        su_systems=int(rec["su_systems"]),
        cooling=rec["cooling"],
        confidence=rec.get("confidence", ""),
        source=rec["source"],
        as_of=rec["as_of"],
        node_mtbf_hours=float(rec["node_mtbf_hours"]),
        **host_fields(rec),
        mtbf_source=rec.get("mtbf_source", ""),
        network=rec.get("network", "infiniband"),
        cloud_instance_type=rec.get("cloud_instance_type"),
        auto_candidate=bool(rec.get("auto_candidate", True)),
    )


def _model(rec: dict[str, Any]) -> ModelPreset:
    moe = rec.get("moe") or {}
    return ModelPreset(
        id=rec["id"],
        name=rec["name"],
        layers=int(rec["layers"]),
        hidden=int(rec["hidden"]),
        heads=int(rec["heads"]),
        kv_heads=int(rec["kv_heads"]),
        ffn_hidden=int(rec["ffn_hidden"]),
        vocab=int(rec["vocab"]),
        seq_len=int(rec["seq_len"]),
        ffn_gated=bool(rec["ffn_gated"]),
        tied_embeddings=bool(rec["tied_embeddings"]),
        learned_positions=bool(rec["learned_positions"]),
        biases=bool(rec["biases"]),
        moe_experts=moe.get("experts"),
        moe_active=moe.get("active"),
        published_params=rec.get("published_params"),
        published_active_params=rec.get("published_active_params"),
        source=rec["source"],
        as_of=rec["as_of"],
        extra={k: v for k, v in rec.items() if k in PRESET_EXTRA_KEYS},
    )


def _version(directory: Traversable) -> str:
    """Series plus the first 12 hex digits of sha256 over every catalog file's name and bytes, in name order."""
    digest = hashlib.sha256()
    files = sorted((f for f in directory.iterdir() if f.is_file() and f.name.endswith(".json")), key=lambda f: f.name)
    for item in files:
        digest.update(item.name.encode("utf-8"))
        digest.update(item.read_bytes())
    return f"{CATALOG_SERIES}-{digest.hexdigest()[:12]}"


@functools.lru_cache(maxsize=8)
def _load(directory: Traversable) -> Catalog:
    gpus = {rec["id"]: _gpu(rec) for rec in _records(directory, "gpus.json")}
    systems = {rec["id"]: _system(rec) for rec in _records(directory, "systems.json")}
    models = {rec["id"]: _model(rec) for rec in _records(directory, "models.json")}
    for system in systems.values():
        if system.gpu not in gpus:
            raise ValueError(f"catalog system {system.id} names unknown gpu {system.gpu}")
    from engine.catalog.parts import load_parts  # late import: parts.py is a leaf module, this avoids a cycle

    return Catalog(version=_version(directory), gpus=gpus, systems=systems, models=models, parts=load_parts(directory))


def load_catalog(path: Path | None = None) -> Catalog:
    """Load (and cache) the catalog; plans run many times per page, so parsing once matters. `path`: another
    catalog directory (tests, a reviewed copy); default the packaged one."""
    directory = Path(path).resolve() if path is not None else default_catalog_dir()
    return _load(directory)


# Lets callers (e.g. a management command reloading edited fixtures) drop the cached catalogs.
load_catalog.cache_clear = _load.cache_clear  # type: ignore[attr-defined]
