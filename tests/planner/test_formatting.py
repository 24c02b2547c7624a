"""Numbers, units and names for people: the template filters and the summary band (values worked by hand)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from planner.outputs.plan_view import plan_view
from planner.outputs.summary import snapshot_label
from planner.templatetags import planner_format as f

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1234567.891, "1,234,568"),
        (12.345, "12.3"),
        (0.4123, "0.412"),
        (2048, "2,048"),
        (78.0, "78"),
        (7.22e24, "7.22e24"),
        (None, "\u2013"),
        (True, "yes"),
        (False, "no"),
        ("dgx-h100", "dgx-h100"),
        (Decimal("1234.50"), "1,234"),  # half to even at the unit: 1234.5 -> 1,234
    ],
)
def test_num(value, text):
    assert f.num(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Decimal("796214.72"), "$796k"),
        ("56925851.00", "$56.9M"),
        (Decimal("4.18"), "$4.18"),
        (None, "\u2013"),
        ("", "\u2013"),
    ],
)
def test_usd(value, text):
    assert f.usd(value) == text


@pytest.mark.parametrize(
    ("kw", "text"),
    [(4102.27, "4.10 MW"), (116.32, "116 kW"), (83.086, "83.1 kW"), (999.6, "1.00 MW"), (34093.2, "34.1 MW")],
)
def test_kw(kw, text):
    assert f.kw(kw) == text


def test_pct():
    assert f.pct(0.412) == "41 %"
    assert f.pct(0.412, 1) == "41.2 %"
    assert f.pct(None) == "\u2013"


def test_show_has_no_internals():
    assert f.show(None) == "\u2013"
    assert f.show(True) == "yes"
    assert f.show("air_containment") == "air containment"
    text = f.show({"build_days": 30, "plan_date": None, "spot": False, "lead": {"gpu_servers": "84 days"}})
    assert text == "build 30 days; plan date \u2013; spot no; lead GPU servers 84 days"
    for bad in ("None", "True", "False", "{", "'"):
        assert bad not in text
    assert f.show([1, 2.5, "a_b"]) == "1, 2.5, a b"


def test_labels_and_units():
    assert f.label("step_time_s") == "step time" and f.unit("step_time_s") == "s"
    assert f.label("memory_per_gpu_gib") == "memory" and f.unit("memory_per_gpu_gib") == "GiB/GPU"
    assert f.label("racks") == "compute racks"  # the cluster's racks are its compute racks only
    assert f.purchase("savings_plan_3y") == "3-year Savings Plan"


def test_figure_titles_are_words_not_paths():
    assert f.figure_title("costs.comparison.obtainable.spot_fleet") == "Rule: largest spot fleet one job can count on"
    assert f.figure_title("costs.cloud.us-east-1.p5.48xlarge.spot.job_usd") == "Job cost: p5.48xlarge spot, us-east-1"
    assert f.figure_title("training.step_time_s") == "Step time (steady state)"  # the headline's own label
    assert f.figure_title("training.hardware_tflops_per_gpu") == "Training · hardware FLOP/s achieved (TFLOP/s per GPU)"
    assert f.figure_title("costs.sensitivity.cloud_minus_onprem_usd") == "Sensitivity · cloud minus on-prem cost"
    assert f.figure_title("costs.onprem.capex_usd") == "Capex (BOM total)"  # the headline's own label


def test_snapshot_label_hides_paths():
    label = snapshot_label(
        {
            "source": "AWS recorded responses (/tmp/pytest-7/fixtures/aws) with recorded Azure price lists",
            "fetched_at": "2026-11-09T10:00:00+00:00",
        }
    )
    assert label == "Cloud prices: AWS price lists (recorded) with recorded Azure price lists, read 2026-11-09"


def test_summary_band_of_a_stored_plan():
    view = plan_view(json.loads((GOLDEN / "train-70b-auto-90d.json").read_text()))
    band = view.summary_band
    figures = {fig.label: fig for fig in band.figures}
    assert band.choice == "rent"
    # 15 GB200 NVL72 racks of 72 GPUs = 1,080, of which the job's layout uses 1,024
    assert figures["GPUs"].value == "1,080"
    assert figures["GPUs"].note == "15 x NVIDIA GB200 NVL72 rack; the job uses 1,024"
    # p10 70.15, p50 88.03, p90 110.46 days as the stored whole run says
    assert figures["Time to train"].value == "88.0"
    assert figures["Time to train"].range == "70.2 - 110.5 days (p10 - p90)"
    # facility 2,480.126 kW -> 2.48 MW; IT 2,066.772 kW -> 2.07 MW; 2,480.126 / 2,066.772 = PUE 1.2 (liquid)
    assert (figures["Facility power"].value, figures["Facility power"].unit) == ("2.48", "MW")
    assert figures["Facility power"].note == "IT 2.07 MW x PUE 1.2"
    # every rack drawn: 15 compute + 11 network + 1 management = 27
    assert figures["Racks"].value == "27"
    assert figures["Cheapest obtainable option"].value == "$66.4M"
    # The build's p90 (110.5 days) is past the 90-day deadline, but the verdict is rent (building is out): the risk
    # shown is the recommended rental's, its 71.9-day p50 x the plan's own p90 / p50 (110.46 / 88.03 = 1.2548) =
    # 90.2 days, past the 90-day deadline, as the stored verdict says it.
    (risk,) = [r for r in band.risks if r.startswith("Deadline risk")]
    assert "is done in 71.9 days" in risk and "but its p90 is 90.2 days" in risk and "1.25 x p50" in risk
    # a plan stored before the verdict said whose risk it is shows none rather than the build's
    old = json.loads((GOLDEN / "train-70b-auto-90d.json").read_text())
    for key in ("decided_by", "deadline_risk"):
        old["costs"]["verdict"].pop(key)
    assert not [r for r in plan_view(old).summary_band.risks if r.startswith("Deadline risk")]


def test_the_deadline_risk_shown_is_the_verdicts_own():
    """A plan whose verdict carries the recommended option's deadline risk (engine/costing/verdict.py) shows that
    sentence word for word; with `decided_by` and no risk, none (not the build's p90)."""
    stored = json.loads((GOLDEN / "train-70b-auto-90d.json").read_text())
    sentence = "Deadline risk: the recommended option (a rental) is done in 71.9 days, but its p90 is 90.2 days."
    stored["costs"]["verdict"] |= {"decided_by": "deadline", "deadline_risk": sentence}
    risks = plan_view(stored).summary_band.risks
    assert [r for r in risks if r.startswith("Deadline risk")] == [sentence]
    del stored["costs"]["verdict"]["deadline_risk"]
    assert not [r for r in plan_view(stored).summary_band.risks if r.startswith("Deadline risk")]


def test_rear_door_cooling_and_units_in_labels_read_as_words():
    """A DGX B300 plan is cooled by rear-door heat exchangers: the racks headline said "...; rdhx"."""
    from planner.outputs.formatting import figure_text, key_label, key_unit, words

    view = plan_view(json.loads((GOLDEN / "train-70b-dgx-b300.json").read_text()))
    racks = next(fig for fig in view.summary_band.figures if fig.label == "Racks")
    assert racks.note.endswith("; rear-door heat exchanger") and "rdhx" not in racks.note
    assert words("rdhx") == figure_text("rdhx", "") == "rear-door heat exchanger"
    assert words("air_containment") == "air containment" and words("liquid") == "liquid"
    # a unit in the middle of a field name goes beside the value, not into the label (566.0 GiB, 32.9 GiB)
    assert (key_label("kv_cache_gib_per_replica"), key_unit("kv_cache_gib_per_replica")) == (
        "KV cache allocated per replica",
        "GiB",
    )
    assert (key_label("weights_gib_per_gpu"), key_unit("weights_gib_per_gpu")) == ("weights per GPU", "GiB")
    assert (key_label("global_batch_sequences"), key_unit("global_batch_sequences")) == ("global batch", "sequences")
    assert key_label("roce_efficiency_ratio") == "RoCE efficiency ratio"
    # assumption names ending in a temperature or length unit: the unit is not read as a word
    assert (key_label("air_chilled_water_supply_c"), key_unit("air_chilled_water_supply_c")) == (
        "air chilled water supply",
        "°C",
    )
    assert (key_label("air_delta_t_f"), key_unit("air_delta_t_f")) == ("air delta t", "°F")
    assert (key_label("building_pitch_m"), key_unit("building_pitch_m")) == ("building pitch", "m")
    assert key_unit("step_time_ms") == "ms" and key_unit("topology") == ""
    # a serving plan's fractions read as percentages, as MFU does: 0.6808 busy -> 68.1 %, MBU 0.4795 -> 48.0 %
    from planner.outputs.formatting import field_text

    assert field_text("utilization", 0.680842505332432) == "68.1 %"
    assert field_text("utilization_target", 0.7) == "70.0 %"
    assert field_text("effective_mbu", 0.47953200445247096) == "48.0 %"
    # Llama 3 70B's KV cache per token: 80 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 327,680 bytes
    assert (key_label("kv_bytes_per_token"), field_text("kv_bytes_per_token", 327680.0)) == (
        "KV cache per token",
        "327,680 bytes",
    )
    assert field_text("demand_tokens_per_s", 100000.0) == "100,000 tokens/s"
    assert field_text("capacity_requests_per_s_per_replica", 5.12) == "5.12 requests/s"


def test_summary_band_names_the_hot_spares():
    """2,048 DGX H100 for the job + 15 hot spares (elastic recovery) = 2,063 systems, 16,504 GPUs."""
    view = plan_view(json.loads((GOLDEN / "train-405b-16k-elastic.json").read_text()))
    gpus = next(fig for fig in view.summary_band.figures if fig.label == "GPUs")
    assert gpus.value == "16,504"
    assert gpus.note == "2,063 x NVIDIA DGX H100 (15 of them hot spares); the job uses 16,384"


def test_stage_fields_read_by_their_names():
    """The stage tables and the derivations' inputs: money, power and fractions as the headlines show them."""
    from planner.outputs.formatting import field_text, key_label, key_unit

    assert field_text("hardware_usd", "124010796.00") == "$124M"  # was "124010796.00 USD"
    assert field_text("it_kw", 4102.27) == "4.10 MW" and field_text("per_rack_kw", 28.6) == "28.6 kW"
    assert field_text("mfu", 0.36365) == "36.4 %" and field_text("pipeline_bubble_fraction", 0.0691) == "6.9 %"
    assert field_text("step_time_s", 1.205) == "1.21 s"
    # "GPU 3,836,092 hours" and "Tokens 3,480,646 /s" read as GPU-hours and a throughput
    assert (key_label("gpu_hours"), key_unit("gpu_hours")) == ("GPU-hours", "GPU-hours")
    assert (key_label("tokens_per_s"), key_unit("tokens_per_s")) == ("throughput", "tokens/s")


def test_compare_figures_by_unit():
    """The compare table once showed "FloatPercentiles(p10=61.81470882473502, ...)" and "171,565,403"."""
    from planner.outputs.formatting import figure_text

    view = plan_view(json.loads((GOLDEN / "train-70b-auto-90d.json").read_text()))
    assert figure_text(view.value("training.days_range"), "days") == "70.2 - 110.5"
    # 107,241,628.69 before the DGX GB200 carried its own NVIDIA AI Enterprise, less 1,080 GPUs x 3 years x $4,500
    assert figure_text(view.value("costs.onprem.capex_usd"), "USD") == "$92.7M"
    assert figure_text(view.value("power.facility_kw"), "kW") == "2.48 MW"
    assert figure_text(view.value("cluster.system"), "") == "NVIDIA GB200 NVL72 rack"
    b200 = plan_view(json.loads((GOLDEN / "train-70b-dgx-b200.json").read_text()))
    assert figure_text(b200.value("cooling.method"), "") == "air containment"
    assert figure_text(b200.value("cluster.system"), "") == "NVIDIA DGX B200"
    assert figure_text(None, "USD") == "\u2013"


def test_device_short_names_are_models():
    from planner.outputs.formatting import device_short_name

    assert device_short_name("qm9700", "NVIDIA Quantum-2 QM9700 NDR InfiniBand switch (managed)") == "QM9700"
    assert device_short_name("dgx-b200", "NVIDIA DGX B200") == "DGX B200"
    assert device_short_name("mgmt-server-2s", "2-socket x86 management server", "PowerEdge R760") == "PowerEdge R760"
    assert device_short_name("mystery-1", "Something") == "mystery-1"


def test_sensitivity_range_basis_in_words():
    from planner.outputs.formatting import prose_words

    basis = "each part by its price basis (list_price -10 %/+12.5 %, public_estimate -15 %/+20 %)"
    assert prose_words(basis) == "each part by its price basis (list price -10 %/+12.5 %, public estimate -15 %/+20 %)"
    assert prose_words(None) is None


def test_training_block_shows_the_steady_state_days_once():
    """`days_ideal` is kept in the result for older readers beside `days_steady_state` (the same figure): the page's
    training block listed "Days, steady state" twice."""
    stored = json.loads((GOLDEN / "train-70b-auto-90d.json").read_text())
    assert stored["training"]["days_ideal"] == stored["training"]["days_steady_state"]
    training = dict(plan_view(stored).stage_blocks)["training"]
    assert "days_ideal" not in training and training["days_steady_state"] == stored["training"]["days_steady_state"]
    # a plan stored before the twin existed still shows its steady-state days
    del stored["training"]["days_steady_state"]
    assert dict(plan_view(stored).stage_blocks)["training"]["days_ideal"] == stored["training"]["days_ideal"]


def test_cheapest_option_range_only_when_its_ends_differ_as_shown():
    """A spot option done in 25.80 days at p50 and 25.83 at p90 read "done in 25.8 - 25.8 days (p50 - p90)"; the
    range is its interruptions', and says so."""
    stored = json.loads((GOLDEN / "train-70b-auto-90d.json").read_text())
    chosen = stored["costs"]["verdict"]["option"]
    (option,) = [o for o in stored["costs"]["comparison"]["options"] if o["label"] == chosen]
    option["finish_days"], option["finish_days_p90"] = 25.80, 25.83

    def cheapest(plan):
        return next(fig for fig in plan_view(plan).summary_band.figures if fig.label == "Cheapest obtainable option")

    assert cheapest(stored).range is None
    option["finish_days_p90"] = 27.0
    assert cheapest(stored).range == "done in 25.8 - 27.0 days (spot interruptions p50 - p90)"


def test_a_breakdown_gives_each_value_its_unit():
    """The step and memory breakdowns ended in one lone unit after the last pair ("optimizer 0.000301    s"); each
    value carries it now ("pipeline 1.6 s"), as the stored breakdowns are in seconds and GiB (their field names)."""
    from planner.outputs.page_html import page_html

    lead = page_html(1, plan_view(json.loads((GOLDEN / "train-70b-auto-90d.json").read_text())), {}, {}, "")["lead"]
    block = lead[lead.index('id="stage-training"') :]
    assert '<span class="pair">pipeline <b>1.6</b> <span class="unit">s</span></span>' in block
    assert '<span class="pair">weights <b>1.72</b> <span class="unit">GiB</span></span>' in block
    assert '</span> <span class="unit">s</span></td>' not in block


def test_the_report_lists_the_options_in_reach_and_only_the_nearest_out_of_reach():
    """The 90-day 70B plan compares 44 options, 42 out of reach (four PDF pages of the same few reasons): the
    report lists the 2 obtainable, the first 5 that cannot compete, and says where the other 37 are."""
    from types import SimpleNamespace

    from django.template.loader import render_to_string

    stored = json.loads((GOLDEN / "train-70b-auto-90d.json").read_text())
    options = stored["costs"]["comparison"]["options"]
    assert len(options) == 44 and sum(o["obtainable"] is False for o in options) == 42
    view = plan_view(stored)
    plan = SimpleNamespace(name="70B", created_at=None, catalog_version="x", get_workload_display=lambda: "Training")
    html = render_to_string("planner/report.html", {"plan": plan, "view": view, "headlines": [], "bom": None})
    table = html[html.index('<table class="options">') : html.index("</table>", html.index('<table class="options">'))]
    assert table.count("<tr") == 1 + 2 + 5  # heading, 2 obtainable, 5 out of reach
    assert "42 options cannot compete" in html and "the 37 not listed here are on the plan page" in html
    # Systems considered, the deciding columns only: the 9 systems, the chosen one first
    systems = html[html.index('<table class="candidates">') :]
    systems = systems[: systems.index("</table>")]
    assert systems.count("<tr") == 1 + 9 and "<b>NVIDIA GB200 NVL72 rack</b>" in systems
    assert "MFU" not in systems and "Build + energy (USD)" in systems


def test_the_parallel_layout_reads_as_practitioners_write_it():
    """The stored layouts of two golden plans, written out by hand: degrees of 1 beyond TP, PP and DP left out,
    interleaving as virtual stages, even stages not named; and a layout with uneven stages and both offloads."""
    from engine.result.sizing import Parallelism
    from planner.outputs.headlines import layout_text

    auto = plan_view(json.loads((GOLDEN / "train-70b-auto-90d.json").read_text()))
    assert auto.value("training.parallelism") == "TP 2 · PP 1 · DP 512 · micro-batch 1 · ZeRO-3 · no recompute"
    big = plan_view(json.loads((GOLDEN / "train-16k-gpus.json").read_text()))
    assert big.value("training.parallelism") == (
        "TP 8 · PP 16 · DP 32 · CP 4 (ring) · 4 virtual stages · micro-batch 1 · ZeRO-1 · no recompute"
    )
    figures = {fig.label: fig for fig in auto.headlines}
    assert figures["Parallel layout"].value.startswith("TP 2 · PP 1")
    assert figures["Parallel layout"].explain is not None  # its derivation: the search over layouts
    uneven = Parallelism(tp=8, pp=16, dp=128, micro_batch=1, recompute="selective", interleave=1, zero_stage=1, ep=1,
                         stage_layers=(7, *[8] * 14, 7), offload="optimizer", activation_offload_layers=0)  # fmt: skip
    assert layout_text(uneven) == (
        "TP 8 · PP 16 · DP 128 · stages of 7-8 layers (first 7, last 7) · micro-batch 1 · ZeRO-1 · selective "
        "recompute · optimizer state in host memory"
    )
    grace = Parallelism(tp=2, pp=1, dp=64, micro_batch=1, recompute="none", interleave=1, zero_stage=3, ep=1,
                        stage_layers=(126,), activation_offload_layers=63)  # fmt: skip
    assert layout_text(grace).endswith("ZeRO-3 · no recompute · 63 layers' activations in host memory")


def test_a_folded_expert_layout_says_so():
    """Qwen3 235B's published H100 layout: 32 expert ranks folded over TP2 x DP16, written as NVIDIA's table does
    plus the folding; a split layout (etp = tp) and a dense one say nothing of it."""
    from engine.result.sizing import Parallelism
    from planner.outputs.headlines import layout_text

    folded = Parallelism(tp=2, pp=8, dp=16, micro_batch=1, recompute="none", interleave=4, zero_stage=1, ep=32,
                         etp=1, stage_layers=(11, *[12] * 6, 11))  # fmt: skip
    assert layout_text(folded).startswith("TP 2 · PP 8 · DP 16 · EP 32 · experts folded over TP · 4 virtual stages")
    split = Parallelism(tp=2, pp=8, dp=16, micro_batch=1, recompute="none", interleave=4, zero_stage=1, ep=16,
                        etp=2, stage_layers=(11, *[12] * 6, 11))  # fmt: skip
    assert "folded" not in layout_text(split)


def test_a_deadline_met_at_p90_labels_its_days_as_the_whole_runs_p90():
    """The golden plan that meets its 40-day deadline at p90: the recommended capacity block runs 27.9 days at p50
    and 35.1 at the whole run's p90 (27.942 x the plan's p90 / p50). The card and the workbook's options sheet say
    which p90 that is; they said "spot interruptions" for a capacity block."""
    from planner.outputs.bom_xlsx import workbook_sheets

    view = plan_view(json.loads((GOLDEN / "train-70b-deadline-at-p90.json").read_text()))
    card = next(fig for fig in view.summary_band.figures if fig.label == "Cheapest obtainable option")
    assert card.range == "done in 27.9 - 35.1 days (whole run p50 - p90)"
    options = next(sheet for sheet in workbook_sheets(view) if sheet.name == "Options")
    # the workbook heads its days with the comparison's own words, as the page and the PDF caption them
    assert options.rows[0][4] == (
        "Days: the job's whole run at its p90 on that hardware, as the deadline is to be met (its p50 x the plan's "
        "own p90 / p50; a spot option's with its interruptions at their p90 too)"
    )
    p50 = plan_view(json.loads((GOLDEN / "train-70b-auto-90d.json").read_text()))
    options = next(sheet for sheet in workbook_sheets(p50) if sheet.name == "Options")
    assert options.rows[0][4] == (
        "Days: the job's expected (p50) whole run on that hardware; a spot option's with its interruptions at their p90"
    )
