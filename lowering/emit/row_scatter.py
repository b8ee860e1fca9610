"""Rows scattered along dim 0 (`index_add` / `index_copy` / `index_put` on rows, ascend_dsl/parser_scatter.py).

Owner computes: the split is over the destination rows, so each core owns its share of y and no two cores
write one row; the tile's copy of x is the start, and no cross-core ordering (SyncAll) is needed. In Compute,
after the tile's rows are copied to dst (`DataCopy`, UB -> UB), the scalar unit walks the whole index tensor
in order (`GlobalTensor::GetValue`; index_put: a negative number counts from the end); a number outside
[0, V) stops the kernel (`Trap()`: the emulator reports TRAP, the NPU interrupts the AI Core). Each number in
the tile's rows [first, first + count) brings source row k into a row scratch (`CopyGmToUb`, MTE2 -> V), which
is added to (alpha times: `Muls` first) or copied over dst's row. Repeats are therefore applied in index order
on every target: adds in that order, the last copy wins. Cost: every tile reads the whole index (N scalar GM
reads) and each matching source row once, so it suits indices no longer than a few thousand per tile;
the GM views of index and source are whole tensors (`whole_tensors`).

Single elements along dim 0 (scatter / scatter_add(x, 0, index, src), index and src [N, D]; attr elems=1,
`element_lines`): the same owner-computes walk over every element of the index, source row k by source row k,
column j by column j; element (k, j) whose row number falls in the tile lands in that row's column j by the
scalar unit (`LocalTensor::SetValue`; scatter_add: f16 adds in float, rounded per add, as PyTorch's sequential
f16 adds). So repeats apply in source-row order on every target (deterministic adds, the last copy wins), and
a number outside [0, V) stops the kernel (`Trap()`). Each index row is first copied into a UB row of the
index's dtype (`CopyGmToUb`; V_MTE2 once, then MTE2_S before and S_MTE2 after each row's walk: ascendc_next.md
§5.5 rows 3 and 5), so the scalar unit reads UB (10 cycles in the cost model) instead of GM (200). Cost: N x D
scalar UB reads of the index per tile, N index-row copies, plus a source GM read per hit (scatter's value=: none):
still a correctness path (an index sorted or bucketed per core once would remove the per-tile walk).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.parser_scatter import named, tensor_name

APIS = ("RowScatterAdd", "RowScatterCopy")


def ops(kernel: ir.Kernel) -> list[ir.VecOp]:
    return [s for s in ir.walk(kernel.body) if isinstance(s, ir.VecOp) and s.api in APIS]


def used(kernel: ir.Kernel) -> bool:
    """Whether Compute needs the tile's global first row (rowStart_ + tileRow_)."""
    return bool(ops(kernel))


def uses_row(tl: ir.TileLoop) -> bool:
    return any(isinstance(s, ir.VecOp) and s.api in APIS for s in ir.walk(tl.body))


def whole_tensors(kernel: ir.Kernel) -> dict[str, tuple[str, bool]]:
    """Index and source tensors of row scatters -> (their row-count symbol, whether the tensor is the index)."""
    out = {}
    for s in ops(kernel):
        index = tensor_name(s.srcs[1])
        n = str(kernel.param(index).shape[0])
        whole_rows = dict(s.attrs).get("elems") == "1"  # an [N, D] index (single elements): N rows of rowLen_
        out[index] = (n, not whole_rows)
        if named(s.srcs[2]):  # (else scatter's scalar value=)
            out[tensor_name(s.srcs[2])] = (n, False)
    return out


def gm_view_lines(name: str, gm: str, base: str, kernel: ir.Kernel) -> list[str]:
    n, is_index = whole_tensors(kernel)[name]
    count = f"tiling.{n}" if not n.isdigit() else n
    return [f"{gm}Rows_ = {count};  // the whole '{name}', read by the row scatter",
            f"{gm}.SetGlobalBuffer({base}, static_cast<uint64_t>({gm}Rows_){'' if is_index else ' * rowLen_'});"]


def member_lines(kernel: ir.Kernel, gm_name) -> list[str]:
    return [f"int64_t {gm_name(n)}Rows_ = 0;" for n in whole_tensors(kernel)]


