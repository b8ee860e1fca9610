"""Per-channel tensors cached in UB per core (PERIOD_CACHE buffers, lowering/passes/plan_period_cache.py).

Before the core's first tile the whole `[C]` tensor is copied into its buffer when its C values fit
(ir.PERIOD_CACHE_BYTES; `Period_` is C, set at launch) and the cache pays; each tile's CopyIn then gives row `q`
its value `cache[q % C]` from UB. Otherwise the scalar GM read per row stays.

It pays when the scalar unit is the busier pipe: the copy costs each cached tensor one more DMA on MTE2 (a
latency), and saves the scalar unit a GM read per row and tensor. So the cache is used when the rows' scalar GM
reads (k tensors x GM_SCALAR_CYCLES per row) exceed the row's GM -> UB time (its bytes at one core's share of
HBM): batch_norm_module (4 tensors, rows of 3136) caches, group_norm_module's normalising loop (2 tensors, f32
rows of 4096, MTE2-bound: one more DMA would slow it) does not. A coarse static estimate restating the 910B1
table's figures (lowering/row_tile_count.py; the 200-cycle scalar GM read is the cost model's ASSUMPTION): it
decides only where a value is read from, never the value.
"""

from __future__ import annotations

from ascend_dsl import ir

from ..row_tile_count import SHARED_BYTES_PER_CYCLE, SOLO_BYTES_PER_CYCLE

#: cycles of a scalar GM read (GlobalTensor::GetValue), as npu_harness/cost/targets/ascend910b1.toml charges it
GM_SCALAR_CYCLES = 200

def fits(gm: str, ctype: str, buffers) -> str:
    """The run-time condition: the tensor's C values fit the cache, and the cache pays (above)."""
    views = list(buffers.values()) if isinstance(buffers, dict) else list(buffers)
    k = sum(b.buffer.role is ir.BufferRole.PERIOD_CACHE for b in views)
    row_bytes = sum(b.buffer.dtype.size for b in views
                    if b.buffer.position is ir.Position.VECIN and b.buffer.layout is ir.Layout.ROWS)
    cond = f"{gm}Period_ * sizeof({ctype}) <= {ir.PERIOD_CACHE_BYTES}"
    if not row_bytes:
        return cond
    shared, solo = round(SHARED_BYTES_PER_CYCLE * 1000), round(SOLO_BYTES_PER_CYCLE * 1000)
    rate = f"({shared}ull / GetBlockNum() < {solo}ull ? {shared}ull / GetBlockNum() : {solo}ull)"  # milli-bytes/cycle
    return f"{cond} && {k * GM_SCALAR_CYCLES}ull * {rate} > static_cast<uint64_t>(rowLen_) * {row_bytes * 1000}ull"


def cache_view(buffers: dict, tensor: str):
    """The tensor's PERIOD_CACHE buffer view, or None."""
    return next((b for b in buffers.values() if b.buffer.role is ir.BufferRole.PERIOD_CACHE and b.buffer.of == tensor),
                None)


def copy_in_lines(buf: str, ctype: str, gm: str, cache, buffers) -> list[str]:
    """Fill the tile's `count` per-row values: from the UB cache when the tensor is in it, else from GM."""
    src = f"(rowStart_ + offset + i) % {gm}Period_"
    from_gm = ["for (uint32_t i = 0; i < count; ++i) {", f"    {buf}.SetValue(i, {gm}.GetValue({src}));", "}"]
    if cache is None:
        return from_gm
    return [f"if ({fits(gm, ctype, buffers)}) {{  // the whole tensor is in UB (copied in once per core)",
            f"    LocalTensor<{ctype}> {cache.name} = {cache.member}.Get<{ctype}>();",
            "    for (uint32_t i = 0; i < count; ++i) {",
            f"        {buf}.SetValue(i, {cache.name}.GetValue({src}));", "    }",
            "} else {", *("    " + ln for ln in from_gm), "}"]


def preload_lines(ctx, buffers, tensors, loc) -> list[str]:
    """Before the tiles: each cached tensor copied in whole, when it fits (the caller adds the MTE2 -> S wait)."""
    lines = []
    for b in buffers:
        if b.buffer.role is not ir.BufferRole.PERIOD_CACHE:
            continue
        gm, c = tensors[b.buffer.of].gm, b.buffer.dtype.ctype
        lines += [f"// {loc(ctx, b.buffer.span)}: {b.buffer.of}[r], one value per channel: copied in once per core",
                  f"if ({fits(gm, c, buffers)}) {{",
                  f"    LocalTensor<{c}> {b.name} = {b.member}.Get<{c}>();",
                  f"    CopyGmToUb({b.name}, {gm}, static_cast<uint32_t>({gm}Period_));", "}"]
    return lines
