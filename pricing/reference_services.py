"""Writes of the on-prem price references (HackSoft services): load `fixtures/prices/` into component prices, cost
parameters and Spot Advisor bands, and the staff's edit of one component price. Split from `pricing/services.py`,
which keeps the price snapshots' writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from django.db import transaction

from .models import ComponentPrice, CostParameter, SpotAdvisorBand
from .references import price_references_load
from .selectors import GRID_INTENSITY

__all__ = ["ReferenceLoadReport", "component_price_edit", "price_references_load_fixtures"]


@dataclass(frozen=True)
class ReferenceLoadReport:
    created: int
    updated: int
    unchanged: int
    kept_local_edits: int

    def __str__(self) -> str:
        return (
            f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.kept_local_edits} kept (edited in the admin)"
        )


def price_references_load_fixtures(*, folder: Path | str | None = None) -> ReferenceLoadReport:
    """Load fixtures/prices/ into ComponentPrice, CostParameter and SpotAdvisorBand; idempotent.

    Rows are matched on their natural key. A row edited in the admin (`locally_edited`) is never overwritten;
    any other row is brought back to the fixture's values, so `make install` after a fixture change updates it.
    """
    refs = price_references_load(folder)
    counts = {"created": 0, "updated": 0, "unchanged": 0, "kept_local_edits": 0}

    def upsert(model: type, key: dict, values: dict) -> None:
        row = model.objects.filter(**key).first()
        if row is None:
            model.objects.create(**key, **values)
            counts["created"] += 1
        elif row.locally_edited:
            counts["kept_local_edits"] += 1
        elif any(getattr(row, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(row, name, value)
            row.save()
            counts["updated"] += 1
        else:
            counts["unchanged"] += 1

    with transaction.atomic():
        for part in refs.parts:
            upsert(
                ComponentPrice,
                {"part_number": part.part_number, "catalog_id": part.catalog_id},
                {
                    "description": part.description,
                    "category": part.category,
                    "unit_price_usd": part.unit_price_usd,
                    "source": part.source,
                    "as_of": part.as_of,
                    "confidence": part.confidence,
                },
            )
        parameter_rows = [(name, "", param) for name, param in refs.parameters.items()]
        parameter_rows += [(GRID_INTENSITY, scope, param) for scope, param in refs.carbon.items()]
        for name, scope, param in parameter_rows:
            upsert(
                CostParameter,
                {"name": name, "scope": scope},
                {
                    "value": param.value,
                    "unit": param.unit,
                    "source": param.source,
                    "as_of": param.as_of,
                    "confidence": param.confidence,
                },
            )
        for band in refs.spot_bands:
            upsert(
                SpotAdvisorBand,
                {"region": band.region, "instance_type": band.instance_type},
                {
                    "band": band.band,
                    "savings_percent": band.savings_percent,
                    "as_of": band.as_of,
                    "source": band.source,
                },
            )
    return ReferenceLoadReport(**counts)


def component_price_edit(*, price: ComponentPrice, unit_price_usd: Decimal, source: str, as_of: str) -> ComponentPrice:
    """An admin edit: store it and mark the row so fixture reloads leave it alone."""
    price.unit_price_usd = unit_price_usd
    price.source = source
    price.as_of = as_of
    price.locally_edited = True
    price.save()
    return price
