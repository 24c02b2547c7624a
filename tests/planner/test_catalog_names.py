"""No catalog id where a reader looks: the plan page, the PDF report and the BOM CSV's header name systems and GPUs
as their makers do ("NVIDIA DGX B200", not "dgx-b200"). Scanned on stored golden plans that mention every system
(the auto plans compare all of them), a serving plan and a capacity plan; the names expected are the catalog's own
(engine/data/catalog), written out here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from planner.adapter import load_catalog
from planner.models import Plan
from planner.outputs.formatting import catalog_name, human
from planner.presenters import report_context

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"
PLANS = ("train-70b-auto-90d", "train-8b-auto-30d", "serve-70b-auto", "capacity-gb200-50mw")


def _visible(html: str) -> str:
    """The text a reader sees: no scripts, no SVG, no raw plan/request JSON blocks, no tags or attributes."""
    for pattern in (r"<script.*?</script>", r"<pre>.*?</pre>", r"<svg.*?</svg>", r"<[^>]+>"):
        html = re.sub(pattern, " ", html, flags=re.S)
    return html


def _ids_in(text: str) -> list[str]:
    """Each catalog id in the text, with the words around it (so a failure says where)."""
    catalog = load_catalog()
    found = []
    parts = catalog.parts.parts if catalog.parts else {}  # switches, storage, servers, CDUs: ids a reader never knows
    for i in [*catalog.systems, *catalog.gpus, *parts]:
        for match in re.finditer(rf"(?<![\w.-]){re.escape(i)}(?![\w-])", text):
            found.append(" ".join(text[max(0, match.start() - 80) : match.end() + 30].split()))
    return found


def _stored(name: str) -> dict:
    data = json.loads((GOLDEN / f"{name}.json").read_text())
    return data.get("result", data)


def test_catalog_ids_read_as_their_products():
    assert catalog_name("dgx-b200") == "NVIDIA DGX B200"
    assert catalog_name("gb200-nvl72") == "NVIDIA GB200 NVL72 rack"
    assert catalog_name("h100-sxm") == "NVIDIA H100 SXM5 80GB"
    assert catalog_name("air_containment") == "air_containment"  # not an id: left to the other rules
    assert human({"dgx-h100": 139457572}) == "NVIDIA DGX H100 139,457,572"


@pytest.mark.parametrize("name", PLANS)
def test_no_catalog_id_on_the_page_the_pdf_or_the_csv_header(name, user, alice_client, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    result = _stored(name)
    plan = Plan.objects.create(
        owner=user, name="scan", workload=result["workload"], request=result["request"], result=result
    )
    page = _visible(alice_client.get(plan.get_absolute_url()).content.decode())
    assert "Systems considered" in page or name.startswith(("capacity", "serve"))
    assert _ids_in(page) == [], f"page shows {_ids_in(page)}"
    pdf = _visible(render_to_string("planner/report.html", report_context(plan)))
    assert _ids_in(pdf) == [], f"PDF shows {_ids_in(pdf)}"
    if result.get("bom"):
        csv = alice_client.get(reverse("planner:plan_bom_csv", args=[plan.pk])).content.decode()
        assert _ids_in(csv.splitlines()[0]) == []


def test_the_chosen_system_is_named_in_the_figures_and_the_what_if():
    from planner.outputs.plan_view import plan_view
    from planner.whatif import whatif_fields

    view = plan_view(_stored("train-70b-dgx-b200"))
    assert human(view.value("cluster.system")) == "NVIDIA DGX B200"
    labels = [field.label for field in whatif_fields(view)]
    assert "Price of one NVIDIA DGX B200" in labels


def test_no_catalog_id_in_the_compare_table(user, alice_client, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    plans = []
    for name in ("train-70b-dgx-h100", "train-70b-dgx-b200"):
        result = _stored(name)
        plans.append(
            Plan.objects.create(owner=user, name=name, workload="training", request=result["request"], result=result)
        )
    page = alice_client.get(reverse("planner:plan_compare") + f"?ids={plans[0].pk},{plans[1].pk}").content.decode()
    table = _visible(page[page.index('class="data compare') :])
    assert "NVIDIA DGX H100" in table and "NVIDIA DGX B200" in table
    assert _ids_in(table) == [], f"compare shows {_ids_in(table)}"
