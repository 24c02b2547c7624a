"""Every published steady-state measurement the step-time model is checked against (`ROWS`), from the 2021-2023
papers and tables (`calibration.paper_rows`) and today's stacks (`calibration.modern_rows`)."""

from __future__ import annotations

from calibration.modern_rows import MODERN_ROWS
from calibration.paper_rows import PAPER_ROWS
from calibration.row_schema import DATASET_SOURCES, H100_PEAK_TFLOPS, CalibrationRow

__all__ = ["DATASET_SOURCES", "H100_PEAK_TFLOPS", "ROWS", "CalibrationRow"]

ROWS: list[CalibrationRow] = [*PAPER_ROWS, *MODERN_ROWS]
