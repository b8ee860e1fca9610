"""Limits of the emitters, reported by the passes as collected, located constraint errors (they used to be
raised while the C++ was written, one at a time). Each kernel marks the line the error points at with `# <-`."""

from __future__ import annotations

import pytest

from ascend_dsl import DslError, ir, parse_text
from ascend_dsl.diagnostics import DiagnosticSink, Span
from ascend_dsl.dtypes import DType
from lowering import lower
from lowering.passes.hoist_scalars import check_launch
from lowering.passes.select_instructions import per_row, scalar_form

TWO_TILE_LOOPS = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"], z: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(x[t]))
        for u in tile(blk, size=auto, buffers=2):  # <-
            store(z[u], load(x[u]))
'''

TWO_EXTENTS = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "M"]):
    total = 0.0
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            total += sum(load(x[t]))
    for blk in split(M, cores=AIV):  # <-
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(x[t]) * total)
'''

NINE_ACCUMULATORS = '''@kernel
def k(x: Tensor[f32, "N"], out: Tensor[f32, "1"]):
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    a4 = 0.0
    a5 = 0.0
    a6 = 0.0
    a7 = 0.0
    a8 = 0.0
    for blk in split(N, cores=AIV):  # <-
        for t in tile(blk, size=auto, buffers=2):
            v = load(x[t])
            a0 += sum(v)
            a1 += sum(v)
            a2 += sum(v)
            a3 += sum(v)
            a4 += sum(v)
            a5 += sum(v)
            a6 += sum(v)
            a7 += sum(v)
            a8 += sum(v)
    store(out[0], a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8)
'''

SLOTS_IN_A_FLAT_LOOP = '''@kernel
def k(v: Tensor[f32, "L"], w: Tensor[f32, "L"], x: Tensor[f32, "N, C, H, W"]):
    s = zeros(C)  # <-
    for blk in split(L, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(w[t], load(v[t]))
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            s[r] += sum(load(x[r, :]), axis=1)
'''

BOX_WITH_KERNEL_SCOPE = '''@kernel
def k(x: Tensor[f32, "A, R, C"], scale: Tensor[f32, "1"], y: Tensor[f32, "A, C"]):
    s = load(scale[0])  # <-
    for blk in split(A * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], sum(load(x[t]), axis=1) * s)
'''

TWO_WINDOWS = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], y: Tensor[f32, "N, C, OH, OW"], z: Tensor[f32, "N, C, OH, OW"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
            xt = load(x[p])
            store(y[p], max_pool(xt, kernel=2))
            store(z[p], avg_pool(xt, kernel=3))  # <-
'''

PLANES_WITHOUT_POOLS = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], z: Tensor[f32, "N, C, A, B"], out: Tensor[f32, "1"]):
    total = 0.0
    for blk in split(N * C, cores=AIV):
        for p in tile(blk):  # <-
            total += sum(load(x[p]))
    store(out[0], total)
'''

TWO_PLANE_SHAPES = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], y: Tensor[f32, "N, C, OH, OW"], u: Tensor[f32, "N, C, A, B"],
      z: Tensor[f32, "N, C, OA, OB"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):  # <-
            store(y[p], max_pool(load(x[p]), kernel=2))
            store(z[p], max_pool(load(u[p]), kernel=2))
'''

MATMUL_WITH_DEVICE_WORK = '''@kernel
def k(a: Tensor[f16, "M, K"], b: Tensor[f16, "K, N"], c: Tensor[f32, "M, N"], w: Tensor[f32, "1"]):
    s = load(w[0])  # <-
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(a[blk], b[blk])
        with vector:
            store(c[blk], acc * s)
'''

POOLING_WITH_DEVICE_WORK = '''@kernel
def k(x: Tensor[f32, "N, C, L"], y: Tensor[f32, "N, C, OL"], d: Tensor[f32, "1"], s: f32 = 2.0):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
            store(y[p], max_pool(load(x[p]), kernel=2))
    store(d[0], s)  # <-
