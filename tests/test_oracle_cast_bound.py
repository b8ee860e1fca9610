"""The fuzz oracle's cast bound (ascend_dsl/cast_bound.py, interpreter.run's cast_bound, oracle.cast_bound): a
first-order bound on how far the roundings of casts to f16/bf16 can move each output, whatever the order of the
work after them. Checked against brute force (every cast element moved anywhere within its rounding), on seed
34001's flash finding (a legitimate order passes, wrong flashes fail), and for kernels without such casts (no
bound: the old slack)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ascend_dsl import cast_bound as cb
from ascend_dsl import interpreter, parse_text
from npu_harness.fuzz import oracle
from npu_harness.fuzz.inputs import make_inputs
from npu_harness.fuzz.oracle import judge, reference
from npu_harness.fuzz.program import from_case

CASE = Path(__file__).parent / "fuzz_cases" / "mismatch-oracle-flash-bf16-rounding-order.adsl"
U_BF16 = 2.0 ** -8


def _flash_setup():
    text, setup = from_case(CASE.read_text())
    kernel = parse_text(text, "case.adsl")[0].instantiate()
    scalars = {p.name: p.default for p in kernel.scalars}
    inputs = make_inputs(kernel, setup["sizes"], setup["seed"])
    ref = reference(kernel, inputs, scalars, setup["sizes"], setup["seed"])
    q, k, v = (inputs[n].double() for n in ("q1", "k2", "v3"))
    s = q @ k.transpose(1, 2) * 0.5
    e = torch.exp(s - s.max(-1, keepdim=True).values)
    return ref, s, e, e.sum(-1, keepdim=True), v


def test_flash_rounding_order_of_seed_34001_passes():
    """The flash lowering rounds the unnormalised e to bf16, multiplies by v and divides by l (the emulator's
    output equals this model to 1e-6); the source rounds e / l. Both are within u * sum_j p_j |v_j| of the exact
    result: the old slack (the source order's realised rounding, tiny where v's column cancels) rejected it."""
    ref, _, e, rowsum, v = _flash_setup()
    flash = ((e.to(torch.bfloat16).double() @ v) / rowsum).float()
    shapes = {"o4": list(ref.outputs["o4"].shape)}
    bound = oracle.cast_bound(ref.kernel, ref.inputs, ref.scalars, shapes)["o4"]
    exact = (e / rowsum) @ v
    assert torch.allclose(bound, U_BF16 * ((e / rowsum) @ v.abs()), rtol=1e-9, atol=0)  # the bound, by hand
    assert ((flash.double() - exact).abs() <= bound + 1e-5 * (1 + exact.abs())).all()
    assert judge("o4", flash, ref, "f32").ok


def test_outputs_off_by_more_than_the_bound_still_fail():
    """One element moved past its slack (twice the bound and the old runs' spread); a flash that forgets to divide
    by l; a flash over two blocks of keys that forgets to rescale the first block's sum when the max moves."""
    ref, s, e, rowsum, v = _flash_setup()
    flash = ((e.to(torch.bfloat16).double() @ v) / rowsum).float()
    slack = ref.slack("o4").reshape(-1)
    bound = oracle.cast_bound(ref.kernel, ref.inputs, ref.scalars, {"o4": list(flash.shape)})["o4"].reshape(-1)
    i = int(bound.argmax())
    assert 0 < 2 * bound[i] <= slack[i] < float("inf")
    moved = flash.clone().reshape(-1)
    r = ref.outputs["o4"].reshape(-1)[i].double()
    moved[i] = float(r + 1.5 * slack[i] + 1e-5 * (1 + r.abs()))
    assert not judge("o4", moved.reshape(flash.shape), ref, "f32").ok
    undivided = (e.to(torch.bfloat16).double() @ v).float()
    assert not judge("o4", undivided, ref, "f32").ok
    half = s.shape[-1] // 2
    m1 = s[..., :half].max(-1, keepdim=True).values
    m = torch.maximum(m1, s[..., half:].max(-1, keepdim=True).values)
    e1, e2 = torch.exp(s[..., :half] - m1), torch.exp(s[..., half:] - m)
    acc = e1.to(torch.bfloat16).double() @ v[:, :half] + e2.to(torch.bfloat16).double() @ v[:, half:]  # no rescale
    total = e1.sum(-1, keepdim=True) * torch.exp(m1 - m) + e2.sum(-1, keepdim=True)
    assert (m1 < m).any()  # the max does move for some rows
    assert not judge("o4", (acc / total).float(), ref, "f32").ok


NO_CAST = '''@kernel
def k(x: Tensor[f16, "B, D"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=1):
            v = cast(load(x[r, :]), f32)
            store(y[r, :], v - sum(v, axis=1) / 3.0)
'''


def test_a_kernel_without_narrowing_casts_keeps_the_old_slack(monkeypatch):
    """No cast to f16/bf16 (a widening cast only): no bound run at all, the slack as before session 35; and a
    bound run of it would give zero anyway (no bound has a source)."""
    kernel = parse_text(NO_CAST, "k.adsl")[0].instantiate()
    x = (torch.rand(8, 16, generator=torch.Generator().manual_seed(5)) * 2 - 1).half()
    assert not oracle.narrow_casts(kernel)
    real = interpreter.run

    def no_bound_run(*a, **k):
        assert not k.get("cast_bound"), "a bound run for a kernel without narrowing casts"
        return real(*a, **k)

    monkeypatch.setattr(interpreter, "run", no_bound_run)
    ref = reference(kernel, {"x": x}, {}, {"B": 8, "D": 16}, seed=0)
    assert torch.isfinite(ref.slack("y")).all()
    y = torch.full((8, 16), float("nan"), dtype=torch.float64)
    out = real(kernel, {"x": x.double(), "y": y}, {}, widen=True, cast_bound=True)
    assert isinstance(out["y"], cb.Bounded) and (out["y"].bound == 0).all() and not torch.isnan(y).any()


ROWS = '''@kernel
def k(x: Tensor[f32, "B, D"], w: Tensor[f32, "B, D"], y: Tensor[f32, "B, D"], z: Tensor[f32, "B"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=1):
            a = cast(cast(load(x[r, :]) * 3.0, bf16), f32)
            b = cast(cast(load(w[r, :]), f16), f32)
            c = exp(a - max(a, axis=1)) / sum(exp(a - max(a, axis=1)), axis=1)
            d = select(b > 0.0, sqrt(b * b + 1.0) * a, max(a, b) - tanh(b) / (abs(a) + 2.0))
            store(y[r, :], c * d + sigmoid(a) - min(b, 0.5))
            store(z[r], sum(c * b, axis=1) + mean(a * a, axis=1))
'''

FLASH = '''@kernel(T=[bf16])
def case(q1: Tensor[T, "Bt, M, Dk"], k2: Tensor[T, "Bt, N, Dk"], v3: Tensor[T, "Bt, N, Dv"], o4: Tensor[f32, "Bt, M, Dv"]):
    p5 = workspace(T, Bt, M, N)
    for blk in split(Bt, M, N, cores=AIC):
        with cube:
            s = matmul(q1[blk], k2[blk], transpose_b=True)
        with vector:
            e = exp(s * 0.5 - max(s * 0.5, axis=1))
            store(p5[blk], cast(e / sum(e, axis=1), T))
    for blk in split(Bt, M, Dv, cores=AIC):
        with cube:
            acc = matmul(p5[blk], v3[blk])
        with vector:
            store(o4[blk], acc)
'''


def _bound_and_brute_force(text: str, inputs: dict, outputs: dict, trials: int, seed: int):
    """The cast bound of each output, and the largest |change| over `trials` runs in which every cast element is
    moved by r * u * |x| (r uniform in [-1, 1], or +-1 in half the trials), the rest exact."""
    kernel = parse_text(text, "k.adsl")[0].instantiate()

    def fresh():
        t = {n: v.double() for n, v in inputs.items()}
        return t | {n: torch.full(s, float("nan"), dtype=torch.float64) for n, s in outputs.items()}

    cb.DROPPED.clear()
    out = interpreter.run(kernel, fresh(), {}, widen=True, cast_bound=True)
    bounds = {n: out[n].bound.clone() for n in outputs}
    assert not cb.DROPPED, f"torch functions without a propagation rule: {cb.DROPPED}"
    exact = fresh()
    interpreter.run(kernel, exact, {}, widen=True)
    worst = {n: torch.zeros(s, dtype=torch.float64) for n, s in outputs.items()}
    g = torch.Generator().manual_seed(seed)
    real = interpreter._cast
    for trial in range(trials):
        def moved(x, dtype, trial=trial):
            y = real(x, dtype)
            if dtype.torch in cb.UNIT and x.is_floating_point():
                r = torch.rand(y.shape, generator=g, dtype=torch.float64) * 2 - 1
                r = r.sign() if trial % 2 else r
                y = y * (1 + cb.UNIT[dtype.torch] * r)
            return y
        interpreter._cast = moved
        try:
            t = fresh()
            interpreter.run(kernel, t, {}, widen=True)
        finally:
            interpreter._cast = real
        for n in outputs:
            worst[n] = torch.maximum(worst[n], (t[n] - exact[n]).abs())
    return bounds, worst, exact


@pytest.mark.parametrize("seed", [1, 2])
def test_bound_covers_every_rounding_of_the_casts_in_a_row_kernel(seed):
    g = torch.Generator().manual_seed(seed)
    x, w = torch.randn(6, 40, generator=g) * 3, torch.randn(6, 40, generator=g)
    bounds, worst, exact = _bound_and_brute_force(ROWS, {"x": x, "w": w}, {"y": [6, 40], "z": [6]}, 40, seed)
    for n in ("y", "z"):
        assert (bounds[n] > 0).any()
        # first order: second-order terms are u^2 relative (the 1.01); the bound is not loose by orders either
        assert (worst[n] <= 1.01 * bounds[n] + 1e-12 * (1 + exact[n].abs())).all(), n
        assert (worst[n] > 0.05 * bounds[n]).float().mean() > 0.5, n


def test_bound_covers_every_rounding_order_of_a_flash_workspace():
    """The two-stage SDPA of seed 34001 at small sizes: the bound, carried through the bf16 workspace and the
    second matmul, covers the cast moved anywhere within its rounding, and the flash order (round e, then / l)."""
    g = torch.Generator().manual_seed(3)
    q = (torch.randn(2, 5, 3, generator=g) * 2).bfloat16().float()
    k = (torch.randn(2, 9, 3, generator=g) * 2).bfloat16().float()
    v = (torch.randn(2, 9, 7, generator=g) * 50).bfloat16().float()
    bounds, worst, exact = _bound_and_brute_force(FLASH, {"q1": q, "k2": k, "v3": v}, {"o4": [2, 5, 7]}, 40, 3)
    b = bounds["o4"]
    assert (worst["o4"] <= 1.01 * b + 1e-12).all()
    s = q.double() @ k.double().transpose(1, 2) * 0.5
    e = torch.exp(s - s.max(-1, keepdim=True).values)
    flash = (e.to(torch.bfloat16).double() @ v.double()) / e.sum(-1, keepdim=True)
    assert ((flash - exact["o4"]).abs() <= b * 1.01 + 1e-12).all()


def _check_rule(f, xs, bounds, trials: int = 200, seed: int = 0):
    """|f(x + d) - f(x)| <= the propagated bound (first order: 2% room) for d within the operands' bounds."""
    g = torch.Generator().manual_seed(seed)
    wrapped = [cb.bounded(x, e) for x, e in zip(xs, bounds, strict=True)]
    out = f(*wrapped)
    assert isinstance(out, cb.Bounded), f
    y = f(*xs)
    for _ in range(trials):
        moved = [x + e * (torch.rand(x.shape, generator=g, dtype=torch.float64) * 2 - 1).sign() for x, e in
                 zip(xs, bounds, strict=True)]
        d = (f(*moved) - y).abs()
        assert (d <= 1.02 * out.bound + 1e-15).all(), f


RULES = {
    "add": (lambda a, b: a + b, 2), "sub": (lambda a, b: 3.0 - a - b, 2), "mul": (lambda a, b: a * b * -2.0, 2),
    "div": (lambda a, b: a / (b.abs() + 1.0), 2), "rdiv": (lambda a, b: 2.0 / (a.abs() + 1.0), 2),
    "matmul": (lambda a, b: a @ b.T, 2), "sum": (lambda a, b: (a - b).sum(dim=1, keepdim=True), 2),
    "mean": (lambda a, b: (a * b).mean(dim=1), 2), "maximum": (lambda a, b: torch.maximum(a, b), 2),
    "amax": (lambda a, b: (a - b).amax(dim=1), 2), "where": (lambda a, b: torch.where(a > 0, a, b * 2.0), 2),
    "exp": (lambda a, b: torch.exp(a), 1), "log": (lambda a, b: (a.abs() + 0.5).log(), 1),
    "sqrt": (lambda a, b: (a * a + 0.1).sqrt(), 1), "rsqrt": (lambda a, b: (a.abs() + 1.0).rsqrt(), 1),
    "reciprocal": (lambda a, b: (a.abs() + 0.3).reciprocal(), 1), "tanh": (lambda a, b: a.tanh(), 1),
    "sigmoid": (lambda a, b: torch.sigmoid(a), 1), "erf": (lambda a, b: torch.erf(a), 1),
    "pow": (lambda a, b: torch.pow(a.abs() + 1.0, b), 2), "cumsum": (lambda a, b: (a * b).cumsum(1), 2),
    "conv": (lambda a, b: torch.nn.functional.conv1d(a.reshape(1, 4, 6), b.reshape(3, 4, 2)[:, :, :2]), 2),
    "index": (lambda a, b: a[:, [0, 2, 2]].reshape(-1) * b.reshape(-1)[:12], 2),
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_propagation_rule_bounds_its_operands_moved_within_their_bounds(name):
    f, _ = RULES[name]
    g = torch.Generator().manual_seed(len(name))
    a, b = (torch.randn(4, 6, generator=g, dtype=torch.float64) * 2 for _ in range(2))
    if name == "conv":
        b = torch.randn(4, 6, generator=g, dtype=torch.float64)
    _check_rule(f, [a, b], [U_BF16 * a.abs(), U_BF16 * b.abs()])


def test_a_store_into_a_workspace_keeps_the_bound_and_a_plain_store_clears_it():
    ws = cb.bounded(torch.zeros(3, 4, dtype=torch.float64))
    rows = ws.reshape(-1, 4)  # a view: its bound aliases the workspace's
    rows[1:] = cb.cast_rounding(torch.ones(2, 4, dtype=torch.float64) * 3, torch.bfloat16)
    assert (ws.bound[1:] == 3 * U_BF16).all() and (ws.bound[0] == 0).all()
    rows[2] = torch.ones(4, dtype=torch.float64)
    assert (ws.bound[2] == 0).all() and (ws.bound[1] == 3 * U_BF16).all()
    assert torch.equal(cb.bound_of(ws[1:2].clone().T), torch.full((4, 1), 3 * U_BF16, dtype=torch.float64))
    assert not isinstance((ws > 1).float().to(torch.int32), cb.Bounded)  # a comparison carries no bound


def test_a_cast_leaves_its_operands_bound_alone():
    x = cb.bounded(torch.full((2, 3), 4.0, dtype=torch.float64))
    y = cb.cast_rounding(x, torch.float16)
    assert (x.bound == 0).all() and (y.bound == 4 * 2.0 ** -11).all()


def test_infinities_and_clear_maxima_bring_no_bound():
    """A cast of an infinity is exact; a max or min whose result is one operand whatever the errors has that
    operand's bound; a zero bound beside an infinite factor adds nothing."""
    x = cb.cast_rounding(torch.tensor([float("inf"), 3.0, -2.0], dtype=torch.float64), torch.bfloat16)
    assert torch.equal(x.bound, torch.tensor([0.0, 3 * U_BF16, 2 * U_BF16], dtype=torch.float64))
    big = cb.cast_rounding(torch.tensor([100.0, 100.0, 0.5], dtype=torch.float64), torch.float16)
    m = torch.minimum(x, torch.tensor([1.0, 50.0, 1.0], dtype=torch.float64))
    assert torch.equal(m.bound, torch.tensor([0.0, 3 * U_BF16, 2 * U_BF16], dtype=torch.float64))
    m = torch.maximum(x, big)
    assert torch.equal(m.bound, torch.tensor([0.0, 100 * 2.0 ** -11, 0.5 * 2.0 ** -11], dtype=torch.float64))
    p = x * torch.tensor([float("inf"), 1.0, 1.0], dtype=torch.float64)
    assert not torch.isnan(p.bound).any()
    h = (x * 1.0).to(torch.float16)
    assert torch.allclose(h.bound[1:], x.bound[1:] + 2.0 ** -11 * torch.tensor([3.0, 2.0], dtype=torch.float64))  # rounds again


SCALARS = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"], out: Tensor[f32, "1"]):
    total = 0.0
    top = -1000.0
    for blk in split(N, cores=AIV):
        for i in tile(blk, size=auto, buffers=2):
            d = cast(cast(load(x[i]) * 1.7, bf16), f32)
            total += sum(d * d)
            top = max(top, max(d))
    s = sqrt(total) * 2.0
    for blk in split(N, cores=AIV):
        for i in tile(blk, size=auto, buffers=2):
            store(y[i], load(x[i]) * s - top)
    store(out[0], s / top)
'''

SLOTS = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], y: Tensor[f32, "N, C, H, W"]):
    s = zeros(C)
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=1):
            s[r] += sum(cast(cast(load(x[r, :]), f16), f32), axis=1)
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=1):
            store(y[r, :], load(x[r, :]) - s[r])
'''


@pytest.mark.parametrize("text, shapes", [(SCALARS, {"x": [300]}), (SLOTS, {"x": [3, 4, 5, 6]})],
                         ids=["scalars", "slots"])
def test_bound_covers_the_casts_before_scalar_and_slot_accumulators(text, shapes):
    g = torch.Generator().manual_seed(11)
    x = torch.randn(*shapes["x"], generator=g) * 4
    outputs = {"y": list(x.shape)} | ({"out": [1]} if "out:" in text else {})
    bounds, worst, exact = _bound_and_brute_force(text, {"x": x}, outputs, 30, 11)
    for n in outputs:
        assert (bounds[n] > 0).all(), n  # every output depends on a cast through a scalar
        assert (worst[n] <= 1.01 * bounds[n] + 1e-12 * (1 + exact[n].abs())).all(), n


def test_a_value_with_a_broadcast_bound_takes_stores():
    y = cb.bounded(torch.ones(3, 4, dtype=torch.float64), torch.tensor(0.5, dtype=torch.float64))
    y[1] = cb.cast_rounding(torch.full((4,), 8.0, dtype=torch.float64), torch.bfloat16)
    assert torch.equal(y.bound[1], torch.full((4,), 8 * U_BF16, dtype=torch.float64)) and (y.bound[0] == 0.5).all()
