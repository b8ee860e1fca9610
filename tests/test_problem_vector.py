"""The problem's vector work (npu_harness/problem_vector.py), the vector term of the headline: per op class, the
instruction charged and the elements it is charged for, and how the cost model uses the term. The gallery
invariant (the term never exceeds the kernel's own vector work) is tests/test_problem_vector_gallery.py."""

from __future__ import annotations

import dataclasses

import pytest

from ascend_dsl import parse_text
from ascend_dsl.dtypes import DType
from npu_harness.cost import estimate, load_params
from npu_harness.cost.launches import combine
from npu_harness.problem_vector import Charge, charges, problem_vector_cycles
from tests.test_cost import elementwise

F32, F16 = DType.F32, DType.F16
P = load_params("ascend910b1")
N, B, D = 1 << 20, 256, 1024

FLAT = """from ascend_dsl import kernel, Tensor, f32, f16
@kernel(T=[f32, f16])
def k(x: Tensor[T, "N"], z: Tensor[T, "N"], y: Tensor[T, "N"], s: f32 = 2.0):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            zt = load(z[t])
            store(y[t], {expr})
"""

ROWS = """from ascend_dsl import kernel, Tensor, f32, f16
@kernel(T=[f32, f16])
def k(x: Tensor[T, "B, D"], w: Tensor[T, "D"], y: Tensor[T, "B, D"], eps: f32 = 1e-5):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xt = load(x[r, :])
            store(y[r, :], {expr})
"""


def flat(expr: str, dtype: DType = F32) -> list[Charge]:
    k = parse_text(FLAT.format(expr=expr), "pv.adsl")[0].instantiate({"T": dtype})
    return charges(k, {"N": N})


def rows(expr: str, dtype: DType = F32) -> list[Charge]:
    k = parse_text(ROWS.format(expr=expr), "pv.adsl")[0].instantiate({"T": dtype})
    return charges(k, {"B": B, "D": D})


def instrs(cs: list[Charge]) -> list[tuple[str, DType, float]]:
    return [(c.instr, c.dtype, c.elements) for c in cs]


@pytest.mark.parametrize("op, instr", [("exp", "Exp"), ("log", "Ln"), ("sqrt", "Sqrt"), ("rsqrt", "Rsqrt"),
                                       ("abs", "Abs"), ("relu", "Relu")])
def test_unary_ops_charge_their_instruction_per_element(op, instr):
    assert instrs(flat(f"{op}(xt)")) == [(instr, F32, N)]
    assert instrs(flat(f"{op}(xt)", F16)) == [(instr, F16, N)]


def test_binary_tile_ops_charge_the_tensor_instruction_and_scalar_operands_the_scalar_one():
    assert instrs(flat("xt * zt")) == [("Mul", F32, N)]
    assert instrs(flat("xt + zt")) == [("Add", F32, N)]
    assert instrs(flat("max(xt, zt)")) == [("Max", F32, N)]
    assert instrs(flat("xt * s")) == [("Muls", F32, N)]
    assert instrs(flat("xt - 1.5", F16)) == [("Adds", F16, N)]  # x - c = x + (-c)
    assert instrs(flat("2.0 - xt")) == [("Adds", F32, N)]  # the cheaper figure (a negation is left out)
    assert instrs(flat("min(xt, 0.5)")) == [("Mins", F32, N)]


def test_division():
    assert instrs(flat("xt / zt")) == [("Div", F32, N)]
    assert instrs(flat("xt / s")) == [("Muls", F32, N)]  # times 1 / s, formed by the scalar unit
    assert instrs(flat("1.0 / xt")) == [("Div", F32, N)]


def test_composite_ops_charge_only_the_instructions_they_cannot_do_without():
    for op in ("sigmoid", "tanh", "erf"):
        assert instrs(flat(f"{op}(xt)")) == [("Exp", F32, N), ("Div", F32, N)], op
    assert instrs(flat("xt ** zt")) == [("Ln", F32, N), ("Exp", F32, N), ("Mul", F32, N)]
    assert instrs(flat("-xt")) == []  # folded into a neighbour (x - y, a scalar factor)


def test_comparisons_and_select():
    assert instrs(flat("select(xt > zt, xt, zt)")) == [("Select", F32, N), ("Compare", F32, N)]
    assert instrs(flat("select(xt > 0.0, xt, zt)")) == [("Select", F32, N), ("Compares", F32, N)]


def test_explicit_casts_count_by_the_wider_type_and_identity_casts_not():
    assert instrs(flat("cast(cast(xt, f32) * 2.0, f16)", F16)) == [
        ("CastF32ToF16", F32, N), ("Muls", F32, N), ("Cast", F32, N)]
    assert instrs(flat("cast(xt, f32)", F32)) == []


