"""Named, overridable engine assumptions: the records are package data (`engine/data/assumptions/*.toml`), read
and checked once by `registry`; import the public names from here or from `engine.assumptions.registry`."""

from engine.assumptions.registry import ASSUMPTIONS, KV_BYTES_BY_PRECISION, Assumption, Assumptions

__all__ = ["ASSUMPTIONS", "KV_BYTES_BY_PRECISION", "Assumption", "Assumptions"]
