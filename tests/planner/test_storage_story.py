"""The storage card reads as sentences that name what sets each need, with figures worked out by hand.

Hand figures used below (published model shapes, the assumptions' defaults, the catalog's appliance):
- Llama 3 70B has 70.55e9 parameters; a checkpoint of mixed-precision Adam is 14 bytes each -> 0.988 TB.
- Llama 3 405B (126 layers, hidden 16,384, FFN 53,248, 128 heads, 8 KV heads, vocabulary 128,256) has
  126 x (2 x 16,384^2 + 2 x 16,384 x 1,024 + 3 x 16,384 x 53,248) + 2 x 128,256 x 16,384 = 405.85e9 parameters
  -> 14 bytes each = 5.68 TB.
- The SuperPOD guidance is 40 GB/s read per scalable unit of 32 systems, write at half of read; a DDN AI400X2
  reads 90 GB/s; 15T tokens of text are 60 TB at 4 bytes a token, and 60 TB again as 32-bit token ids (the
  vocabulary exceeds 65,536); capacity keeps 30 % free.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.outputs.plan_view import plan_view

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "plans"


def _catalog_ids() -> set[str]:
    """Every id of the build parts and systems catalog: none may reach a reader."""
    ids = set()
    for name in ("parts.json", "systems.json"):
        data = json.loads((ROOT / "engine" / "data" / "catalog" / name).read_text())
        records = data["records"] if isinstance(data, dict) and "records" in data else data
        ids |= {r["id"] for r in (records.values() if isinstance(records, dict) else records) if isinstance(r, dict)}
    return ids


def _golden(name: str):
    return plan_view(json.loads((GOLDEN / f"{name}.json").read_text()))


def test_write_set_by_the_checkpoint_says_so():
    """405B on 1,024 H100 with synchronous checkpoints that may stall 15 s: 5.68 TB / 15 s = 379 GB/s, more than
    the guidance's write (128 systems = 4 SUs x 40 GB/s read = 160, half of it 80 GB/s), so the checkpoint sets it."""
    from engine import load_catalog, run_plan, validate_request

    catalog = load_catalog()
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 1e12, "gpus": 1024, "checkpointing": "synchronous"},
        "hardware": {"system": "dgx-h100"},
        "assumptions": {"checkpoint_stall_s": 15},
    }
    story = plan_view(run_plan(validate_request(body, catalog), catalog)).storage_story
    assert story.needs[0] == (
        "Write 379 GB/s: set by the checkpoint, to save 5.68 TB within 15 s while training waits (synchronous "
        "checkpoints); the SuperPOD reference design alone would ask 80.0 GB/s."
    )
    assert ("Write, checkpoint", "379 GB/s") in story.details


def test_write_set_by_the_reference_design_names_the_checkpoint_beside_it():
    """16,384 H100 = 2,048 DGX = 64 SUs: read 64 x 40 = 2,560 GB/s, write 1,280; the 70B checkpoint (0.988 TB)
    written in the background within the plan's 4.1 s needs 241 GB/s, less than the guidance."""
    story = _golden("train-16k-gpus").storage_story
    # 2,560 GB/s / 90 GB/s per AI400X2 = 28.4 -> 29 appliances, more than capacity (162 TB / 500 TB) needs.
    assert story.lead == (
        "29 x DDN AI400X2 parallel file system appliance (NVMe): together they must write 1.28 TB/s, read "
        "2.56 TB/s and hold 162 TB; read bandwidth sets how many."
    )
    write, read, hold = story.needs
    assert write.startswith("Write 1.28 TB/s: the SuperPOD reference design (write at half the read bandwidth)")
    assert "the checkpoint alone needs 241 GB/s to save 988 GB within 4.1 s in the background" in write
    assert read.startswith('Read 2.56 TB/s: the SuperPOD reference design (40 GB/s per scalable unit, its "better"')
    # (60 + 60 + 5 x 0.988) TB x 1.3 = 162.4 TB
    assert hold == (
        "Hold 162 TB: 5 checkpoints of 988 GB and the data set (60.0 TB of raw text and 60.0 TB tokenised), "
        "plus 30 % free space."
    )


def test_serving_storage_holds_weights_and_writes_no_checkpoints():
    """Llama 3 70B served in bf16: weights 70.55e9 x 2 bytes = 141 GB; 5 versions x 1.3 = 917 GB on one NFS server."""
    story = _golden("serve-70b-auto").storage_story
    assert story.lead.startswith("One 2U NVMe NFS file server (Dell PowerEdge R7625")
    assert "serving writes no checkpoints" in story.needs[0]
    assert story.needs[2] == "Hold 917 GB: the served model's weights (141 GB), 5 versions kept, plus 30 % free space."


def test_capacity_plan_says_capacity_is_not_sized_rather_than_zero():
    story = _golden("capacity-gb200-50mw").storage_story
    assert story.needs[2].startswith("Capacity is not sized")
    assert "0 TB" not in " ".join([story.lead, *story.needs, *(text for _label, text in story.details)])


@pytest.mark.parametrize("name", ["train-16k-gpus", "serve-70b-auto", "train-8b-auto-30d", "capacity-gb200-50mw"])
def test_storage_text_names_products_not_catalog_ids(name):
    story = _golden(name).storage_story
    text = " ".join([story.lead, *story.needs, *(f"{label} {value}" for label, value in story.details)])
    words = set(re.split(r"[\s(),:;]+", text))
    assert not words & _catalog_ids()
    assert any("SuperPOD Reference Architecture" in source for source in story.sources)  # the primary source


def test_rack_elevations_print_models_not_catalog_ids():
    """The elevation's device labels and key name the model (QM9700, DDN AI400X2, PowerEdge R760), never the id."""
    from planner.outputs.svg.racks import racks_svg

    svg = racks_svg(_golden("train-70b-dgx-h100").racks)
    texts = set(re.findall(r"<text[^>]*>([^<]*)</text>", svg))
    printed = {t.split(" x ")[0].split(":")[0].strip() for t in texts}
    assert not printed & _catalog_ids(), printed & _catalog_ids()
    assert any(t.startswith("QM9700") for t in texts) and any("PowerEdge R760" in t for t in texts)


def test_page_storage_card_leads_with_sentences_and_folds_the_figures():
    """The page's storage card: the sentences first, the figures inside a closed disclosure, no stage table."""
    from planner.outputs.page_html import page_html

    view = _golden("train-16k-gpus")
    lead = page_html(7, view, {}, {}, "")["lead"]
    card = lead[lead.index('id="stage-storage"') :]
    card = card[: card.index("</section>")]
    assert card.index("Write 1.28 TB/s") < card.index("<details")  # the story is outside the fold
    assert "<details open" not in card and "Checkpoint size" in card
    assert "ddn-ai400x2" not in card and "Read gbps per SU" not in card
    assert 'href="#explain-storagewrite_gbps"' in card  # the derivation of the write figure, one click away
