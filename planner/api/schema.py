"""OpenAPI rendering of the engine's pydantic request schema.

drf-spectacular's pydantic support (`drf_spectacular.contrib.pydantic`) pastes pydantic's JSON Schema (draft
2020-12) into an OpenAPI 3.0 document, where two of its spellings are invalid: `{"type": "null"}` in an anyOf
(3.0 says `nullable: true`) and numeric `exclusiveMinimum` (3.0 wants `minimum` plus a boolean). This extension
takes precedence over the contrib one and renders the same models in the 3.0 dialect, so the published schema is
valid and schemathesis can generate requests from it.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.contrib.pydantic import PydanticExtension
from drf_spectacular.plumbing import ResolvedComponent
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, model_json_schema
from pydantic_core import core_schema

__all__ = ["OpenApi30JsonSchema", "PydanticOpenApi30Extension"]


class OpenApi30JsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema generator, speaking OpenAPI 3.0's schema dialect (nullable, boolean exclusives)."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        if "$ref" in inner:  # 3.0 ignores keywords beside a $ref
            return {"allOf": [inner], "nullable": True}
        return {**inner, "nullable": True}

    def int_schema(self, schema: core_schema.IntSchema) -> JsonSchemaValue:
        return _boolean_exclusives(super().int_schema(schema))

    def float_schema(self, schema: core_schema.FloatSchema) -> JsonSchemaValue:
        return _boolean_exclusives(super().float_schema(schema))


def _boolean_exclusives(schema: dict[str, Any]) -> dict[str, Any]:
    for exclusive, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        bound = schema.get(exclusive)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            schema[inclusive], schema[exclusive] = bound, True
    return schema


class PydanticOpenApi30Extension(PydanticExtension):
    """Every pydantic model given to `extend_schema`, as an OpenAPI 3.0 component (request models validate input,
    so they are rendered in pydantic's validation mode)."""

    priority = 1  # over drf_spectacular.contrib.pydantic.PydanticExtension (0)

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema = model_json_schema(
            self.target,
            ref_template="#/components/schemas/{model}",
            mode="validation",
            schema_generator=OpenApi30JsonSchema,
        )
        for name, sub_schema in schema.pop("$defs", {}).items():
            component = ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=name, schema=sub_schema)
            auto_schema.registry.register_on_missing(component)
        return schema
