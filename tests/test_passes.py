"""Lowering passes, one before/after group per pass, written in DSL text."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
import torch

import ascend_dsl
import lowering
from ascend_dsl import DslError, interpreter, ir
from ascend_dsl.dtypes import DType
from lowering.passes import (
    allocate_buffers,
    check_constraints,
    legalize,
    plan_stages,
    plan_tiling,
    route_conv5hd,
    schedule_stages,
    three_address,
)
from lowering.passes.check_windows import pool_ops
from lowering.pipeline import PASS_NAMES, PIPELINE, run_pipeline

ROOT = Path(__file__).resolve().parents[1]
GALLERY = sorted((ROOT / "examples").rglob("*.adsl"))

EXPECTED_PASSES = ("partition_launches", "route_conv5hd", "plan_stages", "plan_flash", "check_constraints", "legalize", "three_address", "hoist_scalars", "select_kind",
                   "plan_chunks", "allocate_buffers", "hoist_row_vectors", "plan_tiling", "plan_row_groups", "plan_cube", "plan_split_k", "plan_conv",
                   "plan_windows",
                   "select_instructions", "plan_gather_middle", "plan_scatter_shared", "plan_gather_rows", "plan_row_value_blocks",
                   "plan_period_cache", "plan_box", "schedule_stages", "plan_flat_folds", "emit")
PRIMITIVE_OPS = {"add", "sub", "mul", "div", "max", "min", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal",
                 "relu", "lt", "le", "gt", "ge", "eq", "ne", "select", "cast"}


def _src(*body: str, dt: str = "f32", out: str | None = None, extra: str = "") -> str:
    return f'''@kernel
def k(x: Tensor[{dt}, "N"], y: Tensor[{out or dt}, "N"], alpha: f32 = 0.5{extra}):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
''' + "".join(f"            {line}\n" for line in body)


def _kernel(text: str, file: str = "passes.adsl", **dtypes) -> ir.Kernel:
    return ascend_dsl.parse_text(text, file=file)[0].instantiate(dtypes)


def _ctx(target: str = "ascend910b1") -> lowering.PassContext:
    return lowering.PassContext(lowering.get_target(target))


def _until(k: ir.Kernel, last: str, target: str = "ascend910b1") -> ir.Kernel:
    ctx = _ctx(target)
    for p in PIPELINE:
        k = p.run(k, ctx)
        if p.name == last:
            return k
    raise AssertionError(last)


def _tile(k: ir.Kernel) -> ir.TileLoop:
    return next(s for s in ir.walk(k.body) if isinstance(s, ir.TileLoop))


def _tile_ops(k: ir.Kernel) -> list[ir.Op]:
    return [e for s in ir.walk(k.body) if isinstance(s, (ir.Assign, ir.Store)) for e in ir.walk_expr(s.value)
            if isinstance(e, ir.Op) and e.type.kind is ir.Kind.TILE]


def _assigns(k: ir.Kernel) -> list[ir.Assign]:
    return [s for s in _tile(k).body if isinstance(s, ir.Assign)]


def _stores(k: ir.Kernel) -> list[ir.Store]:
    return [s for s in _tile(k).body if isinstance(s, ir.Store)]


def _vecops(text: str, **dtypes) -> list[ir.VecOp]:
    return [s for s in _tile(_until(_kernel(text, **dtypes), "select_instructions")).body
            if isinstance(s, ir.VecOp)]


def _interp(k: ir.Kernel, x: torch.Tensor, scalars=None) -> torch.Tensor:
    y = torch.empty(x.shape, dtype=k.param("y").dtype.torch)
    interpreter.run(k, {"x": x, "y": y}, scalars, num_cores=2, tile=256)
    return y


def _run_any(k: ir.Kernel, seed: int = 0) -> list[torch.Tensor]:
    """Interpret any kernel on seeded random inputs (symbols: N=777, rows B=7, row length D=33, C=8
    channels so group_norm's default 8 groups divide them)."""
    g = torch.Generator().manual_seed(seed)
    sizes = {"N": 777, "B": 7, "D": 33, "C": 8}
    pools = pool_ops(k)
    if pools:  # pooled output dims follow from the window (defaults of the scalar parameters)
        kk, st, pad, dil = (int(a.value) if isinstance(a, ir.Const) else int(k.param(a.name).default)
                            for a in pools[0].args[1:])
        # the pooled planes: the tensor over the plane loop's split that is not stored (a workspace one after a conv)
        plane = next(s for s in k.body if isinstance(s, ir.SplitLoop) and s.body[0].kind is ir.LoopKind.PLANES)
        extent = plane.extent
        read = {e.tensor for st in ir.walk(plane.body) if isinstance(st, (ir.Assign, ir.Store))
                for e in ir.walk_expr(st.value) if isinstance(e, ir.Load)}  # several workspaces: the one it pools
        (src,) = [p for p in k.tensors if len(p.shape) >= 3 and p not in k.outputs
                  and tuple(p.shape[:len(extent)]) == extent and p.name in read]
        stored = {st.tensor for st in ir.walk(plane.body) if isinstance(st, ir.Store)}
        for out in (p for p in k.tensors if p.name in stored):  # the pooled planes (an output or a workspace)
            for din, dout in zip(src.shape[2:], out.shape[2:], strict=True):
                sizes.setdefault(din, 12)  # spatial inputs large enough for dilated windows
                sizes[dout] = (sizes[din] + 2 * pad - dil * (kk - 1) - 1) // st + 1
    for view in k.views:  # a view's divisions must be exact: its dividend symbol a multiple of the divisor
        for d in view.view.defs:
            den = 1
            for f in d.den:
                den *= f if isinstance(f, int) else sizes.get(f) or int(k.param(f).default)
            symbols = [f for f in d.num if isinstance(f, str) and f not in {p.name for p in k.scalars}]
            if den > 1 and len(symbols) == 1:
                sizes[symbols[0]] = den * max(1, sizes.get(symbols[0], 5) // den)
    conv = ir.conv_loop(k)
    if conv is not None:  # conv output dims follow from the input, kernel, stride, padding and dilation
        c, dims = conv.conv, [k.param(n).shape[2:] for n in (conv.conv.x, conv.conv.w, conv.out)]
        if c.transposed:  # w is [C, K / groups, ...]; the output's channel symbol is K = KG * groups
            groups = sizes[c.groups] if isinstance(c.groups, str) else c.groups
            kg, ko = k.param(c.w).shape[1], k.param(conv.out).shape[1]
            sizes.update({d: v for d, v in ((kg, 2), (ko, 2 * groups)) if isinstance(d, str) and d != "C"})
        elif c.groups != 1:  # groups split the channels: C = CG * groups, K a multiple of groups
            groups = sizes[c.groups] if isinstance(c.groups, str) else c.groups
            kk_, cg = k.param(c.w).shape[:2]
            sizes.update({d: v for d, v in ((cg, sizes["C"] // groups), (kk_, 2 * groups)) if isinstance(d, str)
                          and d != "C"})
        for i, (din, dk, dout) in enumerate(zip(*dims, strict=True)):
            sizes.setdefault(din, 12)  # spatial inputs large enough for dilated 3x3 kernels
            sizes.setdefault(dk, 3)
            size_in, size_k = (sizes[d] if isinstance(d, str) else d for d in (din, dk))
            sizes[dout] = ((size_in - 1) * c.stride[i] - 2 * c.padding[i] + c.dilation[i] * (size_k - 1)
                           + c.output_padding[i] + 1) if c.transposed else \
                (size_in + 2 * c.padding[i] - c.dilation[i] * (size_k - 1) - 1) // c.stride[i] + 1
    tensors = {}
    for p in (p for p in k.tensors if not p.workspace and p.view is None):  # the kernel's own GM: the interpreter's
        shape = [sizes.get(d, 5) if isinstance(d, str) else d for d in p.shape]
        if p.dtype.is_float:
            tensors[p.name] = (torch.randn(shape, generator=g) * 4).to(p.dtype.torch)
        else:  # integers index rows (gather): keep them inside the smallest row length
            tensors[p.name] = torch.randint(0, 5, shape, generator=g).to(p.dtype.torch)
    interpreter.run(k, tensors, None, num_cores=2, tile=256)
    return [tensors[p.name] for p in k.outputs]


def _gallery_kernels():
    for path in GALLERY:
        for src in ascend_dsl.load_file(path):
            for variant in src.dtype_variants:
                tag = "-".join(str(v) for v in variant.values())
                yield pytest.param(src.instantiate(variant), id=f"{path.stem}-{tag}")


GALLERY_KERNELS = list(_gallery_kernels())


# ----------------------------------------------------------------------------- pipeline


def test_pass_names():
    assert lowering.PASS_NAMES == EXPECTED_PASSES
    assert tuple(p.name for p in PIPELINE) == EXPECTED_PASSES
    # one pass per module: lowering/passes/<name>.py holds the pass's run()
    assert all(p.run is importlib.import_module(f"lowering.passes.{p.name}").run for p in PIPELINE)


def test_pipeline_records_timings_and_dumps():
    k = _kernel(_src("store(y[t], sigmoid(xt))"))
    ctx = _ctx()
    lowering.run_pipeline(k, ctx, frozenset({"all"}))
    assert tuple(ctx.timings) == EXPECTED_PASSES
    assert tuple(ctx.dumps) == EXPECTED_PASSES
    assert "with copyin:" in ctx.dumps["schedule_stages"]
    with pytest.raises(DslError) as ei:
        lowering.run_pipeline(k, _ctx(), frozenset({"no_such_pass"}))
    assert ei.value.codes == ["ARGS"]


SPAN_CASES = [
    _src("m = 0.0 < xt", "a = select(m, 1.0, xt)", "b = select(xt > 1.0, xt, 2.0) + 2.0 / a - abs(-xt)",
         "store(y[t], b * alpha)"),
    _src("store(y[t], xt)"),
    _src("store(y[t], erf(xt) + tanh(xt))", dt="f16"),
    _src("store(y[t], cast(xt, f16) * 2.0)", out="f16"),
]


@pytest.mark.parametrize("text", SPAN_CASES, ids=["select", "copy", "f16-erf-tanh", "cast"])
def test_every_statement_keeps_a_source_span_after_every_pass(text):
    k = _kernel(text, file="spans.adsl")
    first, last = _tile(k).span.line, len(text.splitlines())
    ctx = _ctx()
    for p in PIPELINE:
        k = p.run(k, ctx)
        for s in ir.walk(k.body):
            assert s.span.file == "spans.adsl", (p.name, s)
            assert s.span.line > 0 and s.span.col > 0, (p.name, s)
            if not isinstance(s, (ir.SplitLoop, ir.TileLoop)):
                assert first <= s.span.line <= last, (p.name, s)
        for b in _tile(k).buffers_decl:
            assert b.span.line > 0, (p.name, b)


@pytest.mark.parametrize("k", GALLERY_KERNELS)
def test_every_statement_keeps_a_span_gallery(k):
    ctx = _ctx()
    if plan_stages.is_chain(k) or route_conv5hd.fits(k):  # several stages or launches: each through the pipeline
        k = run_pipeline(k, ctx)
        assert all(s.span.line > 0 for s in ir.walk(k.body))  # walk descends into every stage
        return
    for p in PIPELINE:
        k = p.run(k, ctx)
        assert all(s.span.line > 0 for s in ir.walk(k.body)), p.name


# ----------------------------------------------------------------------------- check_constraints


def test_check_constraints_is_identity_on_valid_kernels():
    k = _kernel(_src("store(y[t], tanh(xt))"))
    assert check_constraints.run(k, _ctx()) is k


# ----------------------------------------------------------------------------- legalize


LEGALIZE_TEXT = _src("a = tanh(xt) + sigmoid(xt)", "store(y[t], erf(a) - xt * -xt + -alpha * xt)")


def test_legalize_removes_composite_ops():
    before = _kernel(LEGALIZE_TEXT)
    assert {"tanh", "sigmoid", "erf", "neg"} <= {o.op for o in _tile_ops(before)}
    after = legalize.run(before, _ctx())
    ops = {o.op for o in _tile_ops(after)}
    assert ops <= PRIMITIVE_OPS, ops - PRIMITIVE_OPS
    assert not ops & {"tanh", "sigmoid", "erf", "neg"}
    assert {"exp", "reciprocal", "select", "lt", "abs"} <= ops
    # types are kept: every rewritten op still yields an f32 tile (or a mask for the comparison)
    assert {o.type for o in _tile_ops(after)} <= {ir.tile_of(DType.F32), ir.tile_of(DType.BOOL)}


def test_legalize_neg_becomes_multiply_by_minus_one():
    after = legalize.run(_kernel(_src("store(y[t], -xt)")), _ctx())
    (st,) = _stores(after)
    assert st.value.op == "mul"
    assert st.value.args[0] == ir.Ref("xt", ir.tile_of(DType.F32))
    assert st.value.args[1] == ir.Const(-1.0, ir.scalar_of(DType.F32))


def test_legalize_leaves_primitive_kernels_alone():
    k = _kernel(_src("store(y[t], max(xt * alpha, exp(xt)) / (1.0 + abs(xt)))"))
    assert legalize.run(k, _ctx()) == k


@pytest.mark.parametrize("expr,ref", [
    ("tanh(xt)", torch.tanh), ("sigmoid(xt)", torch.sigmoid), ("erf(xt)", torch.erf), ("-xt", torch.neg),
])
def test_legalized_ops_match_torch(expr, ref):
    k = legalize.run(_kernel(_src(f"store(y[t], {expr})")), _ctx())
    x = torch.cat([torch.linspace(-12, 12, 2001), torch.tensor([0.0, -0.0, 1e-4, -1e-4, 40.0, -40.0])])
    torch.testing.assert_close(_interp(k, x), ref(x), rtol=1e-5, atol=1e-6)


def _GELU(x):
    return torch.nn.functional.gelu(x.double()).float()


@pytest.mark.parametrize("expr,ref", [
    ("0.5 * xt * (1.0 + erf(xt * 0.7071067811865476))", _GELU),
    ("(erf(0.7071067811865476 * xt) + 1.0) * (xt * 0.5)", _GELU),
    ("xt * (1.0 + erf(xt * 2.0))", lambda x: (x.double() * (1 + torch.erf(2 * x.double()))).float()),
    ("3.0 * xt * (1.0 + erf(xt))", lambda x: (3 * x.double() * (1 + torch.erf(x.double()))).float()),
])
def test_legalize_gelu_form_matches_torch_without_a_select(expr, ref):
    k = legalize.run(_kernel(_src(f"store(y[t], {expr})")), _ctx())
    ops = {o.op for o in _tile_ops(k)}
    assert "erf" not in ops and "select" not in ops and "relu" in ops
    x = torch.cat([torch.linspace(-12, 12, 2001), torch.tensor([0.0, -0.0, 1e-4, -1e-4, 40.0, -40.0, float("inf")])])
    torch.testing.assert_close(_interp(k, x), ref(x), rtol=1e-5, atol=1e-6)


def test_legalize_gelu_form_needs_the_same_operand_and_a_positive_scale():
    for expr in ("0.5 * xt * (1.0 + erf(xt * -0.7))", "0.5 * (xt + 1.0) * (1.0 + erf(xt))"):
        k = legalize.run(_kernel(_src(f"store(y[t], {expr})")), _ctx())
        assert "select" in {o.op for o in _tile_ops(k)}  # the generic erf expansion


# ----------------------------------------------------------------------------- three_address


def _three(text: str) -> ir.Kernel:
    return _until(_kernel(text), "three_address")


def _is_flat_operand(e: ir.Expr) -> bool:
    if e.type.kind is ir.Kind.SCALAR:
        return not any(isinstance(x, (ir.Load,)) for x in ir.walk_expr(e))
    return isinstance(e, ir.Ref)


def test_three_address_one_op_per_assignment():
    k = _three(_src("store(y[t], exp(xt * 2.0 + 1.0) / (abs(xt) + alpha) - max(xt, 0.0))"))
    assigns = _assigns(k)
    for a in assigns:
        assert isinstance(a.value, (ir.Load, ir.Op)), a
        if isinstance(a.value, ir.Op):
            assert all(_is_flat_operand(arg) for arg in a.value.args), a
    for s in _stores(k):
        assert isinstance(s.value, ir.Ref)
    names = [a.name for a in assigns]
    assert len(names) == len(set(names))  # SSA
    assert [a.value.op for a in assigns if isinstance(a.value, ir.Op)] == \
        ["mul", "add", "exp", "abs", "add", "div", "max", "sub"]


def test_three_address_cse_computes_exp_once():
    k = _three(_src("a = exp(xt)", "b = exp(xt)", "c = load(x[t])", "store(y[t], a + b * c)"))
    ops = [a.value for a in _assigns(k)]
    assert sum(isinstance(v, ir.Op) and v.op == "exp" for v in ops) == 1
    assert sum(isinstance(v, ir.Load) for v in ops) == 1
    (mul,) = [v for v in ops if isinstance(v, ir.Op) and v.op == "mul"]
    (exp_assign,) = [a for a in _assigns(k) if isinstance(a.value, ir.Op) and a.value.op == "exp"]
    (load_assign,) = [a for a in _assigns(k) if isinstance(a.value, ir.Load)]
    assert [r.name for r in mul.args] == [exp_assign.name, load_assign.name]


def test_three_address_cse_distinguishes_constants_and_dtypes():
    k = _three(_src("store(y[t], exp(xt * 2.0) + exp(xt * 3.0))"))
    assert sum(a.value.op == "exp" for a in _assigns(k) if isinstance(a.value, ir.Op)) == 2


def test_three_address_dce_removes_unused_assignments():
    before = _kernel(_src("unused = log(xt)", "dead = unused * 2.0", "store(y[t], exp(xt))"))
    after = _until(before, "three_address")
    ops = [a.value.op for a in _assigns(after) if isinstance(a.value, ir.Op)]
    assert ops == ["exp"]
    assert not {"unused", "dead"} & {a.name for a in _assigns(after)}


def test_three_address_reassigning_a_name():
    text = _src("r = xt + 1.0", "r = r * 2.0", "s = r", "r = r - xt", "store(y[t], r * s)")
    before = _kernel(text)
    after = three_address.run(legalize.run(before, _ctx()), _ctx())
    names = [a.name for a in _assigns(after)]
    assert len(names) == len(set(names)) and "r" in names
    x = torch.randn(1000)
    torch.testing.assert_close(_interp(after, x), _interp(before, x), rtol=0, atol=0)
    r1 = (x + 1.0) * 2.0
    torch.testing.assert_close(_interp(after, x), (r1 - x) * r1, rtol=0, atol=0)


def test_three_address_keeps_scalar_expressions_inline():
    k = _three(_src("store(y[t], xt * (alpha * 2.0))"))
    (mul,) = [a.value for a in _assigns(k) if isinstance(a.value, ir.Op)]
    assert mul.op == "mul" and mul.args[1].type.kind is ir.Kind.SCALAR and isinstance(mul.args[1], ir.Op)


def test_scalar_local_is_inlined_and_lowers():
    text = _src("a = alpha * 2.0", "store(y[t], xt * a)")
    lowering.lower(_kernel(text))


@pytest.mark.parametrize("k", GALLERY_KERNELS)
def test_three_address_preserves_semantics_gallery(k):
    legal = legalize.run(k, _ctx())
    flat = three_address.run(legal, _ctx())
    torch.testing.assert_close(_run_any(flat), _run_any(legal), rtol=0, atol=0, equal_nan=True)


# ----------------------------------------------------------------------------- allocate_buffers


def _alloc(text: str, **dtypes) -> ir.Kernel:
    return _until(_kernel(text, **dtypes), "allocate_buffers")


def _decls(k: ir.Kernel) -> dict[str, ir.Buffer]:
    return {b.name: b for b in _tile(k).buffers_decl}


def test_allocate_unary_chain_reuses_temporaries():
    k = _alloc(_src("a = exp(xt)", "b = exp(a)", "c = exp(b)", "d = exp(c)", "e = exp(d)",
                    "store(y[t], exp(e))"))
    decls = _decls(k)
    calc = [b for b in decls.values() if b.position is ir.Position.VECCALC]
    assert 1 <= len(calc) <= 2
    assert all(b.num == 1 and b.bits == 32 and b.dtype is DType.F32 for b in calc)
    assert len(_assigns(k)) == 7
    assert {a.name for a in _assigns(k)} <= set(decls)


def test_allocate_positions_and_double_buffering():
    k = _alloc(_src("m = xt > 0.0", "store(y[t], select(m, xt, exp(xt)))", dt="f16"))
    decls = _decls(k)
    assert decls["xLocal"].position is ir.Position.VECIN and decls["xLocal"].num == 2
    assert decls["yLocal"].position is ir.Position.VECOUT and decls["yLocal"].num == 2
    assert decls["xLocal"].bits == decls["yLocal"].bits == 16
    (mask,) = [b for b in decls.values() if b.dtype is DType.BOOL]
    assert (mask.position, mask.bits, mask.num) == (ir.Position.VECCALC, 1, 1)
    single = _until(_kernel(_src("store(y[t], exp(xt))").replace("buffers=2", "buffers=1")), "allocate_buffers")
    assert all(b.num == 1 for b in _tile(single).buffers_decl)


def test_allocate_stored_value_lands_in_vecout():
    k = _alloc(_src("a = exp(xt)", "b = a * 2.0", "store(y[t], b + a)", out=None))
    decls = _decls(k)
    (st,) = _stores(k)
    assert decls[st.value.name].position is ir.Position.VECOUT
    assert st.value.name == "yLocal"
    producer = [a for a in _assigns(k) if a.name == "yLocal"]
    assert len(producer) == 1 and producer[0].value.op == "add"


def test_allocate_store_of_loaded_value_inserts_copy():
    k = _alloc(_src("store(y[t], xt)"))
    decls = _decls(k)
    load, copy = _assigns(k)
    assert isinstance(load.value, ir.Load) and decls[load.name].position is ir.Position.VECIN
    assert decls[copy.name].position is ir.Position.VECOUT
    assert copy.value.op == "copy"  # a UB -> UB DataCopy: bit-exact (x * 1 is not for every value)
    assert copy.value.args == (ir.Ref(load.name, ir.tile_of(DType.F32)),)
    (st,) = _stores(k)
    assert st.value.name == copy.name
    ops = _vecops(_src("store(y[t], xt)"))
    assert [(o.api, o.dst, o.srcs[0]) for o in ops] == [("DataCopy", "yLocal", "xLocal")]


def test_allocate_value_stored_twice_gets_a_copy():
    text = _src("a = exp(xt)", "store(y[t], a)", "store(z[t], a)", extra=', z: Tensor[f32, "N"]')
    k = _alloc(text)
    decls = _decls(k)
    outs = [st.value.name for st in _stores(k)]
    assert len(set(outs)) == 2
    assert all(decls[o].position is ir.Position.VECOUT for o in outs)


def test_allocate_scalar_first_ops_do_not_alias_their_source():
    # `2.0 / a` lowers to Duplicate(dst, 2.0); Div(dst, dst, a): dst must not be a's buffer
    k = _alloc(_src("a = exp(xt)", "b = 2.0 / a", "c = 3.0 - b", "store(y[t], c * xt)"))
    where = {a.value.op: a for a in _assigns(k) if isinstance(a.value, ir.Op)}
    assert where["div"].name != where["div"].value.args[1].name
    # `3.0 - b` lowers to Muls(dst, b, -1); Adds(dst, dst, 3.0): b is read by the first, element-wise, instruction,
    # so its dying buffer is reused (session 34: one tile buffer fewer for hinge_loss's `1.0 - p * t`)
    assert where["sub"].name == where["sub"].value.args[1].name
    # an in-place unary op may reuse its dying source
    k2 = _alloc(_src("a = exp(xt)", "b = abs(a)", "store(y[t], b * xt)"))
    ops = {a.value.op: a for a in _assigns(k2) if isinstance(a.value, ir.Op)}
    assert ops["abs"].name == ops["exp"].name


def test_allocate_frees_dead_temporaries_for_later_reuse():
    # none of the divisions may write into its own source, so the temporaries ping-pong between two buffers
    k = _alloc(_src("a = exp(xt)", "b = 2.0 / a", "c = 2.0 / b", "d = 2.0 / c", "e = 2.0 / d",
                    "store(y[t], e * xt)"))
    calc = [b for b in _decls(k).values() if b.position is ir.Position.VECCALC]
    assert len(calc) == 2
    divs = [a for a in _assigns(k) if isinstance(a.value, ir.Op) and a.value.op == "div"]
    assert all(d.name != d.value.args[1].name for d in divs)


@pytest.mark.parametrize("k", GALLERY_KERNELS)
def test_allocate_buffers_preserves_semantics_gallery(k):
    """The allocated IR still reads as surface IR; interpreting it catches wrong buffer reuse."""
    flat = three_address.run(legalize.run(k, _ctx()), _ctx())
    alloc = allocate_buffers.run(flat, _ctx())
    torch.testing.assert_close(_run_any(alloc), _run_any(flat), rtol=0, atol=0, equal_nan=True)
    if ir.conv_loop(alloc) is None:  # a CONV loop has no tile loop: the convolution and its store, no buffers
        assert {a.name for a in _assigns(alloc)} <= set(_decls(alloc))


# ----------------------------------------------------------------------------- plan_tiling


def _formula(buffers, budget: int) -> int:
    bits = sum(b.num * b.bits for b in buffers)
    return (budget * 8 // bits) // 256 * 256


@pytest.mark.parametrize("target", ["ascend910b1", "ascend310p"])
def test_plan_tiling_max_tile_formula(target):
    k = _until(_kernel(_src("store(y[t], exp(xt) * xt)")), "plan_tiling", target)
    tl = _tile(k)
    budget = lowering.get_target(target).ub_budget
    # xLocal 2x32 + yLocal 2x32 + one f32 temporary = 160 bits per element
    assert sum(b.num * b.bits for b in tl.buffers_decl) == 160
    assert tl.max_tile == _formula(tl.buffers_decl, budget) == (budget * 8 // 160) // 256 * 256
    assert plan_tiling.ub_bytes(tl.buffers_decl, tl.max_tile) <= budget


def test_plan_tiling_max_tile_relu_910b1():
    k = _until(_kernel(_src("store(y[t], relu(xt))")), "plan_tiling")
    assert _tile(k).max_tile == (188416 * 8 // 128) // 256 * 256 == 11776


def test_plan_tiling_with_masks_counts_one_bit_per_element():
    k = _until(_kernel(_src("store(y[t], select(xt > 0.0, xt, 0.0))")), "plan_tiling")
    tl = _tile(k)
    assert sum(b.num * b.bits for b in tl.buffers_decl) == 129
    assert tl.max_tile == _formula(tl.buffers_decl, 188416)


def test_plan_tiling_explicit_size_is_kept():
    k = _until(_kernel(_src("store(y[t], exp(xt))").replace("size=auto", "size=2048")), "plan_tiling")
    assert _tile(k).max_tile == 2048
    before = _until(_kernel(_src("store(y[t], exp(xt))")), "allocate_buffers")
    assert _tile(before).max_tile is None


# ----------------------------------------------------------------------------- select_instructions


def _apis(text: str, **dtypes) -> list[tuple]:
    return [(o.api, *o.srcs, *(f"{k}={v}" for k, v in o.attrs)) for o in _vecops(text, **dtypes)]


F32 = ir.scalar_of(DType.F32)


def test_select_add_vs_adds():
    two = _src("store(y[t], xt + load(z[t]))", extra=', z: Tensor[f32, "N"]')
    assert [o.api for o in _vecops(two)] == ["Add"]
    ops = _vecops(_src("store(y[t], xt + 1.0)"))
    assert [(o.api, o.srcs) for o in ops] == [("Adds", ("xLocal", ir.Const(1.0, F32)))]
    ops = _vecops(_src("store(y[t], 1.0 + xt)"))
    assert [(o.api, o.srcs) for o in ops] == [("Adds", ("xLocal", ir.Const(1.0, F32)))]
    ops = _vecops(_src("store(y[t], max(2.0, xt) * alpha)"))
    assert [o.api for o in ops] == ["Maxs", "Muls"]
    assert ops[1].srcs[1] == ir.Ref("alpha", F32)


def test_select_sub_and_div_forms():
    assert _apis(_src("store(y[t], xt - 2.0)")) == [("Adds", "xLocal", ir.Const(-2.0, F32))]
    assert _apis(_src("store(y[t], xt / 4.0)")) == [("Muls", "xLocal", ir.Const(0.25, F32))]
    ops = _vecops(_src("store(y[t], xt - alpha)"))
    assert ops[0].api == "Adds" and ops[0].srcs[1] == ir.Op("neg", (ir.Ref("alpha", F32),), F32)
    ops = _vecops(_src("store(y[t], 2.0 / xt)"))
    assert [(o.api, o.srcs) for o in ops] == [("Duplicate", (ir.Const(2.0, F32),)),
                                               ("Div", (ops[0].dst, "xLocal"))]


def test_select_scalar_minus_tile_is_muls_then_adds():
    ops = _vecops(_src("store(y[t], 2.0 - xt)"))
    assert [o.api for o in ops] == ["Muls", "Adds"]
    muls, adds = ops
    assert muls.srcs[0] == "xLocal" and isinstance(muls.srcs[1], ir.Const) and muls.srcs[1].value == -1.0
    assert adds.dst == muls.dst == "yLocal"
    assert adds.srcs == (muls.dst, ir.Const(2.0, F32))
    k = _kernel(_src("store(y[t], 2.0 - xt)"))
    x = torch.randn(300)
    torch.testing.assert_close(_interp(k, x), 2.0 - x)


@pytest.mark.parametrize("expr,api,mode", [
    ("xt < 0.0", "Compares", "LT"), ("0.0 < xt", "Compares", "GT"), ("0.0 <= xt", "Compares", "GE"),
    ("1.0 > xt", "Compares", "LT"), ("1.0 >= xt", "Compares", "LE"), ("0.0 == xt", "Compares", "EQ"),
    ("0.0 != xt", "Compares", "NE"), ("xt >= alpha", "Compares", "GE"), ("xt < exp(xt)", "Compare", "LT"),
])
def test_select_compare_modes(expr, api, mode):
    ops = _vecops(_src(f"m = {expr}", "store(y[t], select(m, xt, 0.0))"))
    (cmp,) = [o for o in ops if o.api.startswith("Compare")]
    assert cmp.api == api
    assert cmp.attrs == (("cmp", mode),)
    assert cmp.srcs[0] == "xLocal"  # the tile operand always comes first
    assert cmp.dst.startswith("mask")


def test_select_modes():
    def sel(expr):
        return [(o.api, dict(o.attrs).get("mode")) for o in _vecops(_src(f"store(y[t], {expr})"))
                if o.api in ("Select", "Duplicate")]

    assert sel("select(xt > 0.0, xt, exp(xt))") == [("Select", "VSEL_TENSOR_TENSOR_MODE")]
    assert sel("select(xt > 0.0, xt, 0.0)") == [("Select", "VSEL_TENSOR_SCALAR_MODE")]
    assert sel("select(xt > 0.0, 0.0, xt)") == [("Duplicate", None), ("Select", "VSEL_TENSOR_TENSOR_MODE")]
    assert sel("select(xt > 0.0, 1.0, 0.0)") == [("Duplicate", None), ("Select", "VSEL_TENSOR_SCALAR_MODE")]
    ops = _vecops(_src("store(y[t], select(xt > 0.0, 0.0, xt))"))
    dup, select = ops[-2:]
    assert dup.dst == select.dst == "yLocal"
    assert select.srcs[1:] == ("yLocal", "xLocal")


@pytest.mark.parametrize("src_dt,dst_dt,mode", [
    ("f32", "f16", "CAST_NONE"), ("f16", "f32", "CAST_NONE"), ("f32", "i32", "CAST_TRUNC"),
    ("i32", "f32", "CAST_NONE"), ("f32", "bf16", "CAST_RINT"),
])
def test_select_cast_rounding(src_dt, dst_dt, mode):
    ops = _vecops(_src(f"store(y[t], cast(xt, {dst_dt}))", dt=src_dt, out=dst_dt))
    assert [(o.api, o.srcs, o.attrs) for o in ops] == [("Cast", ("xLocal",), (("round", mode),))]


def test_select_loads_and_stores_become_copies():
    k = _until(_kernel(_src("store(y[t], exp(xt))")), "select_instructions")
    body = _tile(k).body
    assert isinstance(body[0], ir.CopyIn) and (body[0].buffer, body[0].tensor) == ("xLocal", "x")
    assert isinstance(body[-1], ir.CopyOut) and (body[-1].tensor, body[-1].buffer) == ("y", "yLocal")
    assert [type(s) for s in body] == [ir.CopyIn, ir.VecOp, ir.CopyOut]
    assert not [s for s in body if isinstance(s, (ir.Assign, ir.Store))]


def test_select_unary_api_names():
    text = _src("store(y[t], relu(rsqrt(sqrt(reciprocal(log(abs(exp(xt))))))))")
    assert [o.api for o in _vecops(text)] == ["Exp", "Abs", "Ln", "Reciprocal", "Sqrt", "Rsqrt", "Relu"]


# ----------------------------------------------------------------------------- schedule_stages


def test_schedule_stages_order_and_contents():
    text = _src("z2 = load(z[t])", "a = exp(xt) + z2", "store(w[t], a * 2.0)", "store(y[t], a)",
                extra=', z: Tensor[f32, "N"], w: Tensor[f32, "N"]')
    before = _until(_kernel(text), "select_instructions")
    after = schedule_stages.run(before, _ctx())
    stages = _tile(after).body
    assert [s.kind for s in stages] == [ir.StageKind.COPYIN, ir.StageKind.COMPUTE, ir.StageKind.COPYOUT]
    assert all(isinstance(s, ir.Stage) for s in stages)
    copyin, compute, copyout = (s.body for s in stages)
    assert all(isinstance(s, ir.CopyIn) for s in copyin) and [c.tensor for c in copyin] == ["x", "z"]
    assert all(isinstance(s, ir.VecOp) for s in compute)
    assert all(isinstance(s, ir.CopyOut) for s in copyout) and [c.tensor for c in copyout] == ["w", "y"]
    flat = _tile(before).body
    assert list(compute) == [s for s in flat if isinstance(s, ir.VecOp)]  # relative order kept
    assert len(copyin) + len(compute) + len(copyout) == len(flat)


def test_schedule_stages_full_pipeline_gallery_shape():
    k = lowering.run_pipeline(_kernel(_src("store(y[t], sigmoid(xt))")), _ctx())
    (split,) = k.body
    (tl,) = split.body
    assert [s.kind.value for s in tl.body] == ["copyin", "compute", "copyout"]
    assert tl.max_tile and tl.buffers_decl


def test_the_readme_and_the_design_map_list_the_pipeline_as_it_is():
    """README's "Pipeline" line and docs/design.md's map name every pass in order (docs drift otherwise)."""
    for doc in ("README.md", "docs/design.md"):
        text = (ROOT / doc).read_text()
        start = text.index("partition_launches →")
        arrows = text[start:text.index("→ emit", start) + len("→ emit")]
        assert tuple(re.findall(r"[a-z_0-9]+", arrows)) == PASS_NAMES, doc
