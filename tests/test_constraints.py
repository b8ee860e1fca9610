"""Hardware constraints raised by lowering passes (check_constraints, plan_tiling), and the auto tile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ascend_dsl
import lowering
from ascend_dsl import DslError, ir
from lowering.pipeline import run_pipeline

ROOT = Path(__file__).resolve().parents[1]
GALLERY = sorted((ROOT / "examples").rglob("*.adsl"))


def _marker_line(text: str, mark: str = "MARK") -> int:
    hits = [i for i, line in enumerate(text.splitlines(), 1) if f"# {mark}" in line]
    assert len(hits) == 1, f"marker {mark!r} found on lines {hits}"
    return hits[0]


def _col(text: str, needle: str, mark: str = "MARK") -> int:
    return text.splitlines()[_marker_line(text, mark) - 1].index(needle) + 1


def _src(dt="f32", out=None, cores="AIV", size="auto", buffers="2", body=None) -> str:
    body = body or ["xt = load(x[t])", "store(y[t], xt * 2.0)"]
    return f'''@kernel
def k(x: Tensor[{dt}, "N"], y: Tensor[{out or dt}, "N"]):  # PARAMS
    for blk in split(N, cores={cores}):  # SPLIT
        for t in tile(blk, size={size}, buffers={buffers}):  # TILE
''' + "".join(f"            {line}\n" for line in body)


def _kernel(text: str, file: str = "cons.adsl") -> ir.Kernel:
    return ascend_dsl.parse_text(text, file=file)[0].instantiate()


def _lower_fails(text: str, target: str = "ascend910b1", file: str = "cons.adsl") -> DslError:
    k = _kernel(text, file)
    with pytest.raises(DslError) as ei:
        lowering.lower(k, target=target)
    return ei.value


def _at(d, text, mark, needle):
    assert (d.span.line, d.span.col) == (_marker_line(text, mark), _col(text, needle, mark)), d.render()


# ----------------------------------------------------------------------------- DTYPE-UNSUPPORTED


BF16_VIA_F32 = ["xt = cast(load(x[t]), f32)", "store(y[t], cast(xt * 2.0, bf16))"]


def test_bf16_tensors_rejected_on_310p():
    text = _src("bf16", body=BF16_VIA_F32)
    err = _lower_fails(text, "ascend310p")
    assert err.codes == ["DTYPE-UNSUPPORTED", "DTYPE-UNSUPPORTED"]
    x, y = err.diagnostics
    assert x.message == "bf16 is not supported on ascend310p"
    _at(x, text, "PARAMS", "x: Tensor")
    _at(y, text, "PARAMS", "y: Tensor")
    assert "bf16" not in x.hint and "f16" in x.hint


def test_bf16_via_f32_is_fine_on_910b():
    project, _ = lowering.lower(_kernel(_src("bf16", body=BF16_VIA_F32)), target="ascend910b1")
    assert project.manifest["max_tile"] > 0


def test_bf16_arithmetic_rejected_on_910b():
    text = _src("bf16", body=["xt = load(x[t])", "store(y[t], xt * 2.0)  # MARK"])
    err = _lower_fails(text)
    (d,) = err.diagnostics
    assert d.code == "DTYPE-UNSUPPORTED"
    assert "'mul' on bf16" in d.message
    _at(d, text, "MARK", "xt * 2.0")
    assert "cast(x, f32)" in d.hint


def test_bf16_comparison_rejected_on_910b():
    text = _src("bf16", "f32", body=["xt = load(x[t])", "xf = cast(xt, f32)",
                                     "store(y[t], select(xt > 0.0, xf, 0.0))  # MARK"])
    err = _lower_fails(text)
    assert err.codes == ["DTYPE-UNSUPPORTED"]
    _at(err.diagnostics[0], text, "MARK", "xt > 0.0")


# ----------------------------------------------------------------------------- CORE-COUNT


def test_core_count_above_target():
    text = _src(cores="64")
    (d,) = _lower_fails(text).diagnostics
    assert d.code == "CORE-COUNT"
    assert d.message == "cores=64 but ascend910b1 has 48 AIV cores"
    _at(d, text, "SPLIT", "for blk")
    assert "at most 48" in d.hint


def test_core_count_depends_on_target():
    text = _src(cores="48")
    lowering.lower(_kernel(text), target="ascend910b1")
    (d,) = _lower_fails(text, "ascend910b4").diagnostics
    assert d.code == "CORE-COUNT" and "has 40 AIV cores" in d.message
    (d,) = _lower_fails(_src(cores="9"), "ascend310p").diagnostics
    assert d.code == "CORE-COUNT" and "has 8 AIV cores" in d.message


# ----------------------------------------------------------------------------- TILE-ALIGN


def test_tile_size_not_block_aligned():
    text = _src(size="100")
    (d,) = _lower_fails(text).diagnostics
    assert d.code == "TILE-ALIGN"
    assert d.message == "tile size 100 is not a multiple of 8 elements"
    _at(d, text, "TILE", "for t")
    assert "e.g. 96" in d.hint and "size=auto" in d.hint


def test_tile_size_granule_depends_on_dtype_and_compares():
    lowering.lower(_kernel(_src(size="104")))  # f32: 8-element blocks
    (d,) = _lower_fails(_src("f16", size="104")).diagnostics
    assert d.code == "TILE-ALIGN" and "multiple of 16" in d.message
    cmp = ["xt = load(x[t])", "store(y[t], select(xt > 0.0, xt, 0.0))"]
    (d,) = _lower_fails(_src(size="128", body=cmp)).diagnostics
    assert d.code == "TILE-ALIGN" and "multiple of 256" in d.message
    lowering.lower(_kernel(_src(size="256", body=cmp)))


@pytest.mark.parametrize("op", ["tanh", "erf"])
def test_ops_expanded_with_a_comparison_need_whole_repeats(op):
    """tanh and erf are lowered with a comparison (a series near 0): their tiles are Compare's 256-element
    granule too (a tile of 8 read 64 elements past its buffer in the emulator: UB-OOB)."""
    body = ["xt = load(x[t])", f"store(y[t], {op}(xt))"]
    (d,) = _lower_fails(_src(size="128", body=body)).diagnostics
    assert d.code == "TILE-ALIGN" and "multiple of 256" in d.message
    lowering.lower(_kernel(_src(size="256", body=body)))


# ----------------------------------------------------------------------------- BUFFER-COUNT


@pytest.mark.parametrize("buffers", ["3", "0"])
def test_buffer_count_outside_range(buffers):
    text = _src(buffers=buffers)
    (d,) = _lower_fails(text).diagnostics
    assert d.code == "BUFFER-COUNT"
    assert d.message == f"buffers={buffers} is outside 1..2"
    _at(d, text, "TILE", "for t")


def test_single_buffering_is_allowed():
    _, ctx = lowering.lower(_kernel(_src(buffers="1")))
    assert ctx.target.name == "ascend910b1"


# ----------------------------------------------------------------------------- UB-CAPACITY


UB_BODY = ["xt = load(x[t])", "a = exp(xt)", "b = log(xt)", "store(y[t], a * b + a / b)"]


def test_ub_capacity_explicit_tile_too_large():
    text = _src(size="65536", body=UB_BODY)
    err = _lower_fails(text)
    (d,) = err.diagnostics
    assert d.code == "UB-CAPACITY"
    budget = lowering.get_target("ascend910b1").ub_budget
    assert f"ascend910b1 allows {budget} B" in d.message
    _at(d, text, "TILE", "for t")
    m = re.search(r"size <= (\d+)", d.hint)
    assert m and "size=auto" in d.hint
    suggested = int(m.group(1))
    assert suggested > 0 and suggested % 256 == 0
    assert d.notes and "xLocal" in d.notes[0] and "yLocal" in d.notes[0]
    assert "= note:" in err.render()
    # the suggestion is tight: it lowers, one granule more does not
    lowering.lower(_kernel(_src(size=str(suggested), body=UB_BODY)))
    (d2,) = _lower_fails(_src(size=str(suggested + 256), body=UB_BODY)).diagnostics
    assert d2.code == "UB-CAPACITY"
    # and it is what size=auto picks
    project, _ = lowering.lower(_kernel(_src(size="auto", body=UB_BODY)))
    assert project.manifest["max_tile"] == suggested


# ----------------------------------------------------------------------------- several errors together


def test_errors_are_collected_and_reported_together():
    text = _src(cores="64", size="100")
    err = _lower_fails(text, file="multi.adsl")
    assert err.codes == ["CORE-COUNT", "TILE-ALIGN"]
    _at(err.diagnostics[0], text, "SPLIT", "for blk")
    _at(err.diagnostics[1], text, "TILE", "for t")
    out = err.render()
    assert out.count("error[") == 2
    assert "\n\nerror[TILE-ALIGN]" in out
    assert out.count(" --> multi.adsl:") == 2


def test_three_different_constraint_errors_together():
    text = _src("bf16", cores="64", buffers="3")
    err = _lower_fails(text)
    assert sorted(err.codes) == ["BUFFER-COUNT", "CORE-COUNT", "DTYPE-UNSUPPORTED"]


def test_unknown_target():
    with pytest.raises(DslError) as ei:
        lowering.get_target("ascend999")
    (d,) = ei.value.diagnostics
    assert d.code == "TARGET" and "ascend910b1" in d.hint


# ----------------------------------------------------------------------------- auto tile (positive)


def _tile_loop(k: ir.Kernel) -> ir.TileLoop:
    return next(s for s in ir.walk(k.body) if isinstance(s, ir.TileLoop))


def _ub_bytes(buffers, tile: int) -> int:
    """The InitBuffer sizes the kernel asks for: a 32-byte block for a reduction's result or an accumulator's slot,
    two elements per 256-byte repeat for an accumulated tile's ReduceSum/Max/Min scratch, else the tile."""
    total = 0
    for b in buffers:
        if b.layout in (ir.Layout.BLOCK, ir.Layout.SLOTS):
            total += b.num * 32
            continue
        elems = 2 * -(-tile * b.bits // (8 * 256)) if b.layout is ir.Layout.REPEATS else tile
        raw = -(-elems * b.bits // 8)
        total += b.num * (-(-raw // 32) * 32)
    return total


def _gallery_cases(flat_only: bool = True):
    """Gallery kernels whose tile length is planned at compile time (flat tiles; row tiles are sized
    by the host from the runtime row length and are checked in tests/test_rows.py)."""
    for path in GALLERY:
        for src in ascend_dsl.load_file(path):
            k = src.instantiate()
            if flat_only and (ir.cube_loop(k) is not None  # MIX kernels: tests/test_cube.py
                              or ir.conv_loop(k) is not None  # CONV kernels (no vector tile): tests/test_conv.py
                              or any(t.kind is not ir.LoopKind.FLAT for s in k.phases for t in s.body)):
                continue
            for variant in src.dtype_variants:
                tag = "-".join(str(v) for v in variant.values())
                yield pytest.param(src, variant, id=f"{path.stem}-{tag}")


@pytest.mark.parametrize("src,variant", list(_gallery_cases()))
def test_auto_tile_fits_ub_on_every_target(src, variant):
    k = src.instantiate(variant)
    for name, target in lowering.all_targets().items():
        if any(p.dtype not in target.dtypes for p in k.params):  # a located DTYPE-UNSUPPORTED, not a tile
            with pytest.raises(DslError, match="DTYPE-UNSUPPORTED"):
                lowering.lower(k, target=name)
            continue
        project, _ = lowering.lower(k, target=name)
        max_tile = project.manifest["max_tile"]
        assert max_tile > 0 and max_tile % 256 == 0, (name, max_tile)
        lowered = run_pipeline(k, lowering.PassContext(target))
        tl = _tile_loop(lowered)
        assert tl.max_tile == max_tile
        assert _ub_bytes(tl.buffers_decl, max_tile) <= target.ub_budget, name
        assert _ub_bytes(tl.buffers_decl, max_tile + 256) > target.ub_budget, name  # largest such tile
        every_phase = [t for split in lowered.phases for t in split.body]  # kernels with several split loops
        assert len(project.manifest["buffers"]) == sum(len(t.buffers_decl) for t in every_phase)