def test_cycles_come_from_the_rate_table_per_256_byte_repeat():
    for dtype in (F32, F16):
        (c,) = flat("exp(xt)", dtype)
        assert c.cycles(P) == pytest.approx(N * dtype.size / 256 * P.cycles_per_repeat(f"Exp.b{8 * dtype.size}"))
    (m,) = flat("xt * s")
    assert m.cycles(P) == pytest.approx(N * 4 / 256 * P.cycles_per_repeat("Muls"))


def test_row_reductions_and_per_row_operands():
    # mean: B rows of D values to B values (D - 1 Adds each); x - mean: a per-row scalar, Adds
    assert instrs(rows("xt - mean(xt, axis=1)")) == [("Adds", F32, B * D), ("Add", F32, B * (D - 1))]
    assert instrs(rows("xt / max(xt, axis=1)")) == [("Muls", F32, B * D), ("Max", F32, B * (D - 1))]
    # per-row values are the scalar unit's: sqrt and + eps of a reduction are charged nothing
    assert instrs(rows("xt * sqrt(sum(xt, axis=1) + eps)")) == [("Muls", F32, B * D), ("Add", F32, B * (D - 1))]


def test_row_vectors_are_computed_once():
    assert instrs(rows("xt * load(w[:])")) == [("Mul", F32, B * D)]
    assert instrs(rows("xt / load(w[:])")) == [("Reciprocal", F32, D), ("Mul", F32, B * D)]
    assert instrs(rows("xt + exp(load(w[:]))")) == [("Add", F32, B * D), ("Exp", F32, D)]


def test_scans_charge_one_binary_instruction_per_element():
    assert instrs(rows("cumsum(xt, axis=1)")) == [("Add", F32, B * (D - 1))]
    assert instrs(rows("cumprod(xt, axis=1)")) == [("Mul", F32, B * (D - 1))]


def test_a_repeated_expression_is_charged_once():
    assert instrs(flat("exp(xt) * exp(xt)")) == [("Mul", F32, N), ("Exp", F32, N)]


def test_accumulators_and_box_reductions():
    text = """from ascend_dsl import kernel, Tensor, f32
@kernel
def k(x: Tensor[f32, "N"], out: Tensor[f32, "1"]):
    total = 0.0
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            total += sum(xt * xt)
    store(out[0], total)
"""
    k = parse_text(text, "acc.adsl")[0].instantiate()
    assert instrs(charges(k, {"N": N})) == [("Add", F32, N - 1), ("Mul", F32, N)]
    box = """from ascend_dsl import kernel, Tensor, f32
@kernel
def k(x: Tensor[f32, "A, R, C"], y: Tensor[f32, "A, C"]):
    for blk in split(A * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], sum(load(x[t]), axis=1))
"""
    k = parse_text(box, "box.adsl")[0].instantiate()
    assert instrs(charges(k, {"A": 16, "R": 256, "C": 128})) == [("Add", F32, 16 * 128 * 255)]


def test_estimate_takes_the_problem_term_and_says_so():
    counters = elementwise(64 << 20)
    own = estimate(counters, "ascend910b1", 64 << 20)
    assert own.vector_basis == "kernel" and own.vector_ideal_us == own.kernel_vector_us > 0
    assert "vector term from the kernel's instructions" in own.summary()
    cycles = 1e3 * own.ideal_us * P.clock_ghz * 1e3 * P.aiv  # far above the memory term: a vector-bound ideal
    est = estimate(counters, "ascend910b1", 64 << 20, problem_vector_cycles=cycles)
    assert est.vector_basis == "problem" and "vector term from the problem" in est.summary()
    assert est.vector_ideal_us == pytest.approx(cycles / (P.clock_ghz * 1e3 * P.aiv))
    assert est.ideal_kind == "vector" and est.ideal_us == pytest.approx(est.vector_ideal_us)
    assert est.kernel_vector_us == own.kernel_vector_us and est.roofline_us == own.roofline_us  # traffic% unchanged
    none = estimate(counters, "ascend910b1", 64 << 20, problem_vector_cycles=0.0)
    assert none.ideal_kind == "memory" and none.vector_ideal_us == 0.0


