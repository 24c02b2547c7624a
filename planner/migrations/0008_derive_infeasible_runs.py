"""Runs stored before the `infeasible` status finished as `succeeded` even when their plan says the target cannot be
met (`result.feasible` false), so the list showed them green with dashes. This marks each such plan's latest
succeeded run `infeasible`, with the plan's own problems as the reason; reversing puts them back to `succeeded`.

The reason is built here, not imported from planner.services: a migration must keep working as the code moves on.
"""

from django.db import migrations

MAX_REASON_CHARS = 2000


def _reason(result: dict) -> str:
    problems = [str(p).strip() for p in result.get("problems") or () if str(p).strip()]
    text = " ".join(p if p.endswith(".") else f"{p}." for p in problems)
    return (text or "The target cannot be met as asked.")[:MAX_REASON_CHARS]


def derive_infeasible(apps, schema_editor):
    Plan = apps.get_model("planner", "Plan")
    PlanRun = apps.get_model("planner", "PlanRun")
    for plan in Plan.objects.exclude(result=None).only("pk", "result").iterator():
        result = plan.result
        if not isinstance(result, dict) or result.get("feasible", True) is not False:
            continue
        run = PlanRun.objects.filter(plan_id=plan.pk, status="succeeded").order_by("-queued_at", "-pk").first()
        if run is not None:
            PlanRun.objects.filter(pk=run.pk).update(status="infeasible", reason=_reason(result))


def back_to_succeeded(apps, schema_editor):
    PlanRun = apps.get_model("planner", "PlanRun")
    PlanRun.objects.filter(status="infeasible").update(status="succeeded", reason="")


class Migration(migrations.Migration):
    dependencies = [("planner", "0007_plan_status_parent")]

    operations = [migrations.RunPython(derive_infeasible, back_to_succeeded)]
