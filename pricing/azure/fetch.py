"""Fetch Azure GPU VM prices from the public Retail Prices API with an HTTP getter the caller passes in.

Why an injected getter: the tests and the offline loader replay recorded JSON pages through this exact code
(`RecordedPages`), and only a user's `refresh_prices --azure` reaches the network (`urllib_get_json`). The API
needs no authentication; it pages with `NextPageLink` (100 items a page), which is followed to the end.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pricing.aws.offers import OfferRecord

from .parse import azure_offers
from .skus import AZURE_GPU_SKUS

__all__ = [
    "AZURE_API_VERSION",
    "AZURE_PRICES_URL",
    "AzurePriceFetcher",
    "GetJson",
    "RecordedPages",
    "prices_url",
    "urllib_get_json",
]

AZURE_PRICES_URL = "https://prices.azure.com/api/retail/prices"
AZURE_API_VERSION = "2023-01-01-preview"
MAX_PAGES = 50  # a safety stop: a GPU query answers in one or two pages
GetJson = Callable[[str], dict[str, Any]]


def prices_url(*, region: str, skus: Sequence[str]) -> str:
    """The one query per region: every GPU size at once (an OData `$filter`)."""
    names = " or ".join(f"armSkuName eq '{sku}'" for sku in skus)
    odata = f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and ({names})"
    return f"{AZURE_PRICES_URL}?{urllib.parse.urlencode({'api-version': AZURE_API_VERSION, '$filter': odata})}"


def urllib_get_json(url: str, *, timeout_s: float = 30.0) -> dict[str, Any]:
    """The live getter (standard library only). Only `refresh_prices` run by a user calls it."""
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "cluster-planner"})
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        return json.loads(response.read().decode("utf-8"))


class RecordedPages:
    """A getter that answers from recorded pages (`{"pages": [{"url", "response"}]}`) and fails on any URL it
    was not recorded with, so a changed query cannot silently read stale pages."""

    def __init__(self, path: Path) -> None:
        data = json.loads(Path(path).read_text())
        self.pages = {page["url"]: page["response"] for page in data["pages"]}
        self.asked: list[str] = []

    def __call__(self, url: str) -> dict[str, Any]:
        self.asked.append(url)
        try:
            return self.pages[url]
        except KeyError:
            raise LookupError(f"no recorded Azure page for {url}") from None

    def assert_all_used(self) -> None:
        unused = set(self.pages) - set(self.asked)
        if unused:
            raise AssertionError(f"recorded Azure pages never asked for: {sorted(unused)}")


class AzurePriceFetcher:
    def __init__(self, get_json: GetJson = urllib_get_json) -> None:
        self.get_json = get_json

    def items(self, *, region: str, skus: Sequence[str]) -> list[dict[str, Any]]:
        """Every item of one region's query, following `NextPageLink` to the last page."""
        url: str | None = prices_url(region=region, skus=skus)
        items: list[dict[str, Any]] = []
        for _ in range(MAX_PAGES):
            if not url:
                return items
            page = self.get_json(url)
            items.extend(page.get("Items", []))
            url = page.get("NextPageLink")
        raise RuntimeError(f"Azure prices for {region} did not end within {MAX_PAGES} pages")

    def collect(
        self,
        *,
        regions: Iterable[str],
        skus: Sequence[str] = tuple(AZURE_GPU_SKUS),
        confidence_by_meter: dict[str, str] | None = None,
    ) -> list[OfferRecord]:
        items = [item for region in regions for item in self.items(region=region, skus=skus)]
        return azure_offers(items, confidence_by_meter=confidence_by_meter)
