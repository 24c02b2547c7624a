"""Cluster Planner sizing engine: pure Python (stdlib only), no Django, Celery, boto3 or network.

Public interface used by the Django side, the API and the `plan` command.
"""

from planner.sizing.catalog import Catalog, load_catalog
from planner.sizing.plan import STAGES, run_plan
from planner.sizing.request import PlanRequest
from planner.sizing.validation import RequestInvalid, validate_request

__all__ = ["STAGES", "Catalog", "PlanRequest", "RequestInvalid", "load_catalog", "run_plan", "validate_request"]