'''

HALF_CAST_AT_LAUNCH = '''@kernel
def k(x: Tensor[f16, "N"], y: Tensor[f16, "N"], alpha: f32 = 2.0):
    h = cast(alpha, f16)  # <-
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(x[t]) * h)
'''

COMPARE_PER_ROW_VALUES = '''@kernel
def k(x: Tensor[f32, "B, D"], s: Tensor[f32, "B"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            m = max(load(x[r, :]), axis=1)
            store(s[r], select(m > 0.0, m, 0.0))  # <-
'''


def _errors(text: str, target: str = "ascend910b1") -> DslError:
    with pytest.raises(DslError) as e:
        lower(parse_text(text, "k.adsl")[0].instantiate(), target, "k.adsl")
    return e.value


def _marker_line(text: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("# <-"))


@pytest.mark.parametrize("text,needle,col", [
    (TWO_TILE_LOOPS, "one tile loop per split loop", 9),
    (TWO_EXTENTS, "splits the same extent", 5),
    (NINE_ACCUMULATORS, "9 accumulators in one split loop", 5),
    (SLOTS_IN_A_FLAT_LOOP, "slot accumulators need row loops", 5),
    (BOX_WITH_KERNEL_SCOPE, "has that split loop only", 5),
    (TWO_WINDOWS, "must share kernel=, stride=", 25),
    (PLANES_WITHOUT_POOLS, "a plane loop lowers pooling only", 9),
    (TWO_PLANE_SHAPES, "must share their spatial shape", 9),
    (MATMUL_WITH_DEVICE_WORK, "a matmul kernel has its cube split loop only", 5),
    (POOLING_WITH_DEVICE_WORK, "a kernel with a pooling or resize loop has that split loop only", 5),
    (HALF_CAST_AT_LAUNCH, "a scalar cast to f16 at kernel scope cannot be lowered", 9),
    (COMPARE_PER_ROW_VALUES, "comparisons of per-row values are not supported yet", 32),
], ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_emitter_limits_are_located_constraint_errors(text, needle, col):
    e = _errors(text)
    d = next((d for d in e.diagnostics if needle in d.message), None)
    assert d is not None, e.render()
    assert d.code == "UNSUPPORTED" and (d.span.file, d.span.line, d.span.col) == ("k.adsl", _marker_line(text), col)
    assert "Traceback" not in e.render()


def test_limits_are_collected():
    """A flat loop then a row loop with a slot accumulator: both limits are reported at once."""
    e = _errors(SLOTS_IN_A_FLAT_LOOP)
    assert len(e.diagnostics) == 2 and {d.code for d in e.diagnostics} == {"UNSUPPORTED"}
    assert "splits the same extent" in e.diagnostics[0].message


def test_an_instruction_mixing_rows_that_has_no_per_row_form_is_located():
    """Not reachable from the DSL (the front end rejects selects over mixed shapes first), so the check is
    exercised on an instruction built by hand: a Select of whole rows with a per-row value."""
    span = Span("k.adsl", 7, 13, 7, 30)
    rows, col = ir.Layout.ROWS, ir.Layout.COL
    buffers = {n: ir.Buffer(n, ir.Position.VECCALC, DType.F32, 1, 32, lay) for n, lay in
               (("m", rows), ("x", rows), ("c", col), ("d", rows))}
    sink = DiagnosticSink()
    per_row(ir.VecOp("Select", "d", ("m", "x", "c"), (("mode", "VSEL_TENSOR_TENSOR_MODE"),), span), buffers, sink)
    (d,) = sink.items
    assert d.code == "UNSUPPORTED" and "Select mixing whole rows with per-row values" in d.message and d.span == span


def test_a_crash_while_emitting_is_an_internal_error_naming_the_pass(monkeypatch):
    """Emission is the pipeline's last pass: a bug there reaches the user as error[INTERNAL], not a traceback."""
    import dataclasses

    from lowering import emit

    def broken(kernel, ctx):
        raise KeyError("planted emitter bug")

    kind = emit.KINDS[ir.KernelKind.VECTOR]
    monkeypatch.setitem(emit.KINDS, ir.KernelKind.VECTOR, dataclasses.replace(kind, build_view=broken))
    e = _errors(TWO_TILE_LOOPS.replace("        for u in tile(blk, size=auto, buffers=2):  # <-\n"
                                       "            store(z[u], load(x[u]))\n", ""))
    (d,) = e.diagnostics
    assert d.code == "INTERNAL" and "internal error in pass 'emit'" in d.message and "planted emitter bug" in d.message
    assert "Traceback" not in e.render() and d.span.file == "k.adsl"


def test_a_limit_tripped_twice_at_one_span_is_reported_once():
    """tanh of a per-row value lowers to two comparisons (|x|, then the sign): one error, not two."""
    text = COMPARE_PER_ROW_VALUES.replace("select(m > 0.0, m, 0.0))  # <-", "tanh(m))  # <-")
    e = _errors(text)
    (d,) = e.diagnostics
    assert d.code == "UNSUPPORTED" and (d.span.line, d.span.col) == (_marker_line(text), 25)


def test_a_scalar_op_without_a_scalar_form_is_located():
    """Not reachable from the DSL (hoist_scalars hoists such ops out of tile loops and legalizes the device's
    kernel-scope math; plan_chunks keeps them out of chunked rows), so the check is exercised by hand."""
    span = Span("k.adsl", 4, 9, 4, 16)
    f32 = ir.scalar_of(DType.F32)
    sink = DiagnosticSink()
    scalar_form(ir.Op("tanh", (ir.Ref("a", f32, span),), f32, span), sink, lift=True)
    (d,) = sink.items
    assert d.code == "UNSUPPORTED" and "scalar expression 'tanh' cannot be lowered" in d.message and d.span == span


def test_a_launch_scalar_the_host_cannot_compute_is_located():
    """Not reachable from the DSL (every scalar op has a host form, `OpInfo.host_c`; copy is the lowering's own
    tile op), so by hand."""
    span = Span("k.adsl", 3, 9, 3, 16)
    i32 = ir.scalar_of(DType.I32)
    sink = DiagnosticSink()
    check_launch(ir.ScalarAssign("h", ir.Op("copy", (ir.Ref("n", i32, span),), i32, span), span, launch=True), sink)
    (d,) = sink.items
    assert d.code == "UNSUPPORTED" and "scalar expression 'copy' cannot be computed at launch" in d.message
    assert d.span == span
