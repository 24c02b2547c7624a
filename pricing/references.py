"""Read the on-prem price references in `fixtures/prices/` into pricing records: pure Python, no Django.

Files (each record carries `source`, `as_of` and a `confidence` label):

- `components.json`: unit prices of parts (matched to BOM lines by `part_number`) and systems (by `catalog_id`);
- `parameters.json`: named costing parameters (install/integration %, maintenance %, utilisation, default
  electricity and colocation prices, cloud PUE, spot checkpoint/restart times), each with the range a request's
  `pricing.parameters` may set it to (checked by engine.request.validation);
- `carbon.json`: grid carbon intensity for the default site and per AWS region;
- `spot_advisor.json`: Spot Instance Advisor interruption bands per (region, instance type), dated.

The Django side loads the same files into editable tables (`manage.py load_prices`); this module is what the
pure costing tests use, and the fallback when the tables are empty. It returns `pricing.records` (never engine
types): `planner.adapter` converts them for costing.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from .records import ParameterRecord, PartPriceRecord, PriceReferences, SpotBandRecord

__all__ = [
    "CONFIDENCE_LABELS",
    "FIXTURES_PRICES_DIR",
    "PriceReferences",
    "price_references_load",
]

FIXTURES_PRICES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
CONFIDENCE_LABELS = ("list_price", "public_estimate", "assumption")


def _confidence(value: str, where: str) -> str:
    if value not in CONFIDENCE_LABELS:
        raise ValueError(f"{where}: confidence {value!r} is not one of {', '.join(CONFIDENCE_LABELS)}")
    return value


def _within_limits(record: dict) -> None:
    """A parameter's default must lie in the range a request may set it to (`minimum`..`maximum`)."""
    where = f"parameters.json {record.get('name')}"
    if "minimum" not in record or "maximum" not in record:
        raise ValueError(f"{where}: minimum and maximum are required (the range a request may set)")
    value, low, high = Decimal(record["value"]), Decimal(record["minimum"]), Decimal(record["maximum"])
    too_low = value <= low if record.get("minimum_exclusive") else value < low
    if too_low or value > high:
        raise ValueError(f"{where}: default {value} is outside its range {low}..{high}")


def _parameter(record: dict, name: str, unit: str, where: str) -> ParameterRecord:
    return ParameterRecord(
        name=name,
        value=Decimal(record["value"]),
        unit=unit,
        source=record["source"],
        as_of=record["as_of"],
        confidence=_confidence(record["confidence"], where),
    )


def price_references_load(folder: Path | str | None = None) -> PriceReferences:
    """Parse and check the four reference files (raises ValueError naming the bad record)."""
    folder = Path(folder) if folder is not None else FIXTURES_PRICES_DIR
    components = json.loads((folder / "components.json").read_text())
    parameters = json.loads((folder / "parameters.json").read_text())
    carbon = json.loads((folder / "carbon.json").read_text())
    advisor = json.loads((folder / "spot_advisor.json").read_text())

    parts = []
    for i, r in enumerate(components["records"]):
        where = f"components.json record {i}"
        if not (r.get("part_number") or r.get("catalog_id")):
            raise ValueError(f"{where}: needs a part_number or a catalog_id")
        for key in ("unit_price_usd", "source", "as_of"):
            if not r.get(key):
                raise ValueError(f"{where}: {key} is required")
        parts.append(
            PartPriceRecord(
                part_number=r.get("part_number") or "",
                catalog_id=r.get("catalog_id") or "",
                description=r.get("description", ""),
                category=r.get("category", ""),
                unit_price_usd=Decimal(r["unit_price_usd"]),
                source=r["source"],
                as_of=r["as_of"],
                confidence=_confidence(r.get("confidence", ""), where),
            )
        )
    for r in parameters["records"]:
        _within_limits(r)
    params = {
        r["name"]: _parameter(r, r["name"], r["unit"], f"parameters.json {r['name']}") for r in parameters["records"]
    }
    intensities = {
        r["scope"]: _parameter(r, f"grid_gco2e_per_kwh.{r['scope']}", carbon["unit"], f"carbon.json {r['scope']}")
        for r in carbon["records"]
    }
    bands = tuple(
        SpotBandRecord(
            region=r["region"],
            instance_type=r["instance_type"],
            band=r["band"],
            savings_percent=r.get("savings_percent"),
            as_of=r.get("as_of", advisor["as_of"]),
            source=r.get("source", advisor["source"]),
        )
        for r in advisor["records"]
    )
    return PriceReferences(
        parts=tuple(parts),
        parameters=params,
        carbon=intensities,
        spot_bands=bands,
        files={name: str(folder / name) for name in ("components.json", "parameters.json", "carbon.json")},
    )
