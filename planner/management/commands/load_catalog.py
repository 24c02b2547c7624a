"""`manage.py load_catalog`: check the hardware catalog and record its version.

Every record must carry `source` and `as_of`; a catalog that does not is refused, so no
unsourced number reaches a plan. The engine reads the files itself; the row written here lets
a plan's `catalog_version` be traced to what was loaded and when.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from planner.adapter import load_catalog
from planner.models import CatalogRelease


class Command(BaseCommand):
    help = "Validate the hardware catalog (engine/data/catalog) and record its version."

    def handle(self, *args: Any, **options: Any) -> None:
        load_catalog.cache_clear() if hasattr(load_catalog, "cache_clear") else None
        catalog = load_catalog()
        counts = {"gpus": len(catalog.gpus), "systems": len(catalog.systems), "models": len(catalog.models)}
        missing = [
            f"{kind}/{key}"
            for kind in counts
            for key, record in getattr(catalog, kind).items()
            if not getattr(record, "source", None) or not getattr(record, "as_of", None)
        ]
        if missing:
            raise CommandError(f"catalog records without source/as_of: {', '.join(missing)}")
        CatalogRelease.objects.update_or_create(version=catalog.version, defaults={"counts": counts})
        self.stdout.write(f"catalog {catalog.version}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
