"""Replay the recorded AWS responses in `fixtures/aws/` through real boto3 clients with `Stubber` attached.

Why replay instead of reading the JSON directly: the offline price snapshot then goes through exactly the code a
live refresh runs (`AwsPriceFetcher`: paginators, filters, parsers), and Stubber checks both directions on the
way: every recorded page is validated against botocore's service model, and every request the fetcher sends
must equal the recorded one (`expected_params`), so fixtures and fetcher cannot drift apart unnoticed.

Layout (also in `fixtures/aws/manifest.json` and README.md): one JSON file per API query,
`{"operation", "client_region", "request", "pages": [response, ...]}`, where each page is a botocore response
dict exactly as boto3 returns it, except that timestamps are ISO-8601 strings (JSON has no datetime);
`botocore_value` converts them back, guided by the service model, in one place.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from .fetch import PRICING_CLIENT_REGION, AwsClients
from .offers import OfferRecord

__all__ = [
    "OfferSource",
    "RecordedManifest",
    "botocore_value",
    "fixtures_content_sha256",
    "manifest_load",
    "offers_sourced",
    "recorded_call_load",
    "recorded_clients",
    "stubbed_client",
]


@dataclass(frozen=True)
class RecordedManifest:
    observed_at: datetime
    source: str
    regions: tuple[str, ...]
    instance_types: tuple[str, ...]
    capacity_block_types: tuple[str, ...]
    capacity_block_instance_count: int
    capacity_block_duration_hours: int
    folder: Path
    spec_region: str = ""  # region whose describe_instance_types answer was recorded; "" = no specs recorded
    spec_patterns: tuple[str, ...] = ()
    offer_sources: tuple[OfferSource, ...] = ()
    savings_plans: bool = False  # describe_savings_plans_offering_rates recorded per region

    def savings_plans_path(self, region: str) -> Path:
        return self.folder / "savingsplans" / "describe_savings_plans_offering_rates" / f"{region}.json"

    def get_products_path(self, region: str, instance_type: str) -> Path:
        return self.folder / "pricing" / "get_products" / region / f"{instance_type}.json"

    def spot_path(self, region: str) -> Path:
        return self.folder / "ec2" / region / "describe_spot_price_history.json"

    def capacity_block_path(self, region: str, instance_type: str) -> Path:
        return self.folder / "ec2" / region / "describe_capacity_block_offerings" / f"{instance_type}.json"

    def instance_types_path(self, region: str) -> Path:
        return self.folder / "ec2" / region / "describe_instance_types.json"


@dataclass(frozen=True)
class OfferSource:
    """The primary source of one purchase option's recorded prices (optionally for some instance types only):
    its title, its own date and how firm it is. An empty `observed_at` keeps the date the record itself carries
    (spot's Timestamp)."""

    purchases: tuple[str, ...]
    source: str
    confidence: str
    observed_at: str = ""
    instance_types: tuple[str, ...] = ()

    def matches(self, record: OfferRecord) -> bool:
        return record.purchase in self.purchases and (
            not self.instance_types or record.instance_type in self.instance_types
        )


def offers_sourced(records: Sequence[OfferRecord], sources: Sequence[OfferSource]) -> list[OfferRecord]:
    """Each record with its source, date and confidence from the first matching `OfferSource` (unmatched records
    are left as they are). Why: recorded responses were assembled from price lists of different ages, and a plan
    must show each price's own date, never the day the files were written."""
    out = []
    for record in records:
        rule = next((s for s in sources if s.matches(record)), None)
        if rule is not None:
            record = replace(
                record,
                source=rule.source,
                confidence=rule.confidence,
                observed_at=rule.observed_at or record.observed_at,
            )
        out.append(record)
    return out


def _offer_sources(data: list[dict]) -> tuple[OfferSource, ...]:
    return tuple(
        OfferSource(
            purchases=tuple(item["purchases"]),
            source=item["source"],
            confidence=item.get("confidence", "list_price"),
            observed_at=item.get("observed_at", ""),
            instance_types=tuple(item.get("instance_types", ())),
        )
        for item in data
    )


def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def manifest_load(folder: Path) -> RecordedManifest:
    data = json.loads((Path(folder) / "manifest.json").read_text())
    block = data.get("capacity_block") or {}
    specs = data.get("instance_type_specs") or {}
    return RecordedManifest(
        observed_at=_parse_iso(data["observed_at"]),
        source=data["source"],
        regions=tuple(data["regions"]),
        instance_types=tuple(data["instance_types"]),
        capacity_block_types=tuple(block.get("instance_types", ())),
        capacity_block_instance_count=int(block.get("instance_count", 1)),
        capacity_block_duration_hours=int(block.get("duration_hours", 24)),
        folder=Path(folder),
        spec_region=specs.get("region", ""),
        spec_patterns=tuple(specs.get("instance_type_patterns", ())),
        offer_sources=_offer_sources(data.get("offer_sources", [])),
        savings_plans=bool(data.get("savings_plans", False)),
    )


def fixtures_content_sha256(folder: Path) -> str:
    """SHA-256 over every JSON file (relative path and bytes, in sorted order).

    Only the JSON counts: editing README.md or the assembly script does not change the prices, so it must not
    create a new snapshot; changing any response or the manifest does.
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.json")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def botocore_value(value: Any, shape: Any) -> Any:
    """A JSON value -> what boto3 would hand back for `shape`: the one place fixture values are converted.

    Only timestamps differ: boto3 parses them into aware `datetime`s, JSON can only hold strings, so strings
    under a `timestamp` shape become UTC datetimes. Everything else already has the wire type: `SpotPrice` and
    `UpfrontFee` stay strings, each `PriceList` entry stays a JSON *string* (botocore does not decode it), and
    Stubber rejects any other type (a float SpotPrice raises ParamValidationError).
    """
    if value is None or shape is None:
        return value
    kind = shape.type_name
    if kind == "timestamp" and isinstance(value, str):
        return _parse_iso(value)
    if kind == "structure" and isinstance(value, dict):
        return {key: botocore_value(item, shape.members.get(key)) for key, item in value.items()}
    if kind == "list" and isinstance(value, list):
        return [botocore_value(item, shape.member) for item in value]
    if kind == "map" and isinstance(value, dict):
        return {key: botocore_value(item, shape.value) for key, item in value.items()}
    return value


def recorded_call_load(path: Path, *, client: Any) -> tuple[str, list[tuple[dict, dict]]]:
    """One recorded query -> (client method, [(response, expected_params)] per page) for `Stubber.add_response`.

    Page n+1's expected request is the recorded request plus page n's NextToken (what a paginator sends).
    Timestamp arguments (spot `StartTime` = now) become `botocore.stub.ANY`: they differ on every run.
    """
    from botocore.stub import ANY

    data = json.loads(Path(path).read_text())
    operation = client.meta.service_model.operation_model(client.meta.method_to_api_mapping[data["operation"]])
    request = dict(data["request"])
    for name in request:
        member = operation.input_shape.members.get(name)
        if member is not None and member.type_name == "timestamp":
            request[name] = ANY
    token_key = "nextToken" if "nextToken" in operation.output_shape.members else "NextToken"  # savingsplans: camel
    calls = []
    token = None
    for page in data["pages"]:
        expected = dict(request) if token is None else {**request, token_key: token}
        calls.append((botocore_value(page, operation.output_shape), expected))
        token = page.get(token_key)
    return data["operation"], calls


@functools.cache
def _shared_loader() -> Any:
    """One botocore data loader for every stubbed client: the EC2 service model is large, so parse it once."""
    from botocore.loaders import create_loader

    return create_loader()


def stubbed_client(service: str, region: str) -> Any:
    """A real client (the class boto3.client returns) that never signs or sends: UNSIGNED, used under a Stubber.

    Its session ignores the user's AWS configuration (profile, config and credentials files), so the
    offline loader behaves the same on every machine, and an AWS_PROFILE naming a missing profile cannot
    break it.
    """
    import os

    import botocore.session
    from botocore import UNSIGNED
    from botocore.config import Config

    # (config-file key, environment variables, default, converter): no key and no variables = not configurable.
    isolated = botocore.session.Session(
        session_vars={
            "profile": (None, None, None, None),
            "config_file": (None, None, os.devnull, None),
            "credentials_file": (None, None, os.devnull, None),
        }
    )
    isolated.register_component("data_loader", _shared_loader())
    # botocore's create_client, not boto3's: boto3 would append its data path to the shared loader every call.
    return isolated.create_client(service, region_name=region, config=Config(signature_version=UNSIGNED))


@contextlib.contextmanager
def recorded_clients(folder: Path) -> Iterator[tuple[AwsClients, RecordedManifest]]:
    """Clients whose Stubbers hold every recorded page, queued in the order `AwsPriceFetcher.collect` asks.

    On a clean exit every queued response must have been consumed: a recorded query the fetcher no longer
    makes is as much a drift as a new query with no recording (which Stubber reports on the spot).
    """
    from botocore.stub import Stubber

    manifest = manifest_load(folder)
    clients = AwsClients(
        pricing=stubbed_client("pricing", PRICING_CLIENT_REGION),
        ec2={region: stubbed_client("ec2", region) for region in manifest.regions},
        savingsplans=stubbed_client("savingsplans", PRICING_CLIENT_REGION) if manifest.savings_plans else None,
    )
    stubbers = {"pricing": Stubber(clients.pricing)}
    if clients.savingsplans is not None:
        stubbers["savingsplans"] = Stubber(clients.savingsplans)
    stubbers.update({region: Stubber(client) for region, client in clients.ec2.items()})

    def queue(stubber: Stubber, path: Path) -> None:
        method, calls = recorded_call_load(path, client=stubber.client)
        for response, expected in calls:
            stubber.add_response(method, response, expected)

    for region in manifest.regions:
        for instance_type in manifest.instance_types:
            queue(stubbers["pricing"], manifest.get_products_path(region, instance_type))
    for region in manifest.regions:
        queue(stubbers[region], manifest.spot_path(region))
        for instance_type in manifest.capacity_block_types:
            queue(stubbers[region], manifest.capacity_block_path(region, instance_type))
    if manifest.savings_plans:
        for region in manifest.regions:
            queue(stubbers["savingsplans"], manifest.savings_plans_path(region))
    if manifest.spec_region:  # asked after `collect`, so queued after every price query on that client
        queue(stubbers[manifest.spec_region], manifest.instance_types_path(manifest.spec_region))

    with contextlib.ExitStack() as stack:
        for stubber in stubbers.values():
            stack.enter_context(stubber)
        yield clients, manifest
        for stubber in stubbers.values():
            stubber.assert_no_pending_responses()
