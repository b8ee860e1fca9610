"""index_select along the last dim with any number of indices (`index_select(x, load(idx[:]))`,
ascend_dsl/parser_select.py): row b of the tile holds x[b, idx[k]] for the K columns of the loop's rows.

`x` ([rows.., D], D any) is not a row tensor of the loop, so it is read whole from GM: per tile row (global row
g = rowStart_ + tileRow_ + i) and per column k, the scalar unit reads idx[k] from the index row in UB, stops the
kernel on a number outside [0, D) (`Trap()`: TRAP in the emulator; PyTorch rejects negative ones too), and
writes `xGm.GetValue(g * D + idx[k])` into the tile (`LocalTensor::SetValue`; V_S before, S_V after). Cost: two
scalar reads per element (no DMA or vector form: the API subset has no GM gather, and an x row in UB would
need a buffer of another row length): a correctness path, fine for K and row counts of a few thousand.

Since session 33 the whole-row loops of VECTOR kernels gather on the vector unit instead (lowering/passes/
plan_gather_rows.py, emit/gather_rows.py: the tile's x rows in UB, one Gather per row); this walk is left for other
kernel kinds and for an i64 index on 310P.

`gather(x, load(idx[r, :]))` of a named x [rows.., D] with idx [rows.., K] (torch.gather(x, -1, idx), K any) is
the same op and walk with whole rows of indices: element k of tile row i reads idx[i, k] (`per_row`).

`gather(x, load(idx[r, :]))` of a named x [A.., R, C] (op gather_middle, API GatherMiddle; torch.gather along
the middle dim) is the same walk over the tile's elements: element c of loop row g = (a, k) reads
x[(g / K) * R + idx[i, c], c] (`Trap()` outside [0, R)).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.parser_scatter import tensor_name

API, MIDDLE = "SelectCols", "GatherMiddle"
VECTOR = "GatherRowsVec"  # SelectCols on the vector unit (lowering/passes/plan_gather_rows.py): x's view stays whole
APIS = (API, MIDDLE, VECTOR)


def ops(kernel: ir.Kernel) -> list[ir.VecOp]:
    return [s for s in ir.walk(kernel.body) if isinstance(s, ir.VecOp) and s.api in APIS]


def used(kernel: ir.Kernel) -> bool:
    """Whether Compute needs the tile's global first row (rowStart_ + tileRow_)."""
    return bool(ops(kernel))


def uses_row(tl: ir.TileLoop) -> bool:
    return any(isinstance(s, ir.VecOp) and s.api in APIS for s in ir.walk(tl.body))


def tables(kernel: ir.Kernel) -> dict[str, str]:
    """The tensors index_select / gather_middle read whole -> their API."""
    return {tensor_name(s.srcs[1]): s.api for s in ops(kernel)}


def _tiling(d: str) -> str:
    return d if d.isdigit() else f"tiling.{d}"


def gm_view_lines(p: ir.TensorParam, gm: str, base: str, api: str) -> list[str]:
    size = " * ".join(f"static_cast<uint64_t>({_tiling(str(d))})" for d in p.shape)
    cols = [f"{gm}Cols_ = {_tiling(str(p.shape[-1]))};  // the row length of '{p.name}', read whole by index_select"]
    return [*(cols if api == API else []), f"{gm}.SetGlobalBuffer({base}, {size});  // whole: read per element"]


def member_lines(kernel: ir.Kernel, gm_name) -> list[str]:
    return [f"int64_t {gm_name(n)}Cols_ = 0;" for n, api in tables(kernel).items() if api == API]


def compute_lines(s: ir.VecOp, gm_name, sync, per_row: bool = False) -> list[str]:
    """The C++ of one index_select over the tile's `count` rows (`s.srcs`: index row, x's name, D); `per_row`: the
    index is whole rows (gather(x, load(idx[r, :])) along the last dim: row i reads its own index row)."""
    index, x = s.srcs[0], gm_name(tensor_name(s.srcs[1]))
    at = "i * rowPitch_ + k" if per_row else "k"
    return [*sync("V_S", "the scalar unit reads the index row and writes the tile"),
            "for (uint32_t i = 0; i < count; ++i) {",
            "    const uint64_t g = static_cast<uint64_t>(rowStart_ + tileRow_ + i);  // the row's global number",
            "    for (uint32_t k = 0; k < static_cast<uint32_t>(rowLen_); ++k) {",
            f"        const int64_t col = static_cast<int64_t>({index}.GetValue({at}));",
            f"        if (col < 0 || col >= {x}Cols_) {{ Trap(); }}  // a column outside x's rows: stop",
            f"        {s.dst}.SetValue(i * rowPitch_ + k, {x}.GetValue(g * static_cast<uint64_t>({x}Cols_) + "
            "static_cast<uint64_t>(col)));",
            "    }", "}", *sync("S_V", "the vector unit reads the tile")]


def middle_lines(s: ir.VecOp, gm_name, r: str, k: str, sync) -> list[str]:
    """The C++ of one gather along a middle dim over the tile's `count` rows (`s.srcs`: index rows, x's name, R, K;
    r and k their C++ expressions)."""
    index, x = s.srcs[0], gm_name(tensor_name(s.srcs[1]))
    return [*sync("V_S", "the scalar unit reads the index rows and writes the tile"),
            "for (uint32_t i = 0; i < count; ++i) {",
            "    const uint64_t g = static_cast<uint64_t>(rowStart_ + tileRow_ + i);  // the row's global number",
            f"    const uint64_t first = (g / static_cast<uint64_t>({k})) * static_cast<uint64_t>({r});  // x row (a, 0)",
            "    for (uint32_t c = 0; c < static_cast<uint32_t>(rowLen_); ++c) {",
            f"        const int64_t n = static_cast<int64_t>({index}.GetValue(i * rowPitch_ + c));",
            f"        if (n < 0 || n >= static_cast<int64_t>({r})) {{ Trap(); }}  // outside the middle dim: stop",
            f"        {s.dst}.SetValue(i * rowPitch_ + c, {x}.GetValue((first + static_cast<uint64_t>(n)) * rowLen_ + c));",
            "    }", "}", *sync("S_V", "the vector unit reads the tile")]
