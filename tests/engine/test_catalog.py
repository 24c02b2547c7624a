"""Catalog integrity: every record traceable to a source and a date, references resolve, version is stable."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from engine import load_catalog
from engine.catalog.hardware import default_catalog_dir

CATALOG_FILES = ["gpus.json", "systems.json", "models.json"]
REQUIRED_SYSTEMS = [
    "dgx-a100-80gb",
    "dgx-h100",
    "dgx-h200",
    "dgx-b200",
    "dgx-b300",
    "gb200-nvl72",
    "gb300-nvl72",
    "hgx-h100-oem",
]
REQUIRED_PRESETS = ["llama-3-8b", "llama-3-70b", "llama-3-405b", "gpt-3-175b", "mixtral-8x7b", "mixtral-8x22b"]


@pytest.mark.parametrize("name", CATALOG_FILES)
def test_every_record_has_source_and_iso_as_of(name):
    records = json.loads((default_catalog_dir() / name).read_text())["records"]
    assert records
    for rec in records:
        assert isinstance(rec["source"], str) and rec["source"].strip(), rec["id"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", rec["as_of"]), rec["id"]
        dt.date.fromisoformat(rec["as_of"])  # raises on an impossible date


def test_required_ids_present(catalog):
    assert set(REQUIRED_SYSTEMS) <= set(catalog.systems)
    assert set(REQUIRED_PRESETS) <= set(catalog.models)
    for system in catalog.systems.values():
        assert system.gpu in catalog.gpus


def test_spec_figures_match_hardware_reference(catalog):
    # reference/hardware.md section 1 and 2 (dense peaks, never sparse).
    h100 = catalog.gpus["h100-sxm"]
    assert (h100.bf16_dense_tflops, h100.fp8_dense_tflops, h100.hbm_gib, h100.hbm_tbps) == (989, 1979, 80, 3.35)
    assert catalog.gpus["a100-80gb-sxm"].fp8_dense_tflops is None
    assert catalog.gpus["b200-gb200"].tdp_w == 1200
    assert catalog.systems["dgx-h100"].max_power_kw == 10.2
    assert catalog.systems["dgx-b200"].systems_per_rack == 2
    assert catalog.systems["gb200-nvl72"].gpus_per_system == 72
    assert catalog.systems["gb300-nvl72"].max_power_kw == 142


def test_uncertain_b300_figures_are_flagged(catalog):
    for gpu_id in ("b300-hgx", "b300-gb300"):
        assert "uncertain" in catalog.gpus[gpu_id].confidence


def test_version_format_and_cache(catalog):
    assert re.fullmatch(r"2026\.11-[0-9a-f]{12}", catalog.version)
    assert load_catalog() is catalog  # cached: plans must not re-parse JSON


def test_version_changes_with_content(tmp_path: Path):
    for name in CATALOG_FILES:
        (tmp_path / name).write_bytes((default_catalog_dir() / name).read_bytes())
    first = load_catalog(tmp_path).version
    models = json.loads((tmp_path / "models.json").read_text())
    models["records"][0]["seq_len"] = 4096
    (tmp_path / "models.json").write_text(json.dumps(models))
    load_catalog.cache_clear()
    assert load_catalog(tmp_path).version != first


def test_catalog_is_package_data_and_its_version_is_content_based(tmp_path: Path):
    """The catalog ships inside the engine package; a byte-identical copy elsewhere has the same version (the hash
    covers file names and bytes, never the location), so moving the files did not change `catalog_version`."""
    packaged = default_catalog_dir()
    assert Path(str(packaged)).resolve().parts[-3:] == ("engine", "data", "catalog")
    names = sorted(f.name for f in packaged.iterdir() if f.name.endswith(".json"))
    assert names == ["gpus.json", "models.json", "parts.json", "systems.json"]
    for name in names:
        (tmp_path / name).write_bytes((packaged / name).read_bytes())
    assert load_catalog(tmp_path).version == load_catalog().version
    assert load_catalog(tmp_path).parts.parts.keys() == load_catalog().parts.parts.keys()
