"""What the file system must deliver and hold, worked out from the workload the way large training runs size it.

Why: one checkpoint and a flat per-SU figure undersize a frontier cluster's storage (and oversize a small one's).
Three needs, each with its own formula; the appliances are then counted for the largest (storage.py):

- write: the RA's guidance (write = read x storage_write_to_read_ratio) or the checkpoint, whichever is larger.
  A synchronous checkpoint must land within the stall the plan allows (checkpoint_stall_s); an asynchronous (or
  in-memory) one is copied to host memory in seconds and written in the background, and that write must finish
  within a share of the checkpoint interval the goodput model chose (checkpoint_async_write_fraction), so the next
  save never waits on it: write = checkpoint bytes / (interval x fraction).
- read: the RA's guidance or the data loader, whichever is larger; the loader reads tokens/s x token-id bytes,
  multiplied by data_loader_read_amplification (shuffled shards re-read, several loader workers, re-reads after
  restarts).
- capacity: checkpoints_retained checkpoints plus the data set twice (raw text and tokenised ids, one epoch's
  unique tokens = training tokens / dataset_epochs), plus headroom.

Token ids are stored as 16-bit integers when the vocabulary fits (<= 65,536 entries), else 32-bit, as Megatron-LM's
indexed datasets do (megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.assumptions.registry import Assumptions

__all__ = ["StorageNeed", "StorageWorkload", "storage_need", "token_id_bytes"]

TB = 1e12
GB = 1e9
UINT16_VOCAB = 65_536


def token_id_bytes(vocab: int) -> int:
    """Bytes per stored token id: 2 when every id fits 16 bits, else 4."""
    return 2 if vocab <= UINT16_VOCAB else 4


@dataclass(frozen=True)
class StorageWorkload:
    """The workload facts storage is sized from (the training sizing's, or none for serving)."""

    training_tokens: float | None = None
    checkpointing: str = "synchronous"  # synchronous | asynchronous | in_memory
    checkpoint_interval_s: float | None = None  # the goodput model's interval; None: not known
    tokens_per_s: float = 0.0
    vocab: int = UINT16_VOCAB + 1


@dataclass(frozen=True)
class StorageNeed:
    """Each need with what sets it: the RA guidance or the workload."""

    read_guidance_gbps: float
    loader_read_gbps: float
    write_guidance_gbps: float
    checkpoint_write_gbps: float
    checkpoint_write_budget_s: float
    checkpoint_tb: float
    checkpoints_retained: int
    dataset_raw_tb: float
    dataset_tokenised_tb: float
    capacity_tb: float
    checkpointing: str

    @property
    def read_gbps(self) -> float:
        return max(self.read_guidance_gbps, self.loader_read_gbps)

    @property
    def write_gbps(self) -> float:
        return max(self.write_guidance_gbps, self.checkpoint_write_gbps)

    @property
    def dataset_tb(self) -> float:
        return self.dataset_raw_tb + self.dataset_tokenised_tb

    @property
    def read_set_by(self) -> str:
        return "data loader" if self.loader_read_gbps > self.read_guidance_gbps else "guidance"

    @property
    def write_set_by(self) -> str:
        return "checkpoint" if self.checkpoint_write_gbps > self.write_guidance_gbps else "guidance"


def _checkpoint_write(checkpoint_tb: float, work: StorageWorkload, a: Assumptions) -> tuple[float, float]:
    """(GB/s, seconds allowed): the checkpoint written within the stall (synchronous) or the interval's share."""
    if work.training_tokens is None or checkpoint_tb <= 0:
        return 0.0, 0.0
    if work.checkpointing == "synchronous" or not work.checkpoint_interval_s:
        budget_s = float(a["checkpoint_stall_s"])
    else:
        budget_s = work.checkpoint_interval_s * a["checkpoint_async_write_fraction"]
    return checkpoint_tb * TB / GB / budget_s, budget_s


def storage_need(
    read_guidance_gbps: float,
    params: float,
    weight_bytes_per_param: float,
    work: StorageWorkload,
    a: Assumptions,
) -> StorageNeed:
    """Training: checkpoints hold the full optimizer state and the data set is stored; serving: the weights."""
    training = work.training_tokens is not None
    bytes_per_param = a["checkpoint_bytes_per_param"] if training else weight_bytes_per_param
    checkpoint_tb = params * bytes_per_param / TB
    ckpt_gbps, budget_s = _checkpoint_write(checkpoint_tb, work, a)
    id_bytes = token_id_bytes(work.vocab)
    if training:
        unique_tokens = float(work.training_tokens or 0.0) / a["dataset_epochs"]
        raw_tb = unique_tokens * a["dataset_bytes_per_token"] / TB
        tokenised_tb = unique_tokens * id_bytes / TB
        loader = work.tokens_per_s * id_bytes * a["data_loader_read_amplification"] / GB
    else:
        raw_tb = tokenised_tb = loader = 0.0
    retained = int(a["checkpoints_retained"])
    capacity = (raw_tb + tokenised_tb + retained * checkpoint_tb) * (1.0 + a["storage_headroom_fraction"])
    return StorageNeed(
        read_guidance_gbps=read_guidance_gbps,
        loader_read_gbps=loader,
        write_guidance_gbps=read_guidance_gbps * a["storage_write_to_read_ratio"],
        checkpoint_write_gbps=ckpt_gbps,
        checkpoint_write_budget_s=budget_s,
        checkpoint_tb=checkpoint_tb,
        checkpoints_retained=retained,
        dataset_raw_tb=raw_tb,
        dataset_tokenised_tb=tokenised_tb,
        capacity_tb=capacity,
        checkpointing=work.checkpointing if training else "none",
    )
