"""GPU instance specs: describe_instance_types (Stubber, two pages), the override table for its known errors
(cloud-pricing.md section 2), the catalog mapping, storage per snapshot, and costing reading them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest
from botocore.exceptions import ParamValidationError
from botocore.stub import Stubber

from engine.catalog.hardware import default_catalog_dir
from planner.adapter import cost_inputs_for_snapshot
from pricing.aws.fetch import AwsClients, AwsPriceFetcher
from pricing.aws.instances import INSTANCE_GPUS
from pricing.aws.recorded import recorded_clients
from pricing.aws.specs import (
    GPU_INSTANCE_TYPE_PATTERNS,
    GPU_MODELS,
    SPEC_OVERRIDES,
    describe_instance_types_params,
    instance_spec_parse,
    instance_spec_resolve,
    instance_specs_resolve,
    instance_type_patterns,
)
from pricing.models import CloudInstanceType, CloudOffer, PriceSnapshot
from pricing.selectors import cloud_instance_gpus_for_snapshot
from pricing.services import price_snapshot_load_fixtures, price_snapshot_refresh_live
from tests.pricing.conftest import FIXTURES, REPO, page_for, recorded

SPECS_FILE = "ec2/us-east-1/describe_instance_types.json"


def _items() -> list[dict]:
    return [item for page in recorded(SPECS_FILE)["pages"] for item in page["InstanceTypes"]]


def _resolved() -> dict:
    return {r.instance_type: r for r in instance_specs_resolve(_items())}


# ------------------------------------------------------------------------------------------ fetch (Stubber)


def test_describe_instance_types_pages_with_instance_type_wildcards(ec2_use1):
    """One paginated query, filtered by instance-type wildcards (no gpu-info filter exists), NextToken followed."""
    data = recorded(SPECS_FILE)
    first, second = data["pages"]
    assert "NextToken" in first and "NextToken" not in second
    expected = {"Filters": [{"Name": "instance-type", "Values": list(GPU_INSTANCE_TYPE_PATTERNS)}], "MaxResults": 100}
    assert data["request"] == expected
    with Stubber(ec2_use1) as stub:
        stub.add_response("describe_instance_types", page_for(ec2_use1, "describe_instance_types", first), expected)
        stub.add_response(
            "describe_instance_types",
            page_for(ec2_use1, "describe_instance_types", second),
            {**expected, "NextToken": first["NextToken"]},
        )
        items = AwsPriceFetcher(AwsClients(pricing=None, ec2={"us-east-1": ec2_use1})).instance_types(
            region="us-east-1", patterns=GPU_INSTANCE_TYPE_PATTERNS
        )
        stub.assert_no_pending_responses()
    assert [i["InstanceType"] for i in items] == [i["InstanceType"] for i in _items()]
    assert len(items) == len(first["InstanceTypes"]) + len(second["InstanceTypes"]) == 11


def test_stubber_rejects_a_gpu_count_as_string(ec2_use1):
    page = {"InstanceTypes": [{"InstanceType": "p5.48xlarge", "GpuInfo": {"Gpus": [{"Name": "H100", "Count": "8"}]}}]}
    with Stubber(ec2_use1) as stub, pytest.raises(ParamValidationError):
        stub.add_response("describe_instance_types", page)


def test_patterns_add_the_family_of_requested_types():
    assert instance_type_patterns(["p5.48xlarge", "trn1.32xlarge"]) == [*GPU_INSTANCE_TYPE_PATTERNS, "trn1.*"]
    assert describe_instance_types_params(["p5.*"]) == {"Filters": [{"Name": "instance-type", "Values": ["p5.*"]}]}


# ---------------------------------------------------------------------------------------------- parsing


def test_parse_keeps_what_aws_said():
    p5 = instance_spec_parse(next(i for i in _items() if i["InstanceType"] == "p5.48xlarge"))
    assert (p5.gpus, p5.gpu_name, p5.gpu_manufacturer, p5.gpu_memory_mib) == (8, "H100", "NVIDIA", 81920)
    assert (p5.vcpus, p5.memory_mib, p5.efa_max_interfaces) == (192, 2097152, 32)
    p5e = instance_spec_parse(next(i for i in _items() if i["InstanceType"] == "p5e.48xlarge"))
    assert (p5e.gpus, p5e.gpu_name, p5e.gpu_memory_mib) == (0, None, None)  # no GpuInfo at all


# ------------------------------------------------------------------------------------- the override table


def test_each_known_error_is_fixed():
    specs = _resolved()
    expected = {  # type: (whole GPUs, catalog id, marketing GiB per GPU, API MiB per GPU after overrides)
        "p4d.24xlarge": (8, "a100-40gb-sxm", 40, 40960),
        "p4de.24xlarge": (8, "a100-80gb-sxm", 80, 81920),  # Name "A100" is the 80 GB part
        "p5.48xlarge": (8, "h100-sxm", 80, 81920),
        "p5.4xlarge": (1, "h100-sxm", 80, 81920),  # model "None", 0 MiB
        "p5e.48xlarge": (8, "h200-sxm", 141, 144384),  # H200 missing
        "p5en.48xlarge": (8, "h200-sxm", 141, 144384),  # Name "NVIDIA"
        "p6-b200.48xlarge": (8, "b200-hgx", 180, 183359),
        "g6e.xlarge": (1, "l40s", 48, 45776),
        "g6e.12xlarge": (4, "l40s", 48, 45776),
        "g6e.48xlarge": (8, "l40s", 48, 45776),  # 0 MiB; 45776 MiB is the "48 GB" part
        "g6f.large": (0, "", None, 2861),  # 1/8 of an L4: no whole GPU
    }
    got = {t: (r.spec.gpus, r.gpu_model, r.gpu_memory_gib, r.spec.gpu_memory_mib) for t, r in specs.items()}
    assert got == expected
    assert specs["g6f.large"].spec.gpu_fraction == Decimal("0.125")
    assert specs["p5e.48xlarge"].overridden_fields == ["gpus", "gpu_name", "gpu_manufacturer", "gpu_memory_mib"]
    assert all(not r.warnings for r in specs.values())


def test_every_override_changes_something_the_api_got_wrong():
    """Each row fires on the recording, replaces a known-wrong value, and without it the type is mis-described."""
    specs = _resolved()
    fired = {(o["field"], o["reason"]) for r in specs.values() for o in r.overridden}
    for row in SPEC_OVERRIDES:
        assert (row.field, row.reason) in fired, f"override never applied: {row}"
        assert row.source.startswith("known describe_instance_types data errors"), row
    for resolved in specs.values():
        for change in resolved.overridden:
            assert change["api"] != change["value"]
            assert change["api"] == getattr(resolved.api, change["field"])
        if resolved.overridden:
            bare = instance_spec_resolve(resolved.api, overrides=())
            corrected = (resolved.spec.gpus, resolved.gpu_model, resolved.spec.gpu_fraction)
            assert (bare.spec.gpus, bare.gpu_model, bare.spec.gpu_fraction) != corrected, resolved.instance_type


def test_an_override_is_a_no_op_once_aws_fixes_the_data():
    item = next(i for i in _items() if i["InstanceType"] == "p4de.24xlarge")
    fixed = json.loads(json.dumps(item))
    fixed["GpuInfo"]["Gpus"][0]["Name"] = "A100 80GB"
    resolved = instance_spec_resolve(instance_spec_parse(fixed))
    assert resolved.overridden == () and resolved.warnings == ()
    assert resolved.gpu_model == "a100-80gb-sxm"


def test_an_unexpected_api_value_is_kept_and_reported():
    item = json.loads(json.dumps(next(i for i in _items() if i["InstanceType"] == "p5en.48xlarge")))
    item["GpuInfo"]["Gpus"][0]["Name"] = "H200 NVL"
    resolved = instance_spec_resolve(instance_spec_parse(item))
    assert resolved.spec.gpu_name == "H200 NVL" and resolved.gpu_model == ""
    assert any("neither the known error" in w for w in resolved.warnings)
    assert any("not in the GPU model table" in w for w in resolved.warnings)


def test_curated_table_agrees_with_api_plus_overrides():
    """pricing.aws.instances.INSTANCE_GPUS (the fallback) says the same as the recorded API data + overrides."""
    specs = _resolved()
    for instance_type, curated in INSTANCE_GPUS.items():
        resolved = specs[instance_type]
        assert (resolved.spec.gpus, resolved.gpu_model) == (curated.gpus, curated.gpu_model), instance_type


def test_marketing_memory_comes_from_the_catalog_not_mib():
    catalog = {r["id"]: r for r in json.loads((default_catalog_dir() / "gpus.json").read_text())["records"]}
    for (_maker, _name, mib), model in GPU_MODELS.items():
        if model.in_catalog:
            assert catalog[model.gpu_model]["hbm_gib"] == model.memory_gib
        else:
            assert model.gpu_model not in catalog
        assert model.memory_gib >= mib // 1024  # AWS's MiB sit at or below the marketing figure


def test_specs_module_is_pure():
    code = (
        "import sys, pricing.aws.specs; print(','.join(m for m in ('django', 'boto3', 'botocore') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


# ------------------------------------------------------------------------------------- storage and costing


@pytest.mark.django_db
def test_load_fixtures_stores_specs_per_snapshot_idempotently():
    snapshot = price_snapshot_load_fixtures()
    again = price_snapshot_load_fixtures()
    assert again.pk == snapshot.pk
    assert CloudInstanceType.objects.count() == CloudInstanceType.objects.filter(snapshot=snapshot).count() == 11
    p4de = CloudInstanceType.objects.get(snapshot=snapshot, instance_type="p4de.24xlarge")
    assert (p4de.gpus, p4de.gpu_model, p4de.gpu_name, p4de.gpu_memory_gib) == (8, "a100-80gb-sxm", "A100 80GB", 80)
    assert p4de.raw["GpuInfo"]["Gpus"][0]["Name"] == "A100"  # raw is what AWS said
    [change] = p4de.overridden_fields
    assert change["field"] == "gpu_name" and change["api"] == "A100" and change["value"] == "A100 80GB"
    assert "known describe_instance_types data errors" in change["source"] and change["reason"]
    assert p4de.overrides_version
    g6f = CloudInstanceType.objects.get(snapshot=snapshot, instance_type="g6f.large")
    assert (g6f.gpus, g6f.gpu_fraction, g6f.gpu_model) == (0, Decimal("0.1250"), "")
    assert (
        CloudOffer.objects.get(
            snapshot=snapshot, instance_type="g6e.48xlarge", region="us-east-1", purchase="on_demand"
        ).gpu_model
        == "l40s"
    )


@pytest.mark.django_db
def test_live_refresh_fetches_and_stores_specs():
    with recorded_clients(FIXTURES) as (clients, manifest):
        snapshot = price_snapshot_refresh_live(
            regions=manifest.regions,
            instance_types=manifest.instance_types,
            clients=clients,
            capacity_block_types=manifest.capacity_block_types,
        )
    assert snapshot.kind == PriceSnapshot.Kind.LIVE
    assert snapshot.instance_types.get(instance_type="p5en.48xlarge").gpu_model == "h200-sxm"


@pytest.mark.django_db
def test_live_refresh_keeps_prices_when_specs_are_refused(pricing_client, ec2_use1):
    page = recorded("pricing/get_products/us-east-1/g6e.48xlarge.json")["pages"][0]
    with Stubber(pricing_client) as p, Stubber(ec2_use1) as e:
        p.add_response("get_products", page)
        e.add_response("describe_spot_price_history", {"SpotPriceHistory": []})
        e.add_client_error("describe_instance_types", "UnauthorizedOperation", "not allowed: ec2:DescribeInstanceTypes")
        snapshot = price_snapshot_refresh_live(
            regions=["us-east-1"],
            instance_types=["g6e.48xlarge"],
            clients=AwsClients(pricing=pricing_client, ec2={"us-east-1": ec2_use1}),
        )
    assert not snapshot.instance_types.exists()
    assert "instance type specs unavailable" in snapshot.notes
    offer = snapshot.offers.get(purchase="on_demand")
    assert (offer.gpus, offer.gpu_model) == (8, "l40s")  # the curated table
    assert cost_inputs_for_snapshot(snapshot=snapshot).cloud_prices[0].gpu_model == "l40s"


@pytest.mark.django_db
def test_costing_reads_the_snapshots_specs_and_falls_back_to_the_offer():
    snapshot = price_snapshot_load_fixtures()
    CloudInstanceType.objects.filter(snapshot=snapshot, instance_type="g6e.48xlarge").update(gpus=4, gpu_model="x")
    prices = cost_inputs_for_snapshot(snapshot=snapshot).cloud_prices
    assert {(p.gpus, p.gpu_model) for p in prices if p.instance_type == "g6e.48xlarge"} == {(4, "x")}
    CloudInstanceType.objects.filter(snapshot=snapshot).delete()  # a snapshot stored before specs existed
    assert cloud_instance_gpus_for_snapshot(snapshot=snapshot) == {}
    prices = cost_inputs_for_snapshot(snapshot=snapshot).cloud_prices
    assert {(p.gpus, p.gpu_model) for p in prices if p.instance_type == "g6e.48xlarge"} == {(8, "l40s")}


@pytest.mark.django_db
def test_a_folder_recorded_without_specs_still_loads(tmp_path):
    folder = tmp_path / "aws"
    shutil.copytree(FIXTURES, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["instance_type_specs"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / SPECS_FILE).unlink()
    snapshot = price_snapshot_load_fixtures(folder=folder)
    assert not snapshot.instance_types.exists()
    assert snapshot.offers.get(instance_type="p5.48xlarge", region="us-east-1", purchase="on_demand").gpus == 8