def compute_lines(s: ir.VecOp, gm_name, scratch: str, v_rows: str, alpha: str | None, sync) -> list[str]:
    """The C++ of one row scatter over the tile's `count` rows (`s.srcs`: rows, index, src, V, alpha)."""
    rows, index, src = s.srcs[0], tensor_name(s.srcs[1]), tensor_name(s.srcs[2])
    idx_gm, src_gm = gm_name(index), gm_name(src)
    wrap = dict(s.attrs).get("wrap") == "1"
    add = s.api == "RowScatterAdd"
    apply = ([f"            Muls({scratch}, {scratch}, {alpha}, static_cast<int32_t>(rowLen_));"] if alpha else []) + \
        ([f"            Add({s.dst}[at], {s.dst}[at], {scratch}, static_cast<int32_t>(rowLen_));"] if add else
         [f"            DataCopy({s.dst}[at], {scratch}, static_cast<uint32_t>(rowPitch_));"])
    return [f"DataCopy({s.dst}, {rows}, static_cast<uint32_t>(count * rowPitch_));  // the tile's rows, then the scattered ones",
            *sync("V_MTE2", "the row scratch is free"),
            "{",
            "    const int64_t first = static_cast<int64_t>(rowStart_ + tileRow_);  // the tile's first global row",
            f"    const int64_t rowsV = static_cast<int64_t>({v_rows});",
            f"    for (int64_t k = 0; k < {idx_gm}Rows_; ++k) {{  // in index order: repeats are deterministic",
            f"        int64_t row = static_cast<int64_t>({idx_gm}.GetValue(static_cast<uint64_t>(k)));",
            *(["        if (row < 0) { row += rowsV; }  // index_put: from the end"] if wrap else []),
            "        if (row < 0 || row >= rowsV) { Trap(); }  // a row number outside the destination: stop",
            "        if (row >= first && row < first + static_cast<int64_t>(count)) {",
            "            const uint32_t at = static_cast<uint32_t>(row - first) * static_cast<uint32_t>(rowPitch_);",
            f"            CopyGmToUb({scratch}, {src_gm}[static_cast<uint64_t>(k) * rowLen_], static_cast<uint32_t>(rowLen_));",
            *sync("MTE2_V", indent="            "),
            *apply,
            *sync("V_MTE2", "the scratch is read before the next source row lands", indent="            "),
            "        }", "    }", "}"]


def element_lines(s: ir.VecOp, gm_name, v_rows: str, dtype, ctype: str, sync, index_row: str,
                  value: str | None = None) -> list[str]:
    """The C++ of one element scatter along dim 0 over the tile's `count` rows (`s.srcs`: rows, index, src, V, 1);
    `index_row`: a UB row of the index's dtype each index row is copied into (MTE2), so the scalar unit reads UB,
    not GM; `value`: scatter's scalar value= (its C++ expression) in place of a source tensor."""
    rows, idx_gm = s.srcs[0], gm_name(tensor_name(s.srcs[1]))
    value = f"{gm_name(tensor_name(s.srcs[2]))}.GetValue(at)" if value is None else f"static_cast<{ctype}>({value})"
    if s.api == "RowScatterAdd":
        value = (f"static_cast<{ctype}>(static_cast<float>({s.dst}.GetValue(to)) + static_cast<float>({value}))"
                 if dtype.is_float else f"{s.dst}.GetValue(to) + {value}")
    return [f"DataCopy({s.dst}, {rows}, static_cast<uint32_t>(count * rowPitch_));  // the tile's rows, then the scattered elements",
            *sync("V_S", "the scalar unit writes the copy"),
            "{",
            "    const int64_t first = static_cast<int64_t>(rowStart_ + tileRow_);  // the tile's first global row",
            f"    const int64_t rowsV = static_cast<int64_t>({v_rows});",
            *sync("V_MTE2", "the index row's UB is free (a vector op may have used it)", indent="    "),
            f"    for (int64_t k = 0; k < {idx_gm}Rows_; ++k) {{  // source rows in order: repeats are deterministic",
            f"        CopyGmToUb({index_row}, {idx_gm}[static_cast<uint64_t>(k) * rowLen_], static_cast<uint32_t>(rowLen_));",
            *sync("MTE2_S", "the scalar unit reads the index row", indent="        "),
            "        for (int64_t j = 0; j < static_cast<int64_t>(rowLen_); ++j) {",
            "            const uint64_t at = static_cast<uint64_t>(k * static_cast<int64_t>(rowLen_) + j);",
            f"            const int64_t row = static_cast<int64_t>({index_row}.GetValue(static_cast<uint32_t>(j)));",
            "            if (row < 0 || row >= rowsV) { Trap(); }  // a row number outside the destination: stop",
            "            if (row >= first && row < first + static_cast<int64_t>(count)) {",
            "                const uint32_t to = static_cast<uint32_t>(row - first) * static_cast<uint32_t>(rowPitch_) + "
            "static_cast<uint32_t>(j);",
            f"                {s.dst}.SetValue(to, {value});",
            "            }", "        }",
            *sync("S_MTE2", "the index row is read before the next one lands", indent="        "),
            "    }", "}",
            *sync("S_V", "the vector unit reads the scattered rows")]
