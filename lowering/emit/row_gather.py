"""Rows chosen by an index tensor (`load(w[idx[r], :])`, ascend_dsl/parser_index.py): the copy-in of a row gather.

The API subset has no DMA gather, so the tile is assembled row by row: the scalar unit reads row i's
number from the index tensor in GM (`GlobalTensor::GetValue`, as per-channel values are read), a negative
number counts from the end (PyTorch's `w[idx]`), and one GM -> UB copy of rowLen_ elements moves row `idx[i]`
of `w` to UB row i (rows rowPitch_ apart, as every whole-row tile). A number outside [-V, V) makes that copy
read outside `w`'s GM buffer: the emulator reports it (GM-OOB); on hardware it reads whatever lies there.
One copy per row costs a DMA issue per row (about the cost of a contiguous copy when rows are 1 KB or
longer; short rows are issue-bound). Rows longer than UB run in chunked passes (emit/chunk.py), each
chunk copied from the picked row (`chunk_copy_in_lines`).

Along a middle dim (TileIndex.group, ir.GroupGather (K, R): a table [A.., R, *row] under a split over (A.., K)): loop row
g = (a, k) copies table row (g / K) * R + n, n = idx[g] (idx [A.., K], split with the loop: take_along_dim) or
idx[g % K] (idx [K], a whole view: index_select along dim 1); a negative n counts from the end of R. The global row
is rowStart_ + offset + i (whole rows only: plan_chunks refuses to chunk it), the members `<gm>Group_` (K) and
`<gm>Rows_` (R) hold the sizes. A number outside [-R, R) would read another group's row unseen (no GM bound is
crossed), so the copy-in stops the kernel there (`Trap()`: TRAP in the emulator; one compare per row); the
interpreter reports INDEX.
"""

from __future__ import annotations

from ascend_dsl import ir


def gathered_tensors(kernel: ir.Kernel) -> dict[str, ir.TensorParam]:
    """The tensors read through an index tensor, by name (their GM view is the whole tensor)."""
    names = {s.tensor for s in ir.walk(kernel.body) if isinstance(s, ir.CopyIn) and s.index.by}
    names |= {e.tensor for s in ir.walk(kernel.body) if isinstance(s, ir.VALUE_STMTS)
              for e in ir.walk_expr(s.value) if isinstance(e, ir.Load) and e.index.by}
    return {p.name: p for p in kernel.tensors if p.name in names}


def groups(kernel: ir.Kernel) -> dict[str, ir.GroupGather]:
    """Tables gathered along a middle dim -> their TileIndex.group."""
    return {s.tensor: s.index.group for s in ir.walk(kernel.body) if isinstance(s, ir.CopyIn) and s.index.group}


def periodic_indices(kernel: ir.Kernel) -> dict[str, str]:
    """[K] index tensors of gathers along a middle dim (index_select: one number per k) -> K."""
    return {s.index.by: s.index.group.k for s in ir.walk(kernel.body) if isinstance(s, ir.CopyIn) and s.index.group
            and s.index.group.periodic}


def _tiling(d) -> str:
    return str(d) if str(d).isdigit() else f"tiling.{d}"


def gm_view_lines(p: ir.TensorParam, gm: str, base: str, group: ir.GroupGather | None = None) -> list[str]:
    """The whole-tensor GM view of gathered tensor `p` ([V, *row]) and its row count member; along a middle dim
    ([A.., R, *row]) also the loop's last row symbol K and R."""
    if group is not None:
        size = " * ".join(f"static_cast<uint64_t>({_tiling(d)})" for d in p.shape)
        return [f"{gm}Rows_ = {_tiling(group.r)};  // '{p.name}' gathered along dim {group.r}",
                f"{gm}Group_ = {_tiling(group.k)};  // loop rows per group of '{p.name}' rows",
                f"{gm}.SetGlobalBuffer({base}, {size});"]
    return [f"{gm}Rows_ = tiling.{p.shape[0]};  // rows of '{p.name}' that an index may pick",
            f"{gm}.SetGlobalBuffer({base}, static_cast<uint64_t>({gm}Rows_) * rowLen_);"]


