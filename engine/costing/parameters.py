"""Named costing parameters with this plan's overrides, and the record of which value was used and why."""

from __future__ import annotations

from decimal import Decimal

from engine.result.costs import ParameterUsed

from .inputs import CostInputs, RequestTerms
from .money import D

__all__ = ["Params"]


class Params:
    """Reference parameters, overridden by the request's site block, then by this plan's user overrides."""

    def __init__(self, inputs: CostInputs, terms: RequestTerms) -> None:
        self.base = dict(inputs.parameters)
        self.overrides: dict[str, tuple[Decimal, str]] = {
            name: (value, f"request site.{name}") for name, value in terms.site_prices.items()
        }
        # The request's own pricing.parameters apply whoever calls costing (the adapter also merges them into
        # `inputs`, with the same values).
        for name, value in {**terms.parameter_overrides, **inputs.parameter_overrides}.items():
            self.overrides[name] = (D(value), "user override for this plan (request pricing)")
        self.years = terms.years
        self.regions = terms.regions

    def __getitem__(self, name: str) -> Decimal:
        if name in self.overrides:
            return self.overrides[name][0]
        if name not in self.base:
            raise KeyError(f"costing parameter {name!r} is not loaded (fixtures/prices/parameters.json)")
        return self.base[name].value

    def report(self) -> dict[str, ParameterUsed]:
        """Every parameter: value used, default, unit, confidence and source (user overrides say so)."""
        out = {}
        for name in sorted(set(self.base) | set(self.overrides)):
            p = self.base.get(name)
            over = self.overrides.get(name)
            out[name] = ParameterUsed(
                value=self[name],
                default=None if p is None else p.value,
                unit=None if p is None else p.unit,
                confidence="user_override" if over else (None if p is None else p.confidence),
                source=over[1] if over else (None if p is None else p.source),
                as_of=None if p is None else p.as_of,
            )
        return out
