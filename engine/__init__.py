"""Cluster Planner sizing engine: pure Python (stdlib, numpy, pydantic for the request schema), no Django,
Celery, boto3 or network.

Public interface used by the Django side, the API and the `plan` command. The request schema (engine/request,
pydantic models) is at once the validator, the defaults, the OpenAPI request body and the web form's source.
"""

from engine.catalog.hardware import Catalog, load_catalog
from engine.chain import STAGES, run_plan
from engine.request.spec import PlanRequest
from engine.request.validation import RequestInvalid, validate_request

__all__ = ["STAGES", "Catalog", "PlanRequest", "RequestInvalid", "load_catalog", "run_plan", "validate_request"]
