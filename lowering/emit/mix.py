"""Kind MIX: a MIX kernel (1 AIC : 2 AIV) for a lowered cube loop (ascendc.md §3; mix_*.jinja).

Each vector core (AIV) owns output blocks of singleCoreM x singleCoreN (the host tiling code picks
them from the runtime shapes and fills a TCubeTiling); for each block it points the Matmul object at
the operands (SetTail / SetTensorA / SetTensorB / SetBias), then either lets the cube write the block
to GM (IterateAll, when there is no epilogue) or fetches it base block by base block into a VECIN
queue (Iterate + GetTensorC) and runs the epilogue, a row tile of `rows` x `rowLen_` elements at UB pitch
baseN, through the same stage writer as the vector kernels. With epilogue bands (passes/epilogue_bands.py) the
block goes to the AIV's GM slot instead (GetTensorC to GM, sequential) and the epilogue runs on bands of its rows,
each copied in from the slot like an input. Templates: mix_kernel.cpp.jinja,
mix_tiling.h.jinja.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir

from ..context import PassContext
from ..passes.epilogue_bands import SPLIT_K_RESERVE_ROWS
from ..passes.plan_cube import DB_L0AB, DB_L0C, DEFAULT_BASE, DEPTH_L1, FRACTAL, STEP_K, WIDE_BASE_M
from .shared import (
    KernelView,
    LaunchCheck,
    RowStageWriter,
    buffer_views,
    compute_frame,
    copy_call,
    host_bytes,
    kernel_fields,
    loc,
    manifest,
    write_stages,
)

MIX_RATIO = 2  # AIV per AIC (ascendc.md §5.2)


def narrow_base_m(mm: ir.Matmul, plan: ir.CubePlan) -> int:
    """The baseM the host falls back to when the output has fewer blocks than cores: plan_cube's wide 256 rows
    (chosen for GM -> L1 bytes per MAC) would halve the cores a small GEMM or a matrix-vector product uses."""
    return DEFAULT_BASE[0] if mm.base[0] is None and plan.base_m == WIDE_BASE_M else plan.base_m


class _CubeStageWriter(RowStageWriter):
    """Row-tile writer whose rows are those of one base block: GM rows are N_ apart, UB rows rowPitch_ apart."""

    def __init__(self, ctx, buffers, tensors, acc: str, stride: str, adjust: dict[str, str], split_k: bool,
                 bands: bool = False):
        super().__init__(ctx, buffers, tensors)
        self.acc = acc
        self.stride = stride
        self.adjust = adjust  # GlobalTensor member -> change of `offset` for tensors whose batch dims are shared
        self.split_k = split_k
        self.bands = bands  # the block waits in this AIV's GM slot; the accumulator is a band of its rows

    def copy_in(self, s: ir.CopyIn) -> None:
        if s.tensor != self.acc:
            return super().copy_in(s)
        q, c = self.buffers[s.buffer].member, self.ctype(s.buffer)
        self.mark(s.span)
        fetch = f"mm.template GetTensorC<true>({s.buffer}, false, true);  // L0C -> UB, row i at i * baseN"
        if self.bands:  # passes/epilogue_bands.py: rows bandOff_ / baseN on of the block in the slot (pitch baseN)
            fetch = f"CopyBlockGmToUb({s.buffer}, slotGm_[bandOff_], count, rowLen_, rowPitch_, rowPitch_);  // a band of the block"
        if self.split_k:  # after SyncAll the accumulator is the sum of the K slices' partials (plan_split_k)
            fetch = ["if (splitK_ > 1) {",
                     f"    ReduceSlices({s.buffer}, offset, count);  // split-K: slices 0..S-1 added in order",
                     "} else {", f"    {fetch}", "}"]
        self.lines += [f"LocalTensor<{c}> {s.buffer} = {q}.AllocTensor<{c}>();",
                       *([fetch] if isinstance(fetch, str) else fetch), f"{q}.EnQue({s.buffer});"]

    def copy_call(self, way: str, buf: str, gm: str) -> str:
        if self.layout(buf) is ir.Layout.ROW:  # a [N] row: the block's rowLen_ columns, from its first column on
            return copy_call(way, "Block", buf, f"{gm}[offset % {self.stride}]", f"1, rowLen_, rowPitch_, {self.stride}")
        if self.layout(buf) is ir.Layout.COL:  # one value per row: `count` values from the block's first row on
            pitch = f"(count * sizeof({self.ctype(buf)}) + 31) / 32 * 32 / sizeof({self.ctype(buf)})"
            return copy_call(way, "Block", buf, f"{gm}[offset / {self.stride}]", f"1, count, {pitch}, count")
        return copy_call(way, "Block", buf, f"{gm}[offset{self.adjust.get(gm, '')}]", f"count, rowLen_, rowPitch_, {self.stride}")


@dataclass(frozen=True, kw_only=True)
class MixView(KernelView):
    copyin: tuple[str, ...]
    compute: tuple[str, ...]
    copyout: tuple[str, ...]
    split_loc: str
    matmul_loc: str
    vector_loc: str
    in_ctype: str
    c_pos: str  # where the cube writes the accumulator: GM (no epilogue) or VECIN
    c_ctype: str
    a: str
    b: str
    bias: str | None
    has_bias: bool
    out: str
    trans_a: str
    trans_b: str
    M: str
    N: str
    K: str
    batch_expr: str
    batch_host: str
    a_batch: str
    b_batch: str
    c_batch: str
    direct: bool
    whole_rows: bool
    base_m: int
    base_n: int
    narrow_m: int  # baseM when base_m's blocks would leave cores idle (plan_cube.WIDE_BASE_M chosen: 128)
    base_k: int
    esize: int
    fractal: int
    step_k: int
    depth_l1: int
    db_l0ab: int
    db_l0c: int
    l0a: int
    l0b: int
    l0c: int
    l1: int
    ub_budget: int
    mix_ratio: int
    workspace_bytes: str  # the Matmul API's system workspace
    ub_formula: str
    batch_member: bool = False  # the epilogue reads the batch index (bi_): a tensor with shared batch dims
    stage: bool = False  # rendered as a stage class of a multi-stage kernel (emit/chain.py): no includes, no entry
    split_k_min: int  # shortest K slice (plan_split_k); 0 with split_k False
    band_rows: int = 0  # epilogue bands (passes/epilogue_bands.py): rows per band at the widest block; 0 = none
    band_reserve: int = SPLIT_K_RESERVE_ROWS  # fp32 rows of UB a band leaves for split-K's partial rows


def build_view(kernel: ir.Kernel, ctx: PassContext) -> MixView:
    loop = ir.cube_loop(kernel)
    plan = loop.plan
    mm, tl = loop.matmul, loop.epilogue
    params = {p.name: p for p in kernel.tensors}
    fields = kernel_fields(kernel, ctx)
    tensors = {t.name: t for t in fields["tensors"]}
    batch = "".join(f"{d}_ * " for d in loop.batch)

    def batch_offset(p: ir.TensorParam) -> str:
        """`<operand batch index> * <matrix size> + ` for an operand with batch dims, else nothing."""
        return operand_offset(p.shape, loop.batch)

    buffers = () if plan.direct else buffer_views(tl)
    per_row = (*loop.batch, loop.m)  # a tensor of one value per row ([Bt, M], [B, H, M]), whatever the batch dims
    adjust: dict[str, str] = {}
    by_name = {b.name: b for b in buffers}
    stages: dict[ir.StageKind, list[str]] = {k: [] for k in ir.StageKind}
    split_k = plan.split_k_min > 0
    # the band slots live in the split-K workspace region (plan_cube only bands when split-K is allowed)
    assert split_k or not plan.band_rows, "epilogue bands need the split-K workspace region"
    if not plan.direct:
        out_shape = (*loop.batch, loop.m, loop.n)
        for p in kernel.tensors:  # epilogue tensors with shared or grouped batch dims (a causal mask [1, 1, M, N])
            if loop.batch and p.name not in (mm.a, mm.b, mm.bias) and len(p.shape) >= 2 and tuple(p.shape) not in (
                    out_shape, per_row):
                rel = operand_offset(p.shape, loop.batch, "bi_").removesuffix(" + ")
                adjust[f"{p.name}Gm"] = (f" - bi_ * {loop.m}_ * {loop.n}_"
                                         + (f" + {rel}" if rel else ""))
        stages = write_stages(tl, lambda: _CubeStageWriter(ctx, by_name, tensors, mm.name, f"{loop.n}_", adjust, split_k,
                                                           bool(plan.band_rows)))
    head, tail = compute_frame(buffers)
    out_tensor = next(s.tensor for s in ir.walk(tl.body) if isinstance(s, (ir.Store, ir.CopyOut)))
    t = ctx.target
    rows = f" and the Unified Buffer (a base block holds whole rows of {loop.n}: {loop.n} is too long)"
    fields["batch_member"] = bool(adjust)
    fields["launch_checks"] = tuple(c for p in kernel.tensors if len(p.shape) >= 2 and p.name != mm.bias
                                    and tuple(p.shape) != per_row  # one value per row: offset / N (COL layout)
                                    and (c := group_checks(p, loop.batch)) is not None)
    return MixView(
        **fields, buffers=buffers, mix=True,
        # no accumulator slots: the Matmul API's own workspace is allocated for MIX kernels
        tiling_error=f"the host tiling found no cube base block that fits L0A/L0B/L0C/L1{rows if plan.whole_rows else ''}",
        copyin=tuple(stages[ir.StageKind.COPYIN]), compute=(*head, *stages[ir.StageKind.COMPUTE], *tail),
        copyout=tuple(stages[ir.StageKind.COPYOUT]),
        split_loc=loc(ctx, loop.span), matmul_loc=loc(ctx, mm.span), vector_loc=loc(ctx, tl.span),
        in_ctype=params[mm.a].dtype.ctype, c_pos="GM" if plan.direct or plan.band_rows else "VECIN", c_ctype="float", a=mm.a, b=mm.b,
        bias=mm.bias, has_bias=mm.bias is not None, out=out_tensor, trans_a="true" if mm.transpose_a else "false",
        trans_b="true" if mm.transpose_b else "false", M=loop.m, N=loop.n, K=loop.k, batch_expr=batch,
        batch_host=" * ".join(loop.batch) or "1", a_batch=batch_offset(params[mm.a]), b_batch=batch_offset(params[mm.b]),
        c_batch=f"bi * {loop.m}_ * {loop.n}_ + " if loop.batch else "", direct=plan.direct, whole_rows=plan.whole_rows,
        base_m=plan.base_m, base_n=plan.base_n, narrow_m=narrow_base_m(mm, plan), base_k=plan.base_k, esize=params[mm.a].dtype.size, fractal=FRACTAL,
        step_k=STEP_K, depth_l1=DEPTH_L1, db_l0ab=DB_L0AB, db_l0c=DB_L0C, l0a=t.l0a_bytes, l0b=t.l0b_bytes,
        l0c=t.l0c_bytes, l1=t.l1_bytes, ub_budget=t.ub_budget, mix_ratio=MIX_RATIO,
        workspace_bytes="16 * 1024 * 1024", split_k=split_k, split_k_min=plan.split_k_min, band_rows=plan.band_rows,
        ub_formula=" + ".join(f"{b.num} * {host_bytes(b)}" for b in tl.buffers_decl) or "0")


def operand_offset(shape: tuple, batch: tuple[str, ...], bi: str = "bi") -> str:
    """`<index> * <matrix elements> + ` for an operand whose dims before its matrix line up with the batch dims
    from the right (parser_cube._batch_dims): the launch's batch index `bi` (row-major over the batch dims)
    gives each of them an index: the batch dim's own, 0 for a dim of 1, or index // (batch dim / dim) for a
    grouped dim (grouped-query attention's key/value heads)."""
    lead = shape[:-2]
    if not batch or not lead:
        return ""
    off = len(batch) - len(lead)
    terms = []
    for j, d in enumerate(lead):
        bj = batch[off + j]
        inner = " * ".join(f"{x}_" for x in batch[off + j + 1:])
        idx = (bi if off + j == 0 else f"{bi} % {bj}_") if not inner else (
            f"{bi} / ({inner})" if off + j == 0 else f"{bi} / ({inner}) % {bj}_")
        if d == 1:
            continue
        if d != bj:
            idx = f"({idx}) / ({bj}_ / {d}_)"
        elif " " in idx:
            idx = f"({idx})"
        stride = " * ".join(f"{x}_" if isinstance(x, str) else str(x) for x in shape[j + 1:])
        terms.append(f"{idx} * {stride}")
    return "".join(f"{t} + " for t in terms)


def group_checks(p: ir.TensorParam, batch: tuple[str, ...]) -> LaunchCheck | None:
    """The host's check that an operand's grouped batch dims divide the split's (H % Hkv == 0)."""
    lead = p.shape[:-2]
    pairs = [(batch[len(batch) - len(lead) + j], d) for j, d in enumerate(lead)
             if d != 1 and d != batch[len(batch) - len(lead) + j]]
    if not pairs:
        return None
    cond = " && ".join(f"{d} != 0 && {bj} % {d} == 0" for bj, d in pairs)
    what = ", ".join(f"{bj} % {d}" for bj, d in pairs)
    return LaunchCheck(cond, f"error[SHAPE]: {p.name}: each grouped batch dim must divide the split's ({what} != 0)")


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: MixView) -> dict:
    plan = ir.cube_loop(kernel).plan
    return manifest(kernel, ctx, view, "MIX_AIC_1_2", None, "base blocks", tuple(b.buffer for b in view.buffers),
                    base_block=[plan.base_m, "N" if plan.whole_rows else plan.base_n, plan.base_k],
                    epilogue="none (IterateAll)" if plan.direct else (
                        f"vector on bands of {plan.band_rows} rows (Iterate + GetTensorC to a GM slot)" if plan.band_rows
                        else "vector (Iterate + GetTensorC)"),
                    split_k=f"allowed (K slices >= {plan.split_k_min}; the host picks the count)" if plan.split_k_min
                    else "no")
