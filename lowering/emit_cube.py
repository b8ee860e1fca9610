"""Emit a MIX kernel (1 AIC : 2 AIV) for a lowered cube loop (ascendc.md §3).

Each vector core (AIV) owns output blocks of singleCoreM x singleCoreN (the host tiling code picks
them from the runtime shapes and fills a TCubeTiling); for each block it points the Matmul object at
the operands (SetTail / SetTensorA / SetTensorB / SetBias), then either lets the cube write the block
to GM (IterateAll, when there is no epilogue) or fetches it base block by base block into a VECIN
queue (Iterate + GetTensorC) and runs the epilogue, a row tile of `rows` x `D_` elements at UB pitch
baseN, through the same stage writer as the vector kernels. Templates: mix_kernel.cpp.jinja,
mix_tiling.h.jinja. Im2col convolution would add another producer of the A operand here.
"""

from __future__ import annotations

import json

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import DType

from . import launch_scalars
from .context import PassContext
from .emit import (
    GENERATOR,
    EmittedProject,
    _buffer_views,
    _copy,
    _host_bytes,
    _loc,
    _RowStageWriter,
    camel,
    compute_frame,
    render,
    write_stages,
)
from .emit_host import host_files
from .passes.plan_cube import DB_L0AB, DB_L0C, DEPTH_L1, FRACTAL, STEP_K

MIX_RATIO = 2  # AIV per AIC (ascendc.md §5.2)


class _CubeStageWriter(_RowStageWriter):
    """Row-tile writer whose rows are those of one base block: GM rows are N_ apart, UB rows Dp_ apart."""

    def __init__(self, ctx, buffers, tensors, acc: str, stride: str):
        super().__init__(ctx, buffers, tensors)
        self.acc = acc
        self.stride = stride

    def copy_in(self, s: ir.CopyIn) -> None:
        if s.tensor != self.acc:
            return super().copy_in(s)
        q, c = self.buffers[s.buffer]["member"], self.ctype(s.buffer)
        self.mark(s.span)
        self.lines += [f"LocalTensor<{c}> {s.buffer} = {q}.AllocTensor<{c}>();",
                       f"mm.template GetTensorC<true>({s.buffer}, false, true);  // L0C -> UB, row i at i * baseN",
                       f"{q}.EnQue({s.buffer});"]

    def copy_call(self, way: str, buf: str, gm: str) -> str:
        return _copy(way, "Block", buf, f"{gm}[offset]", f"count, D_, Dp_, {self.stride}")


