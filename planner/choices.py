"""Named constants shared by models, forms, the API and the task."""

from django.db import models


class Workload(models.TextChoices):
    TRAINING = "training", "Training"
    INFERENCE = "inference", "Inference"
    CAPACITY = "capacity", "Capacity (largest cluster inside an envelope)"


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    # The run finished and the plan says why the target cannot be met (PlanRun.reason): an answer, not an error.
    INFEASIBLE = "infeasible", "Infeasible"
    FAILED = "failed", "Failed"


FINISHED_STATUSES = (RunStatus.SUCCEEDED, RunStatus.INFEASIBLE, RunStatus.FAILED)
# Runs that produced a stored plan (feasible or not): a failure never overwrites them.
ANSWERED_STATUSES = (RunStatus.SUCCEEDED, RunStatus.INFEASIBLE)
