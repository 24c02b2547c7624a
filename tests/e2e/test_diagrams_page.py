"""The diagrams as a reader sees them in chromium: a 16,384-GPU plan's topology, rack elevations and floor plan fit
the diagram card at 1,440 px without sideways scrolling, draw their text at 9 px or more (never scaled down), and on
a 390 px phone stay inside their card (scrolling within the figure rather than pushing the page wider)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"

MEASURE = """() => [...document.querySelectorAll('section.diagrams figure')].map(f => {
    const card = f.closest('section').getBoundingClientRect();
    const texts = [...f.querySelectorAll('svg text')];
    return {
        id: f.id, client: f.clientWidth, scroll: f.scrollWidth,
        figureRight: f.getBoundingClientRect().right, cardRight: card.right,
        minFontPx: Math.min(...texts.map(t => t.getBoundingClientRect().height > 0 ?
            parseFloat(getComputedStyle(t).fontSize) * f.querySelector('svg').getBoundingClientRect().width /
            f.querySelector('svg').viewBox.baseVal.width : 99)),
        texts: texts.length,
    };
})"""


@pytest.fixture
def big_plan(logged_in, django_user_model):
    from planner.models import Plan

    result = json.loads((GOLDEN / "train-16k-gpus.json").read_text())
    owner = django_user_model.objects.get(username="eve")
    return Plan.objects.create(
        owner=owner, name="16K GPUs", workload=result["workload"], request=result["request"], result=result
    )


@pytest.mark.parametrize("width", [1440, 390])
def test_diagrams_fit_their_card_with_legible_text(logged_in, live_server, big_plan, width, shot):
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}{big_plan.get_absolute_url()}")
    figures = page.evaluate(MEASURE)
    assert [f["id"] for f in figures] == ["diagram-topology", "diagram-racks", "diagram-floor"]
    for figure in figures:
        assert figure["texts"] > 10
        assert figure["minFontPx"] >= 9, figure
        assert figure["figureRight"] <= figure["cardRight"] + 0.5, figure
        if width >= 1440:
            assert figure["scroll"] <= figure["client"], f"{figure['id']} scrolls sideways at {width} px"
    shot(f"diagrams-16k-{width}")
