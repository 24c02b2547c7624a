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
    FAILED = "failed", "Failed"


FINISHED_STATUSES = (RunStatus.SUCCEEDED, RunStatus.FAILED)
