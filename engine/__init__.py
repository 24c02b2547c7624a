"""Cluster Planner sizing engine: pure Python (stdlib, numpy, pydantic for the request schema), no Django,
Celery, boto3 or network.

Public interface used by the Django side, the API and the `plan` command. The request schema (engine/request,
pydantic models) is at once the validator, the defaults, the OpenAPI request body and the web form's source.
"""

from engine.catalog.hardware import Catalog, load_catalog
from engine.chain import STAGES, run_plan
from engine.request.spec import PlanRequest
from engine.request.validation import RequestInvalid, validate_request
from engine.result import PlanResult, from_json, to_json

__all__ = [
    "STAGES",
    "Catalog",
    "PlanRequest",
    "PlanResult",
    "RequestInvalid",
    "from_json",
    "load_catalog",
    "run_plan",
    "to_json",
    "validate_request",
]