def copy_in_lines(s: ir.CopyIn, queue: str, ctype: str, gm: str, index_gm: str, index_ctype: str) -> list[str]:
    """Alloc the tile's buffer, copy row `index[offset + i]` of the gathered tensor into UB row i, enqueue."""
    return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
            f"for (uint32_t i = 0; i < count; ++i) {{  // row i <- row {s.index.by}[i] of {s.tensor}",
            f"    int64_t row = static_cast<int64_t>({index_gm}.GetValue(offset + i));"
            + ("" if index_ctype == "int64_t" else f"  // {index_ctype} row numbers"),
            f"    if (row < 0) {{ row += static_cast<int64_t>({gm}Rows_); }}  // from the end, as w[idx] in PyTorch",
            f"    CopyGmToUb({s.buffer}[i * rowPitch_], {gm}[static_cast<uint64_t>(row) * rowLen_], rowLen_);",
            "}", f"{queue}.EnQue({s.buffer});"]


def group_copy_in_lines(s: ir.CopyIn, queue: str, ctype: str, gm: str, index_gm: str) -> list[str]:
    """Along a middle dim: loop row g = rowStart_ + offset + i copies table row (g / K) * R + n, n = idx[g]
    (the index view is the core's share: offset + i) or idx[g % K] (a [K] index, whole)."""
    at = f"g % static_cast<uint64_t>({gm}Group_)" if s.index.group.periodic else "offset + i"
    return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
            f"for (uint32_t i = 0; i < count; ++i) {{  // row i <- row {s.index.by}[..] along dim "
            f"{s.index.group.r} of {s.tensor}",
            "    const uint64_t g = static_cast<uint64_t>(rowStart_ + offset + i);  // the loop's global row",
            f"    int64_t row = static_cast<int64_t>({index_gm}.GetValue({at}));",
            f"    if (row < 0) {{ row += static_cast<int64_t>({gm}Rows_); }}  // from the end, as take_along_dim",
            f"    if (row < 0 || row >= {gm}Rows_) {{ Trap(); }}  // outside [-R, R): it would read another group's row",
            f"    const uint64_t src = (g / static_cast<uint64_t>({gm}Group_)) * static_cast<uint64_t>({gm}Rows_) + "
            "static_cast<uint64_t>(row);",
            f"    CopyGmToUb({s.buffer}[i * rowPitch_], {gm}[src * rowLen_], rowLen_);",
            "}", f"{queue}.EnQue({s.buffer});"]


def chunk_copy_in_lines(s: ir.CopyIn, queue: str, ctype: str, gm: str, index_gm: str) -> list[str]:
    """Chunked rows (emit/chunk.py): `count` elements at column `offset` of the row the index picks for the
    current row (rowOffset_ / rowLen_ of the core's share)."""
    return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
            f"{{  // the chunk of row {s.index.by}[r] of {s.tensor}",
            f"    int64_t row = static_cast<int64_t>({index_gm}.GetValue(rowOffset_ / rowLen_));",
            f"    if (row < 0) {{ row += static_cast<int64_t>({gm}Rows_); }}  // from the end, as w[idx] in PyTorch",
            f"    CopyGmToUb({s.buffer}, {gm}[static_cast<uint64_t>(row) * rowLen_ + offset], count);",
            "}", f"{queue}.EnQue({s.buffer});"]


def member_lines(kernel: ir.Kernel, gm_name) -> list[str]:
    """Kernel class members: the row count of each gathered tensor."""
    lines = [f"int64_t {gm_name(n)}Rows_ = 0;" for n in gathered_tensors(kernel)]
    return lines + [f"int64_t {gm_name(n)}Group_ = 0;" for n in groups(kernel)]
