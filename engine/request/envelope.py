"""The request's `envelope`: the limits a cluster must fit (facility power, IT power, racks, capex, GPUs).

A capacity request (`"workload": "capacity"`) plans the largest cluster of one system inside them; a training or
inference request may carry the same section, and its plan then stays within it or is infeasible with the limit
that binds. Why a section of its own rather than fields of `hardware`: the limits are the site's and the budget's,
not a property of the hardware, and every workload reads them the same way.

The upper bounds are input sanity, not engine limits: 10 GW is about ten times the largest AI campus announced
(about 1-2 GW), ten million racks, GPUs or $10 trillion are beyond any plan a person would ask for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StrictInt

from engine.request.fields import WHOLE, JsonFloat, Problem, Section

if TYPE_CHECKING:
    from pydantic import ValidationInfo

__all__ = ["ENVELOPE_LIMITS", "EnvelopeSpec"]

# Each limit's key, what it limits in words, and its unit (for messages, the explain entry and the form).
ENVELOPE_LIMITS: dict[str, tuple[str, str]] = {
    "facility_mw": ("facility power (IT power x PUE)", "MW"),
    "it_mw": ("IT power", "MW"),
    "racks": ("racks", "racks"),
    "capex_usd": ("capex", "USD"),
    "gpus": ("GPUs", "GPUs"),
}


class EnvelopeSpec(Section):
    """Limits the planned cluster must stay within; give at least one. Each is a ceiling, never a target."""

    facility_mw: JsonFloat | None = Field(
        None,
        gt=0,
        le=10_000,
        description="Facility power limit in MW: IT power (GPU systems, network, optics, storage, management) x PUE.",
    )
    it_mw: JsonFloat | None = Field(
        None, gt=0, le=10_000, description="IT power limit in MW (before PUE): every IT part at maximum draw."
    )
    racks: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] | None = Field(
        None, description="Most racks: compute, network, storage and management racks together."
    )
    capex_usd: JsonFloat | None = Field(
        None, gt=0, le=1e13, description="Capex limit in USD: the priced BOM plus installation, tax, spares and so on."
    )
    gpus: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] | None = Field(
        None, description="Most GPUs installed (whole systems)."
    )

    def check(self, info: ValidationInfo) -> list[Problem]:
        if not self.given():
            names = ", ".join(ENVELOPE_LIMITS)
            return [((), f"must give at least one limit ({names})", None)]
        return []

    def given(self) -> dict[str, float]:
        """The limits the request sets, by key (whole-number limits as int)."""
        return {key: getattr(self, key) for key in ENVELOPE_LIMITS if getattr(self, key) is not None}
