"""The shape of one published steady-state measurement: what was measured, on what, with which layout.

Why apart: the rows of each source (`calibration.paper_rows`, `calibration.modern_rows`) and the code that evaluates
them (`calibration.training`) all read this one type.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.request.spec import ModelSpec, TrainingMemory, TrainingParallelism

__all__ = ["DATASET_SOURCES", "H100_PEAK_TFLOPS", "CalibrationRow"]

H100_PEAK_TFLOPS = 989.0
# Each reference dataset's source, the unit a leave-one-source-out fit drops.
DATASET_SOURCES = {
    "3a": "Narayanan et al. 2021 (Megatron-LM), Table 1",
    "3b": "Korthikanti et al. 2022, Table 5",
    "3c": "MosaicML llm-foundry benchmark table",
}


@dataclass(frozen=True)
class CalibrationRow:
    """One published measurement with the configuration that produced it."""

    id: str
    dataset: str  # "3a" | "3b" | "3c"
    role: str  # "fit" | "held out"
    model: ModelSpec
    system: str
    gpus: int
    batch_sequences: int
    parallelism: TrainingParallelism
    software: dict[str, float]  # assumption overrides describing the software stack (not fitted)
    published_step_s: float
    published_metric: str  # the figure as published, with its basis
    basis: str
    notes: str = ""
    precision: str = "bf16"
    # The leave-one-source-out unit: one paper or one published table (default: the dataset's source).
    source: str = ""
    # The recipe's memory options where it publishes them (activations kept in FP8 or in host memory).
    memory: TrainingMemory | None = None

    @property
    def source_id(self) -> str:
        return self.source or DATASET_SOURCES[self.dataset]
