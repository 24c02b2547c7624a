"""The request's `rollout`: deliver the cluster in phases (a number of scalable units, or of facility MW, each).

Why a section of its own: a phased delivery is neither hardware nor site economics; it changes when training can
start and when money is spent, which the costing reads (engine/costing/rollout.py). The months between phases
default to a sourced assumption (rollout_phase_interval_days); a request may give its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from engine.request.fields import JsonFloat, Problem, Section

if TYPE_CHECKING:
    from pydantic import ValidationInfo

__all__ = ["RolloutSpec"]


class RolloutSpec(Section):
    """Phases of the delivery: each phase adds `per_phase` scalable units (whole) or MW of facility power."""

    by: Literal["scalable_units", "mw"] = Field(
        "scalable_units", description="What a phase is counted in: scalable units of systems, or MW of facility power."
    )
    per_phase: JsonFloat = Field(
        gt=0, le=100_000, description="Scalable units (a whole number) or MW of facility power per phase."
    )
    months_between: JsonFloat | None = Field(
        None,
        ge=0,
        le=120,
        description="Months from one phase being ready to the next; default: a sourced assumption.",
    )

    def check(self, info: ValidationInfo) -> list[Problem]:
        if self.by == "scalable_units" and not float(self.per_phase).is_integer():
            return [(("per_phase",), "must be a whole number of scalable units", self.per_phase)]
        return []
