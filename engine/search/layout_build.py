"""The layout grid a training search scores: the layouts its pins and options allow, pruned where activations alone
overflow HBM, with their step-time costs (`step_time.layout_costs`), remembered across searches (`layout_cache`).

Apart from the search itself (`layouts.py`) so that module stays about the queries; built once per search (and once
more with offload when nothing fits without it), never per query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.performance.cp_comm import CP_COMM_CODES, cp_comm_valid
from engine.performance.layout_terms import activation_floor
from engine.performance.step_time import RECOMPUTE_CODES, LayoutCosts, layout_costs
from engine.search.grid import MICRO_BATCH_OPTIONS, GridOptions, layout_grid
from engine.search.layout_cache import ACTIVATION_FLOORS, LAYOUTS

if TYPE_CHECKING:
    from engine.search.layouts import TrainingSearch

__all__ = ["activation_offload_options", "grid_layouts"]

# Shares of the layers whose activations the search tries keeping in host memory: NVIDIA's GB200 / GB300 recipes
# offload a quarter, a half and about three quarters (Megatron-Bridge llama3 / llama31 configurations, 2025).
ACTIVATION_OFFLOAD_SHARES = (0.25, 0.5, 0.75)


def activation_offload_options(layers: int, pinned: int | None) -> tuple[int, ...]:
    """The offloaded-layer counts the grid holds: the pinned one, else none and each share of the layers (whole
    layers, at least one, one fewer than all at most), distinct."""
    if pinned is not None:
        return (pinned,)
    counts = {min(max(round(share * layers), 1), layers - 1) for share in ACTIVATION_OFFLOAD_SHARES}
    return (0, *sorted(c for c in counts if c > 0))


def grid_layouts(s: TrainingSearch, offloads: list[int]) -> LayoutCosts | None:
    """The grid's layout costs with these offload codes, remembered across searches (`layout_cache`): they
    depend only on the key below, the same for every request with this model, hardware and pins."""
    key = (
        s.work,
        s.hw,
        s.eff,
        s.memory,
        s.spec.parallelism,
        s.batch_sequences,
        s.system.nvlink_domain_gpus,
        s.max_tp,
        s.min_cp_chunk,
        s.min_m_per_stage,
        s.spec.memory.activation_offload_layers,
        tuple(offloads),
    )
    return LAYOUTS.get_or_build(key, lambda: _build_layouts(s, offloads))  # fmt: skip


def _build_layouts(s: TrainingSearch, offloads: list[int]) -> LayoutCosts | None:
    """The grid the search's option lists and the request's pins allow (None when a pin leaves no option), each
    layout once per offload code, costed after the memory pruning."""
    pin = s.spec.parallelism
    tps = s.tp_options()
    if pin.tp is not None:
        tps = [pin.tp] if pin.tp in tps else []
    mbs = [b for b in MICRO_BATCH_OPTIONS if b <= s.batch_sequences] or [1]
    if pin.micro_batch is not None:
        mbs = [pin.micro_batch]
    rcs = [RECOMPUTE_CODES[pin.recompute]] if pin.recompute is not None else [0, 1, 2]
    aos = activation_offload_options(s.work.shape.layers, s.spec.memory.activation_offload_layers)
    opt = GridOptions(tuple(tps), tuple(s.pp_options()), tuple(mbs), tuple(rcs), tuple(s.ep_options()),
                      tuple(s.cp_options()), pin.interleave, pin.first_stage_layers, pin.last_stage_layers,
                      prune_cp_micro_batch=pin.micro_batch is None and pin.cp is None,
                      act_offloads=aos, folds=s.fold_options(),
                      fold_only=s.spec.parallelism.etp == 1, ep_overlaps=s.ep_overlap_options())  # fmt: skip
    if not all((tps, opt.pps, opt.eps, opt.cps)):
        return None
    g = layout_grid(s.work.shape.layers, opt)
    n = len(g["tp"])
    if n == 0:
        return None
    g = _prune_memory(s, g, opt)  # on the whole grid: its activation floors are remembered per grid
    if pin.cp_comm is not None:
        g = _with_cp_comm(s, g, pin.cp_comm)
    if len(g["tp"]) == 0:  # every layout keeps more activations in host memory than a GPU may give them
        return None
    off = np.repeat(np.asarray(offloads, dtype=np.int64), len(g["tp"]))
    g = {k: np.tile(v, len(offloads)) for k, v in g.items()}
    return layout_costs(s.work, s.hw, s.eff, g["tp"], g["pp"], g["micro_batch"], g["interleave"],
                        g["recompute"], g["ep"], g["cp"], g["first"], g["last"], off, s.memory,
                        g["act_offload"], g["fold"], pin.cp_comm, g["ep_overlap"])  # fmt: skip


def _with_cp_comm(s: TrainingSearch, g: dict[str, np.ndarray], method: str) -> dict[str, np.ndarray]:
    """The layouts a pinned context-parallel exchange can run: context parallelism (cp > 1; the pin means the user
    wants it), and for the all-to-all methods a head split the layout allows (`cp_comm.cp_comm_valid`)."""
    runs = (g["cp"] > 1) & cp_comm_valid(s.work, g["tp"], g["cp"], s.hw.nvlink_domain)[CP_COMM_CODES[method]]
    return {k: v[runs] for k, v in g.items()}


def _prune_memory(s: TrainingSearch, g: dict[str, np.ndarray], opt: GridOptions) -> dict[str, np.ndarray]:
    """Drop layouts whose activations alone (with the fewest micro-batches in flight any step can have, and
    the reserve) exceed HBM: no dp, ZeRO stage or offload can make them fit; and layouts whose offloaded
    activations exceed the host memory a GPU may give them (never kept, not even as the closest miss). Done
    before the step costs, which are then computed for the layouts kept only. The leanest one is kept so a
    search where nothing fits can still name the closest miss. The activation floor of the grid
    (`layout_terms.activation_floor`) depends on no hardware figure, so every system with the same grid shares
    it (`ACTIVATION_FLOORS`)."""
    pp = g["pp"].astype(float)
    need_m = np.where(pp > 1, s.min_m_per_stage * pp, 1.0)
    fp8, flash, sp = s.memory.fp8_activations, s.eff.flash_attention, s.eff.sequence_parallel
    logits = s.memory.logits_bytes_per_element
    key = (s.work, opt, s.min_m_per_stage, fp8, flash, sp, logits)
    acts, host = ACTIVATION_FLOORS.get_or_build(
        key, lambda: activation_floor(s.work, g, need_m, fp8, flash, sp, logits)
    )
    reserve = s.memory.reserve_bytes if s.memory.reserve_bytes is not None else 0.0
    in_host = host <= s.memory.host_offload_bytes
    keep = (acts + reserve <= s.hw.hbm_bytes) & in_host
    if not np.any(keep) and np.any(in_host):
        keep[int(np.argmin(np.where(in_host, acts, np.inf)))] = True
    return g if np.all(keep) else {k: v[keep] for k, v in g.items()}
