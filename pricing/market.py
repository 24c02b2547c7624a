"""The recorded prices of every provider besides AWS, read through the same parsers a live refresh uses.

Why one module: the offline snapshot gathers AWS (replayed through boto3 + Stubber in `pricing.aws.recorded`) and
these: Azure Retail Prices API pages (replayed through `AzurePriceFetcher` with a recorded getter), Google Cloud
Billing Catalog rows, and the neocloud / contract price lists. Each offer keeps its own source, date and
confidence. Django-free, so tests check the parsers without a database.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from .aws.offers import OfferRecord
from .azure.fetch import AzurePriceFetcher, RecordedPages
from .gcp.catalog import catalog_offers
from .price_lists import price_list_offers

__all__ = [
    "MarketFolders",
    "azure_recorded_offers",
    "gcp_recorded_offers",
    "market_content_sha256",
    "market_recorded_offers",
    "price_list_recorded_offers",
]


@dataclass(frozen=True)
class MarketFolders:
    """Where the recorded non-AWS prices live (the repository's fixtures by default)."""

    azure: Path
    gcp_skus: Path
    price_lists: Path

    @classmethod
    def under(cls, fixtures: Path) -> MarketFolders:
        return cls(
            azure=fixtures / "azure",
            gcp_skus=fixtures / "gcp" / "skus.json",
            price_lists=fixtures / "prices" / "cloud_price_lists.json",
        )

    def files(self) -> list[Path]:
        return [*sorted(self.azure.rglob("*.json")), self.gcp_skus, self.price_lists]


def azure_recorded_offers(folder: Path) -> list[OfferRecord]:
    """Replay every recorded region's pages through the live fetcher; every recorded page must be asked for."""
    manifest = json.loads((folder / "manifest.json").read_text())
    labels = {meter: "assumption" for meter in manifest.get("assumed_meters", [])}
    offers: list[OfferRecord] = []
    for region in manifest["regions"]:
        pages = RecordedPages(folder / "retail_prices" / f"{region}.json")
        offers += AzurePriceFetcher(pages).collect(regions=[region], confidence_by_meter=labels)
        pages.assert_all_used()
    return offers


def gcp_recorded_offers(path: Path) -> list[OfferRecord]:
    data = json.loads(path.read_text())
    return catalog_offers(
        data["response"]["skus"], source=data["source"], confidence_by_sku=data.get("confidence_by_sku", {})
    )


def price_list_recorded_offers(path: Path) -> list[OfferRecord]:
    return price_list_offers(json.loads(path.read_text())["records"])


def market_recorded_offers(folders: MarketFolders) -> list[OfferRecord]:
    """Azure, Google Cloud and the neocloud / contract price lists, in that order."""
    return [
        *azure_recorded_offers(folders.azure),
        *gcp_recorded_offers(folders.gcp_skus),
        *price_list_recorded_offers(folders.price_lists),
    ]


def market_content_sha256(folders: MarketFolders) -> str:
    """SHA-256 over the recorded files' names and bytes: a changed price makes a new snapshot."""
    digest = hashlib.sha256()
    for path in folders.files():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
