"""Azure GPU VM sizes the planner prices, mapped to catalog GPUs and systems.

Why a curated table: the Retail Prices API names a meter and an ARM SKU but says nothing about GPUs, and the
costing joins a cloud offer to the plan's hardware by catalog GPU id (engine/data/catalog/gpus.json). Each size
is taken from Microsoft's "ND-H100-v5 / ND-H200-v5 / ND-GB200-v6 / NDm A100 v4 size series" pages (Azure Virtual
Machines documentation, Microsoft Learn): GPUs per VM, the GPU, and the scale-out network (InfiniBand per VM).
`catalog_system` is the catalog system the VM resembles (same GPU, GPU count per node and fabric class).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AZURE_GPU_SKUS", "AzureGpuSku"]


@dataclass(frozen=True)
class AzureGpuSku:
    gpus: int
    gpu_model: str  # catalog GPU id
    catalog_system: str  # catalog system id with the same GPUs per node and fabric class
    scale_out: str  # the VM's scale-out network, as Microsoft documents it


AZURE_GPU_SKUS: dict[str, AzureGpuSku] = {
    "Standard_ND96isr_H100_v5": AzureGpuSku(8, "h100-sxm", "dgx-h100", "8 x 400 Gb/s NDR InfiniBand"),
    "Standard_ND96isr_H200_v5": AzureGpuSku(8, "h200-sxm", "dgx-h200", "8 x 400 Gb/s NDR InfiniBand"),
    "Standard_ND128isr_NDR_GB200_v6": AzureGpuSku(4, "b200-gb200", "gb200-nvl72", "4 x 400 Gb/s NDR InfiniBand"),
    "Standard_ND96amsr_A100_v4": AzureGpuSku(8, "a100-80gb-sxm", "dgx-a100-80gb", "8 x 200 Gb/s HDR InfiniBand"),
}