def test_launches_combine_the_program_term():
    parts = [estimate(elementwise(64 << 20), "ascend910b1", 64 << 20, problem_vector_cycles=0.0) for _ in range(2)]
    big = 1e3 * parts[0].kernel_us * P.clock_ghz * 1e3 * P.aiv
    est = combine(parts, "ascend910b1", 64 << 20, big)
    assert est.vector_basis == "problem" and est.ideal_kind == "vector"
    assert est.ideal_us == pytest.approx(big / (P.clock_ghz * 1e3 * P.aiv))
    assert combine(parts, "ascend910b1", 64 << 20, 0.0).ideal_kind == "memory"


def test_problem_vector_cycles_sums_the_charges():
    from npu_harness.binding import Binding

    k = parse_text(FLAT.format(expr="exp(xt) + zt"), "pv.adsl")[0].instantiate({"T": F32})
    want = N * 4 / 256 * (P.cycles_per_repeat("Exp.b32") + P.cycles_per_repeat("Add.b32"))
    assert problem_vector_cycles(k, Binding({}, {"N": N}, {}), "ascend910b1") == pytest.approx(want)


def test_the_softmax_shift_is_not_the_problems_work():
    """exp(x - max(x)): the row max only guards against overflow (an online softmax skips it while the sums stay
    bounded); the same max elsewhere is charged."""
    assert instrs(rows("exp(xt - max(xt, axis=1))")) == [("Exp", F32, B * D), ("Adds", F32, B * D)]
    assert instrs(rows("xt - max(xt, axis=1)")) == [("Adds", F32, B * D), ("Max", F32, B * (D - 1))]


ATTENTION = """from ascend_dsl import kernel, Tensor, f32, f16
@kernel(T=[f16])
def k(q: Tensor[T, "B, M, Dk"], k: Tensor[T, "B, N, Dk"], v: Tensor[T, "B, N, Dv"], o: Tensor[f32, "B, M, Dv"],
      scale: f32 = 0.125, window: i32 = 64):
    p = workspace(T, B, M, N)
    for blk in split(B, M, N, cores=AIC):
        with cube:
            s = matmul(q[blk], k[blk], transpose_b=True)
        with vector:
            x = {scores}
            e = exp(x - max(x, axis=1))
            store(p[blk], cast(e / sum(e, axis=1), T))
    for blk in split(B, M, Dv, cores=AIC):
        with cube:
            acc = matmul(p[blk], v[blk])
        with vector:
            store(o[blk], acc)
"""
ATT = {"B": 2, "M": 256, "N": 512, "Dk": 64, "Dv": 64}


def attention(scores: str, band=(1.0, False)) -> list[Charge]:
    text = ATTENTION.format(scores=scores).replace("f32, f16", "f32, f16, i32")
    return charges(parse_text(text, "att.adsl")[0].instantiate(), ATT, band)


def test_attention_scores_move_their_scalar_and_per_row_factors_to_the_matmuls():
    """s * scale: on q (or the Fixpipe); e / sum(e): on the output rows (flash attention's O / l)."""
    n = 2 * 256 * 512
    assert sorted(instrs(attention("s * scale"))) == sorted([("CastF32ToF16", F32, n), ("Add", F32, n - 2 * 256),
                                                            ("Exp", F32, n), ("Adds", F32, n)])


def test_a_positional_band_charges_its_share_and_not_its_tests():
    from ascend_dsl import ir

    causal = "select(col_index() <= row_index(), s * scale, -3.0e38)"
    full = attention(causal)
    assert ("Select", F32, 2 * 256 * 512) in instrs(full)
    half = attention(causal, (0.5, True))
    assert {c.instr for c in half} == {"CastF32ToF16", "Add", "Exp", "Adds"}
    assert sum(c.elements for c in half if c.instr == "Exp") == 2 * 256 * 512 * 0.5
    fa = ir.FlashAttention("q", "k", "v", "o", ("B",), "M", "N", "Dk", "Dv", ir.Const(1.0, ir.scalar_of(F32)),
                           ir.FlashMask(None, "", 0.0, -3e38, (), (ir.FlashBound(0),)), 64, 64, ())
    from npu_harness.problem_vector import band_share

    m, nk = 256, 512  # causal: query i keeps keys 0..i
    assert band_share(fa, {"M": m, "N": nk}, {}) == pytest.approx(sum(i + 1 for i in range(m)) / (m * nk))
    window = ir.FlashMask(None, "", 0.0, -3e38, (ir.FlashBound(1, ((-1, "window"),)),), (ir.FlashBound(0),))
    fw = dataclasses.replace(fa, mask=window)  # window 64: query i keeps keys i - 63..i
    assert band_share(fw, {"M": m, "N": nk}, {"window": 64}) == pytest.approx(
        sum(min(i + 1, 64) for i in range(m)) / (m * nk))
