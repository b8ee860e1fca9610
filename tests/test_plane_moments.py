"""The two-loop plane statistics pattern (lowering/passes/plane_moments.py): the gallery's plane norms match, and
each near miss (a centre that differs between a slot's rows, another value squared, an extra statement, f16
deviations, different splits or slots) is refused with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_dsl import load_file, parse_text
from lowering.context import PassContext
from lowering.passes import plane_moments
from lowering.pipeline import PIPELINE
from lowering.targets import get_target

REPO = Path(__file__).resolve().parent.parent


def _at_plan(kernel):
    """The kernel as plan_chunks sees it (three-address, scalars hoisted)."""
    ctx = PassContext(get_target("ascend910b1"), "plane.adsl", None, allow_conv5hd=True)
    for p in PIPELINE:
        kernel = p.run(kernel, ctx)
        if p.name == "hoist_scalars":
            return kernel
    raise AssertionError("no hoist_scalars pass")


@pytest.mark.parametrize("name", ["group_norm_module", "group_norm", "batch_norm_train"])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_gallery_plane_norms_match(name, dtype):
    k = _at_plan(load_file(REPO / "examples" / "normalization" / f"{name}.adsl")[0].instantiate({"T": dtype}))
    found = plane_moments.find(k)
    assert [(m.total, m.squares, m.first) for m in found] == [("s", "ss", 0)]
    assert plane_moments.miss(k, 1) is not None  # the normalising loop is no statistics loop


BN = """from ascend_dsl import kernel, Tensor, f32, f16


@kernel
def bn(x: Tensor[f32, "N, C, H, W"], w: Tensor[f32, "C"], y: Tensor[f32, "N, C, H, W"]):
    s = zeros(C)
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            s[r] += sum(load(x[r, :]), axis=1){extra}
    ss = zeros({ss_slots})
    for blk in split(N * C, cores={cores}):
        for r in tile(blk, size=auto, buffers=2):
            d = {dev}
            ss[r] += sum({sq}, axis=1)
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], (load(x[r, :]) - s[r] / (N * H * W)) * rsqrt(ss[r] / (N * H * W) + 1e-5))
"""

GOOD = {"extra": "", "ss_slots": "C", "cores": "AIV", "dev": "load(x[r, :]) - s[r] / (N * H * W)", "sq": "d * d"}


def _bn(**changes):
    return _at_plan(parse_text(BN.format(**{**GOOD, **changes}), "plane.adsl")[0].instantiate())


@pytest.mark.parametrize("changes", [{}, {"sq": "d ** 2"}, {"dev": "s[r] / (N * H * W) - load(x[r, :])"},
                                     {"dev": "load(x[r, :]) - s[r] * 0.5"}])
def test_written_forms_match(changes):
    assert [m.total for m in plane_moments.find(_bn(**changes))] == ["s"]


@pytest.mark.parametrize("changes, reason", [
    ({"dev": "load(x[r, :]) - s[r] / (N * H * W) - load(w[r])"}, "per-slot centre"),  # differs between rows
    ({"dev": "load(x[r, :]) * 2.0 - s[r] / (N * H * W)"}, "per-slot centre"),  # another value squared
    ({"sq": "d * load(x[r, :])"}, "per-slot centre"),  # not a square
    ({"dev": "load(x[r, :]) - load(w[r])"}, "per-slot centre"),  # the centre does not read s
    ({"extra": "\n            store(y[r, :], load(x[r, :]))"}, "more than sum"),
    ({"ss_slots": "N * C"}, "different slots"),
    ({"cores": "8"}, "different extents or cores"),
])
def test_near_misses_keep_two_passes(changes, reason):
    k = _bn(**changes)
    assert plane_moments.find(k) == []
    assert reason in plane_moments.miss(k, 0)


def test_f16_deviations_are_not_matched():
    text = BN.replace("Tensor[f32, \"N, C, H, W\"], w", "Tensor[f16, \"N, C, H, W\"], w").replace(
        "sum(load(x[r, :]), axis=1)", "sum(cast(load(x[r, :]), f32), axis=1)")
    text = text.replace("y: Tensor[f32", "y: Tensor[f16").replace(
        "store(y[r, :], (load(x[r, :])", "store(y[r, :], cast((cast(load(x[r, :]), f32)").replace(
        "+ 1e-5))", "+ 1e-5), f16))")
    k = _at_plan(parse_text(text.format(**{**GOOD, "dev": "load(x[r, :]) - cast(s[r] / (N * H * W), f16)",
                                             "sq": "cast(d * d, f32)"}),
                            "plane.adsl")[0].instantiate())
    assert plane_moments.find(k) == []
    assert "per-slot centre" in plane_moments.miss(k, 0)  # the deviations are f16 differences