def build_view(kernel: ir.Kernel, ctx: PassContext) -> dict:
    loop = ir.cube_loop(kernel)
    others = [s for s in kernel.body if s is not loop and not (isinstance(s, ir.ScalarAssign) and s.launch)]
    if others:
        raise DslError.at("UNSUPPORTED", "a matmul kernel has its cube split loop only (and scalars computed from "
                          "scalar parameters, shape symbols and constants)", others[0].span,
                          "write the other work as a second kernel")
    plan = loop.plan
    mm, tl = loop.matmul, loop.epilogue
    name = kernel.name
    params = {p.name: p for p in kernel.tensors}
    outputs = {p.name for p in kernel.outputs}
    tensors = [{"name": p.name, "gm": f"{p.name}Gm", "ctype": p.dtype.ctype,
                "host_ctype": p.dtype.ctype if p.dtype not in (DType.F16, DType.BF16) else "uint16_t",
                "role": "output" if p.name in outputs else "input",
                "numel_host": " * ".join(str(d) for d in p.shape), "numel": " * ".join(f"{d}_" if isinstance(d, str)
                                                                                      else str(d) for d in p.shape)}
               for p in kernel.tensors]
    tensor_map = {t["name"]: t for t in tensors}
    scalars = [{"name": p.name, "member": f"{p.name}_", "ctype": p.dtype.ctype} for p in kernel.scalars]
    symbols = list(kernel.symbols)
    in_ctype = params[mm.a].dtype.ctype
    out_ctype = next(params[s.tensor].dtype.ctype for s in ir.walk(tl.body) if isinstance(s, (ir.Store, ir.CopyOut)))
    batch = f"{loop.batch}_ * " if loop.batch else ""

    def batch_offset(p: ir.TensorParam) -> str:
        """`bi * <matrix size> + ` for an operand with a batch dimension, else nothing (shared by the batch)."""
        return f"bi * {' * '.join(f'{d}_' for d in p.shape[1:])} + " if loop.batch and len(p.shape) == 3 else ""

    buffers = [] if plan.direct else _buffer_views(tl)
    by_name = {b["name"]: b for b in buffers}
    stages: dict[ir.StageKind, list[str]] = {k: [] for k in ir.StageKind}
    if not plan.direct:
        stages = write_stages(tl, lambda: _CubeStageWriter(ctx, by_name, tensor_map, mm.name, f"{loop.n}_"))
    head, tail = compute_frame(buffers)
    out_tensor = next(s.tensor for s in ir.walk(tl.body) if isinstance(s, (ir.Store, ir.CopyOut)))
    esize = params[mm.a].dtype.size
    t = ctx.target
    view = {
        "name": name, "entry": f"{name}_custom", "cls": f"Kernel{camel(name)}", "source": ctx.source_name,
        "target": t.name, "soc_version": t.soc_version, "mix": True,
        "workspace": False,  # no accumulator slots: the Matmul API's own workspace is allocated for MIX
        "tiling_type": f"{camel(name)}TilingData", "tiling_fn": f"{camel(name)}ComputeTiling",
        "tensors": tensors, "scalars": scalars, "symbols": symbols, "buffers": buffers,
        "copyin": stages[ir.StageKind.COPYIN], "compute": head + stages[ir.StageKind.COMPUTE] + tail,
        "copyout": stages[ir.StageKind.COPYOUT],
        "split_loc": _loc(ctx, loop.span), "matmul_loc": _loc(ctx, mm.span), "vector_loc": _loc(ctx, tl.span),
        "in_ctype": in_ctype, "out_ctype": out_ctype, "c_pos": "GM" if plan.direct else "VECIN",
        "c_ctype": "float", "a": mm.a, "b": mm.b, "bias": mm.bias, "out": out_tensor,
        "trans_a": "true" if mm.transpose_a else "false", "trans_b": "true" if mm.transpose_b else "false",
        "M": loop.m, "N": loop.n, "K": loop.k, "batch_expr": batch, "batch_host": loop.batch or "1",
        "a_batch": batch_offset(params[mm.a]), "b_batch": batch_offset(params[mm.b]),
        "c_batch": f"bi * {loop.m}_ * {loop.n}_ + " if loop.batch else "",
        "direct": plan.direct, "whole_rows": plan.whole_rows,
        "base_m": plan.base_m, "base_n": plan.base_n, "base_k": plan.base_k, "esize": esize,
        "fractal": FRACTAL, "step_k": STEP_K, "depth_l1": DEPTH_L1, "db_l0ab": DB_L0AB, "db_l0c": DB_L0C,
        "l0a": t.l0a_bytes, "l0b": t.l0b_bytes, "l0c": t.l0c_bytes, "l1": t.l1_bytes, "ub_budget": t.ub_budget,
        "has_bias": mm.bias is not None, "mix_ratio": MIX_RATIO, "workspace_bytes": "16 * 1024 * 1024",
        "ub_formula": " + ".join(f"{b.num} * {_host_bytes(b)}" for b in tl.buffers_decl) or "0",
        "launch_scalars": launch_scalars.view(kernel, ctx.source_name),
    }
    return view


def emit(kernel: ir.Kernel, ctx: PassContext) -> EmittedProject:
    view = build_view(kernel, ctx)
    name = kernel.name
    loop = ir.cube_loop(kernel)
    plan = loop.plan
    manifest = {
        "generator": GENERATOR, "kernel": name, "source": ctx.source_name, "target": ctx.target.name,
        "entry": view["entry"], "kernel_type": "MIX_AIC_1_2", "tiling_type": view["tiling_type"],
        "tiling_fn": view["tiling_fn"], "symbols": view["symbols"],
        "tensors": [{"name": p.name, "dtype": p.dtype.value, "shape": list(p.shape),
                     "role": "output" if p in kernel.outputs else "input"} for p in kernel.tensors],
        "scalars": [{"name": p.name, "dtype": p.dtype.value, "default": p.default} for p in kernel.scalars],
        "max_tile": None, "tile_unit": "base blocks",
        "base_block": [plan.base_m, "N" if plan.whole_rows else plan.base_n, plan.base_k],
        "epilogue": "none (IterateAll)" if plan.direct else "vector (Iterate + GetTensorC)",
        "buffers": [{"name": b.name, "position": b.position.value, "dtype": b.dtype.value, "num": b.num}
                    for b in ([] if plan.direct else loop.epilogue.buffers_decl)],
    }
    files = {
        f"{name}_kernel.cpp": render("mix_kernel.cpp.jinja", **view),
        f"{name}_tiling.h": render("mix_tiling.h.jinja", **view),
        **host_files(view, ctx.target),
        "manifest.json": json.dumps(manifest, indent=2) + "\n",
    }
    return EmittedProject(name, files, manifest)
