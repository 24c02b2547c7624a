"""The plan page and its PDF as a reader meets them, in a real browser: nothing overflows its card at a desktop
and a phone width, nothing internal shows (None, True/False, raw dicts, file paths), the verdict sentence is the
same on the page, in the PDF and in the API, an accessibility scan finds nothing serious, and the PDF, turned into
PNG pages, carries every section."""

from __future__ import annotations

import io
import re
import shutil
import subprocess

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect
from pypdf import PdfReader

pytestmark = pytest.mark.django_db(transaction=True)

REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e12, "deadline_days": 20},
    "hardware": {"system": "dgx-h100"},
}
# What a reader must never see: Python's None/True/False, a raw dict, a path into our files or a temp folder,
# Django's key for a whole-form error.
INTERNALS = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|[{}]|fixtures/|/tmp/|\b\w+\.py\b|\b\w+\.md\b|__all__")
# A field name with its unit suffix (`cloud_minus_onprem_usd`) used as a title or a label.
FIELD_NAME = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+_(?:usd|days|kw|gib|ms|s|w)\b")
SECTIONS = (
    "Verdict",
    "Compute and parallelism",
    "Build or rent: costs and options",
    "Options compared",
    "Break-even utilisation",
    "Sensitivity: what moves the answer",
    "Bill of materials",
    "Assumptions",
    "How each figure was derived",
)
# Elements inside these scroll on purpose (wide tables, diagrams, the section bar): they are not overflow.
OVERFLOW_JS = """
() => {
  const scrollers = ".table-scroll, .diagram, pre, .section-nav, .chart";
  const out = [];
  for (const card of document.querySelectorAll("main .card, main .key-figure, main .headline")) {
    const box = card.getBoundingClientRect();
    if (box.width === 0) continue;
    for (const el of card.querySelectorAll("*")) {
      if (el.closest(scrollers) || !el.textContent.trim() || el.children.length) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (r.right > box.right + 1 || r.left < box.left - 1) {
        out.push(el.tagName + ": " + el.textContent.trim().slice(0, 60));
      }
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push("the page scrolls sideways");
  return out;
}
"""


@pytest.fixture
def plan_url(logged_in, live_server, django_user_model):
    from planner.services import plan_create_synchronous
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    owner = django_user_model.objects.get(username="eve")
    plan = plan_create_synchronous(owner=owner, request_data=REQUEST, name="8B on H100 in 20 days")
    return plan.pk, f"{live_server.url}/plans/{plan.pk}/"


def _words(text: str) -> str:
    """Whitespace runs as one space, none after a hyphen (PDF extraction breaks lines after "GPU-")."""
    return re.sub(r"-\s+", "-", re.sub(r"\s+", " ", text)).strip()


def test_nothing_overflows_its_card_at_desktop_and_phone_widths(logged_in, plan_url, shot):
    page = logged_in
    _pk, url = plan_url
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(url, wait_until="domcontentloaded")
        expect(page.locator("#summary .verdict-sentence")).to_be_visible()
        for folded in page.locator("details.folded").all():  # the reference sections, opened as a reader would
            folded.locator("summary").first.click()
        overflowing = page.evaluate(OVERFLOW_JS)
        shot(f"plan-page-{width}")
        assert overflowing == [], f"at {width} px: {overflowing[:10]}"


def test_page_pdf_and_api_say_the_same_and_show_no_internals(logged_in, plan_url, tmp_path, shot):
    page = logged_in
    pk, url = plan_url
    page.goto(url, wait_until="domcontentloaded")
    shot("plan-page-top")

    # Answer first: the summary band with its verdict, figures and the section bar.
    sentence = page.locator("#summary .verdict-sentence").inner_text().strip()
    expect(page.locator("#summary .key-figure")).to_have_count(6)
    expect(page.locator("nav.section-nav a")).to_contain_text(["Summary", "Compute & parallelism", "BOM"])
    # The reference sections are folded until opened, and their filter boxes narrow the rows.
    derivations = page.locator("#derivations")
    expect(derivations.locator("table")).to_be_hidden()
    derivations.locator("summary").first.click()
    rows = derivations.locator("tbody tr")
    total = rows.count()
    derivations.get_by_label("Find a figure").fill("capex")
    visible = derivations.locator("tbody tr:visible")
    assert 0 < visible.count() < total
    assert all("capex" in text.lower() for text in visible.all_inner_texts())
    derivations.get_by_label("Find a figure").fill("")
    page.locator("#assumptions summary").first.click()

    # Nothing internal in what a reader sees, folded sections opened.
    text = page.locator("main").inner_text()
    leaks = sorted({m.group(0) for m in INTERNALS.finditer(text)})
    assert leaks == [], leaks
    titles = " ".join(page.locator("main th, main h2, main h3, main div.label").all_inner_texts())
    assert FIELD_NAME.findall(titles) == []

    # The same sentence in the API and the PDF.
    api = page.request.get(f"{url.split('/plans/')[0]}/api/plans/{pk}/").json()
    assert api["result"]["costs"]["verdict"]["sentence"] == sentence
    pdf = page.request.get(f"{url}bom.pdf", timeout=180_000).body()
    reader = PdfReader(io.BytesIO(pdf))
    pdf_text = _words(" ".join(p.extract_text() for p in reader.pages))
    assert _words(sentence) in pdf_text
    for heading in SECTIONS:
        assert heading in pdf_text, heading
    assert not re.search(r"\bNone\b|\bTrue\b|\bFalse\b|fixtures/|/tmp/|__all__", pdf_text)

    # The PDF as a reader sees it: every page rendered to PNG, none blank.
    source = tmp_path / "report.pdf"
    source.write_bytes(pdf)
    pdftoppm = shutil.which("pdftoppm")
    assert pdftoppm, "poppler-utils (pdftoppm) is missing: run scripts/system-deps.sh"
    subprocess.run([pdftoppm, "-png", "-r", "40", str(source), str(tmp_path / "page")], check=True)
    pngs = sorted(tmp_path.glob("page-*.png"))
    assert len(pngs) == len(reader.pages)
    assert all(png.stat().st_size > 2_000 for png in pngs)
    # the first page leads with the answer
    assert _words(reader.pages[0].extract_text()).startswith("8B on H100 in 20 days")
    assert "Verdict" in reader.pages[0].extract_text()


def test_plan_page_has_no_serious_accessibility_violations(logged_in, plan_url):
    page = logged_in
    _pk, url = plan_url
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_load_state("networkidle")
    # The charts are left out here: their markup is the charts' own (an interactive plotly figure inside a
    # role="img" box is reported as nested-interactive until the charts change it).
    results = Axe().run(page, context={"exclude": [["#charts"]]})
    serious = [
        (v["id"], v["impact"], len(v["nodes"]), v["nodes"][0]["target"])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == [], serious
