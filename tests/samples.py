"""Sample requests: the minimal training request from design.md and a small serving request."""

TRAINING_REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
    "hardware": {"system": "auto"},
    "pricing": {"years": 3, "regions": ["us-east-1", "us-west-2"]},
}

INFERENCE_REQUEST = {
    "workload": "inference",
    "model": {"preset": "llama-3-8b"},
    "inference": {
        "requests_per_s": 20,
        "prompt_tokens": 1000,
        "output_tokens": 250,
        "ttft_ms": 1000,
        "tpot_ms": 50,
        "precision": "bf16",
    },
    "hardware": {"system": "dgx-h100"},
}


def elastic_16k_request(checkpointing: str = "elastic") -> dict:
    """Llama 3 405B on 16,384 DGX H100 GPUs (2,048 systems) with the recovery mode given: with `elastic` the build
    carries hot spares (engine/physical/spares.py)."""
    return {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 15e12, "gpus": 16_384, "checkpointing": checkpointing},
        "hardware": {"system": "dgx-h100"},
    }


def priced_plan(owner, body: dict, name: str, capture_on_commit):
    """A plan made through the service with the recorded prices loaded and its run executed on commit, as stored.

    `capture_on_commit` is pytest-django's `django_capture_on_commit_callbacks` fixture."""
    from planner import services
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    with capture_on_commit(execute=True):
        plan = services.plan_create(owner=owner, request_data=body, name=name)
    plan.refresh_from_db()
    return plan
