"""The request's build, site and pricing sections: which system, facility limits, site economics, the costing
horizon, cloud regions and this plan's own price overrides.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import (
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
)
from pydantic_core import PydanticCustomError

from engine.catalog.hardware import Catalog
from engine.request.cost_parameters import CostParameterLimit, cost_parameter_limits
from engine.request.fields import (
    RULE,
    WHOLE,
    JsonFloat,
    Problem,
    Section,
    catalog_of,
    check_number,
    did_you_mean,
    raise_problems,
    type_name,
    unknown_key,
)

__all__ = ["DEFAULT_REGIONS", "HardwareSpec", "PricingSpec", "SiteSpec"]

DEFAULT_REGIONS = ("us-east-1",)
_REGION_PATTERN = r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$"
_REGION = re.compile(_REGION_PATTERN)
_MAX_REGIONS = 50
_MAX_COMPONENT_PRICES = 500
_MAX_COMPONENT_USD = 1e9

Region = Annotated[str, Field(pattern=_REGION_PATTERN)]
PriceUSD = Annotated[JsonFloat, Field(gt=0, le=_MAX_COMPONENT_USD)]


class HardwareSpec(Section):
    """Which system to build from ("auto" = evaluate every catalog system) and the facility limits."""

    system: StrictStr = Field("auto", description="Catalog system id (GET /api/catalog/), or auto: every system.")
    fabric: Literal["auto", "infiniband-ndr", "infiniband-xdr", "roce-400g", "roce-800g"] = Field(
        "auto", description="Compute fabric; auto picks the system's reference fabric."
    )
    rack_kw: JsonFloat | None = Field(
        None, ge=1, le=2000, description="Rack power budget (kW); default: the system's reference rack."
    )
    cooling: Literal["auto", "air", "rdhx", "liquid"] = Field(
        "auto", description="Cooling method; auto chooses by rack power (rdhx = rear-door heat exchanger)."
    )

    @field_validator("system")
    @classmethod
    def _known_system(cls, system: str, info: ValidationInfo) -> str:
        systems = catalog_of(info).systems
        if system != "auto" and system not in systems:
            known = ", ".join(sorted(systems))
            hint = did_you_mean(system, systems)
            raise PydanticCustomError(RULE, f"'{system}' is not a catalog system{hint} (known: auto, {known})")
        return system


class SiteSpec(Section):
    """Site economics. pue null = derived from the cooling method (assumptions pue_*)."""

    electricity_usd_per_kwh: JsonFloat | None = Field(
        None, gt=0, le=10, description="Electricity price; default: the sourced default in the plan's costs."
    )
    pue: JsonFloat | None = Field(None, ge=1.0, le=3.0, description="Power usage effectiveness; default: by cooling.")
    colo_usd_per_kw_month: JsonFloat | None = Field(
        None, gt=0, le=100_000, description="Colocation price; default: the sourced default in the plan's costs."
    )
    ambient_c: JsonFloat | None = Field(
        None,
        ge=-50,
        le=60,
        description="Design outdoor dry-bulb temperature in C the heat rejection must work at (dry coolers or "
        "chillers); default: a sourced design value.",
    )
    ownership: Literal["colocation", "owned"] = Field(
        "colocation",
        description="colocation: the facility is rented (colocation price per kW-month); owned: its building, "
        "electrical chain and heat rejection are bought (in capex) and no colocation is paid.",
    )


class PricingSpec(Section):
    """Costing horizon, cloud regions and this plan's own price overrides (read by the costing stage)."""

    years: Annotated[StrictInt, Field(gt=0, le=20), WHOLE] = Field(3, description="TCO horizon in years.")
    regions: tuple[Region, ...] = Field(
        DEFAULT_REGIONS,
        min_length=1,
        max_length=_MAX_REGIONS,
        description="AWS regions to price cloud rental in, e.g. us-east-1 (duplicates dropped).",
    )
    utilization: JsonFloat | None = Field(
        None, ge=0.01, le=1, description="Share of hours the owned cluster does paid work, [0.01, 1]; default: sourced."
    )
    component_prices: dict[str, PriceUSD] = Field(
        default_factory=dict,
        description="USD per unit by BOM part number or catalog id (an id covers every length of a cable); "
        "replaces the catalog price for this plan only.",
    )
    parameters: dict[str, float | int] = Field(
        default_factory=dict,
        description="Named cost parameters (installation share, maintenance share, ...; each plan lists the ones "
        "it used with their sources) for this plan only.",
    )

    @field_validator("regions", mode="before")
    @classmethod
    def _region_names(cls, regions: object) -> object:
        if not isinstance(regions, list | tuple):  # a tuple only from Python callers; JSON has lists
            raise PydanticCustomError(RULE, f"must be a list of region names, not {type_name(regions)}")
        if not regions:
            raise PydanticCustomError(RULE, "must list at least one region")
        if len(regions) > _MAX_REGIONS:
            raise PydanticCustomError(RULE, f"must list at most {_MAX_REGIONS} regions")
        problems: list[Problem] = []
        for index, region in enumerate(regions):
            if not isinstance(region, str) or not _REGION.fullmatch(region):
                shown = repr(region) if isinstance(region, str) else type_name(region)
                problems.append(((index,), f"must be an AWS region name like 'us-east-1' (got {shown})", region))
        if problems:
            raise_problems(problems)
        return tuple(dict.fromkeys(regions))

    @field_validator("component_prices", mode="wrap")
    @classmethod
    def _known_parts(
        cls, prices: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> dict[str, float]:
        if not isinstance(prices, dict):
            return handler(prices)  # "must be an object"
        if len(prices) > _MAX_COMPONENT_PRICES:
            raise PydanticCustomError(RULE, f"may name at most {_MAX_COMPONENT_PRICES} parts")
        known = _price_keys(catalog_of(info))
        problems: list[Problem] = []
        for key in prices:
            if key not in known:
                message = f"is not a catalog part number or id{did_you_mean(str(key), sorted(known))}"
                problems.append(((key,), message, prices[key]))
        try:
            cleaned = handler({key: value for key, value in prices.items() if key in known and value is not None})
        except ValidationError as exc:
            raise_problems(problems, exc)
        if problems:
            raise_problems(problems)
        return cleaned

    @field_validator("parameters", mode="before")
    @classmethod
    def _known_parameters(cls, parameters: object, info: ValidationInfo) -> object:
        if not isinstance(parameters, dict):
            return parameters  # "must be an object"
        limits: Mapping[str, CostParameterLimit] = (info.context or {}).get("cost_parameters") or (
            cost_parameter_limits()
        )
        problems: list[Problem] = []
        cleaned: dict[str, float] = {}
        for name, given in parameters.items():
            limit = limits.get(name)
            if limit is not None and given is None:
                continue  # null: not given
            if limit is None:
                problems.append(((name,), unknown_key(name, limits), given))
                continue
            lower = {"gt": limit.minimum} if limit.minimum_exclusive else {"ge": limit.minimum}
            number, messages = check_number(given, le=limit.maximum, **lower)
            problems.extend(((name,), message, given) for message in messages)
            if number is not None and limit.integer and not float(number).is_integer():
                problems.append(((name,), "must be a whole number", given))
            elif number is not None:
                cleaned[name] = float(number)
        if problems:
            raise_problems(problems)
        return cleaned


def price_keys(catalog: Catalog) -> set[str]:
    """Every key a price may name (a component price override or a vendor quote's row)."""
    return _price_keys(catalog)


def _price_keys(catalog: Catalog) -> set[str]:
    """Every key a component price override may name: catalog ids and BOM part numbers (each cable length)."""
    keys = set(catalog.systems)
    parts = catalog.parts
    if parts is None:
        return keys
    for part in parts.parts.values():
        keys.add(part.id)
        lengths = part.spec.get("lengths_m") or [None]
        keys.update(part.part_number_for(length) for length in lengths)
    keys.update(phys.part_number for phys in parts.systems.values() if phys.part_number)
    return keys
