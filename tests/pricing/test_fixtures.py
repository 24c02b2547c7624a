"""The recorded responses themselves: honest metadata, botocore shapes, and reproducible from assemble.py."""

from __future__ import annotations

import filecmp
import importlib.util
import json

from botocore.stub import Stubber

from pricing.aws.recorded import manifest_load, recorded_call_load, stubbed_client
from tests.pricing.conftest import FIXTURES


def test_manifest_dates_and_source():
    data = json.loads((FIXTURES / "manifest.json").read_text())
    assert data["observed_at"] == "2026-11-09T00:00:00Z"
    assert "assembled from published" in data["observed_at_note"].lower()
    assert "skypilot-catalog" in data["source"] and "cloud-pricing" not in data["source"]
    manifest = manifest_load(FIXTURES)
    assert manifest.regions == ("us-east-1", "us-west-2")
    assert len(manifest.instance_types) == 7  # the 6 priced types plus p5e (Capacity Blocks only)
    assert manifest.capacity_block_types == ("p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge")


def test_readme_is_honest_about_provenance():
    readme = (FIXTURES / "README.md").read_text()
    assert "not recorded from a live AWS account" in readme
    assert "botocore 1.44.5" in readme
    assert "2026-11-09" in readme


def test_every_recorded_page_passes_botocore_validation():
    """Stubber validates each response against botocore 1.44.5's service model as it is queued."""
    manifest = manifest_load(FIXTURES)
    files = [*sorted((FIXTURES / "pricing").rglob("*.json")), *sorted((FIXTURES / "ec2").rglob("*.json"))]
    files += sorted((FIXTURES / "savingsplans").rglob("*.json"))
    # get_products (7 types x 2 regions), spot (2 regions), capacity blocks (3 types x 2 regions), instance types,
    # Savings Plans rates (2 regions)
    assert len(files) == 14 + 2 + 6 + 1 + 2
    clients = {}
    for path in files:
        data = json.loads(path.read_text())
        service = {"get_products": "pricing", "describe_savings_plans_offering_rates": "savingsplans"}.get(
            data["operation"], "ec2"
        )
        key = (service, data["client_region"])
        clients.setdefault(key, stubbed_client(*key))
        method, calls = recorded_call_load(path, client=clients[key])
        with Stubber(clients[key]) as stub:
            for response, expected in calls:
                stub.add_response(method, response, expected)  # raises ParamValidationError on a bad shape
        if data["operation"] == "get_products":
            assert data["client_region"] == "us-east-1"
            assert all(isinstance(item, str) for page in data["pages"] for item in page["PriceList"])
    assert manifest.observed_at.isoformat() == "2026-11-09T00:00:00+00:00"


def test_assemble_script_reproduces_the_files(tmp_path):
    spec = importlib.util.spec_from_file_location("assemble", FIXTURES / "assemble.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.HERE = tmp_path
    module.main()
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    committed = sorted(p.relative_to(FIXTURES) for p in FIXTURES.rglob("*.json"))
    assert generated == committed
    _match, mismatch, errors = filecmp.cmpfiles(tmp_path, FIXTURES, [str(p) for p in generated], shallow=False)
    assert mismatch == [] and errors == []
