"""The plain form of an explain entry the stage explainers build (formula, inputs, source); `engine.result.assemble`
turns each into the typed `ExplainEntry`, in words (engine/explain/wording.py)."""

from __future__ import annotations

__all__ = ["Entry", "entry"]

Entry = dict[str, object]


def entry(formula: str, inputs: dict[str, object], source: str) -> Entry:
    """One entry: the formula, the inputs it was computed from, and the public source."""
    return {"formula": formula, "inputs": inputs, "source": source}
