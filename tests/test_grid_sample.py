"""grid_sample (ascend_dsl/parser_grid.py, lowering/emit/grid_sample.py): located errors, the interpreter against
F.grid_sample, the host tiling's limits, and every mode / padding / align_corners in the emulator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from dsl_snippets import tile_error, tile_kernel

from ascend_dsl import DslError, interpreter, load_file, parse_text, printer
from lowering import lower
from npu_harness.tiling_probe import run_tiling

REPO = Path(__file__).resolve().parent.parent
F = torch.nn.functional

HEAD = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], grid: Tensor[f32, "N, OH, OW, 2"], y: Tensor[f32, "N, C, OH, OW"],
      h: Tensor[f16, "N, C, H, W"], gh: Tensor[f16, "N, OH, OW, 2"], yh: Tensor[f16, "N, C, OH, OW"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
'''
HEAD_SIM = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], grid: Tensor[f32, "N, OH, OW, 2"], y: Tensor[f32, "N, C, OH, OW"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
'''
VARIANTS = [(m, pm, ac) for m in ("bilinear", "nearest") for pm in ("zeros", "border") for ac in (False, True)]


def _call(mode: str, padding: str, align: bool) -> str:
    return f'grid_sample(load(x[p]), grid, mode="{mode}", padding_mode="{padding}", align_corners={align})'


@pytest.mark.parametrize("body,code,msg", [
    ("store(y[p], grid_sample(load(x[p])))", "ARGS", "grid_sample takes a loaded plane, the grid tensor"),
    ("store(y[p], grid_sample(load(x[p]), grid, interpolation=\"nearest\"))", "ARGS", "optionally mode="),
    ("store(y[p], grid_sample(load(x[p]), grid, mode=\"linear\"))", "ARGS", "mode= takes a string, one of"),
    ("store(y[p], grid_sample(load(x[p]), grid, mode=1))", "ARGS", "mode= takes a string"),
    ("store(y[p], grid_sample(load(x[p]), grid, mode=\"bicubic\"))", "UNSUPPORTED", "mode='bicubic' is not lowered"),
    ("store(y[p], grid_sample(load(x[p]), grid, padding_mode=\"reflection\"))", "UNSUPPORTED",
     "padding_mode='reflection' is not lowered"),
    ("store(y[p], grid_sample(load(x[p]), grid, align_corners=\"yes\"))", "ARGS", "align_corners= takes True or False"),
    ("store(y[p], grid_sample(load(x[p]), load(x[p])))", "TYPE", "grid is a tensor parameter named as is"),
    ("store(y[p], grid_sample(load(x[p]), gird))", "UNDEFINED-NAME", "gird"),
    ("store(yh[p], grid_sample(load(h[p]), gh))", "DTYPE-UNSUPPORTED", "f32 planes and grids; got f16"),
    ("store(y[p], grid_sample(load(x[p]), gh))", "DTYPE-UNSUPPORTED", "got f16"),
    ("t = grid_sample(load(x[p]), grid)\nstore(y[p], t)", "UNSUPPORTED", "a resized plane is stored directly"),
    ("store(y[p], grid_sample(load(x[p]), grid) * 2.0)", "UNSUPPORTED", "resized planes are only stored"),
    ("store(y[p], resize_linear(load(x[p]), align_corners=\"True\"))", "ARGS", "expected True or False"),
])
def test_grid_sample_errors_are_located(body, code, msg):
    e = tile_error(HEAD, body, "gs.adsl")
    d = e.diagnostics[0]
    assert d.code == code and msg in d.message, e.render()
    assert d.span.file == "gs.adsl" and d.span.line == 6, e.render()


def test_grid_sample_of_a_volume_is_unsupported():
    head = '''@kernel
def k(x: Tensor[f32, "N, C, D, H, W"], grid: Tensor[f32, "N, OD, OH, OW, 3"], y: Tensor[f32, "N, C, OD, OH, OW"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
'''
    e = tile_error(head, "store(y[p], grid_sample(load(x[p]), grid))", "gs.adsl")
    assert e.diagnostics[0].code == "UNSUPPORTED" and "samples 2 spatial dims" in e.diagnostics[0].message


@pytest.mark.parametrize("grid_shape", ["N, OW, OH, 2", "N, OH, OW, 3", "C, OH, OW, 2"])
def test_a_grid_of_the_wrong_shape_is_a_located_shape_error(grid_shape):
    src = HEAD.replace('"N, OH, OW, 2"]', f'"{grid_shape}"]', 1) + f"            store(y[p], {_call('bilinear', 'zeros', False)})\n"
    with pytest.raises(DslError) as e:
        lower(parse_text(src, "gs.adsl")[0].instantiate(), "ascend910b1", "gs.adsl")
    d = e.value.diagnostics[0]
    assert d.code == "SHAPE" and "must be [N, OH, OW, 2]" in d.message and d.span.line == 6, e.value.render()


@pytest.mark.parametrize("mode,padding,align", VARIANTS)
def test_interpreter_is_f_grid_sample(mode, padding, align):
    k = tile_kernel(HEAD, f"store(y[p], {_call(mode, padding, align)})", "gs.adsl")
    g = torch.Generator().manual_seed(3)
    x, grid = torch.randn(2, 3, 7, 9, generator=g), torch.rand(2, 5, 4, 2, generator=g) * 2.4 - 1.2
    y = torch.zeros(2, 3, 5, 4)
    interpreter.run(k, {"x": x, "grid": grid, "y": y, "h": x.half(), "gh": grid.half(), "yh": y.half()},
                    num_cores=2, tile=1)
    assert torch.equal(y, F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=align))
    again = parse_text(printer.kernel(k), "gs.adsl")[0].instantiate()  # the printed call parses back
    assert printer.kernel(again) == printer.kernel(k)


_FIELDS = ("blockLength", "tileLength", "chunk", "bufferNum")


@pytest.mark.parametrize("example,dims,expect", [
    # small planes: several per tile (at most a batch's), chunks of all 65 grid points rounded up to 64s
    ("grid_sample_bilinear", "2 3 7 9 5 13", lambda b: b[0] == 6 and b[2] == 1 and b[3] == 128 and b[4] == 2),
    ("grid_sample_bilinear", "4 32 16 16 32 32", lambda b: b[0] == 43 and b[2] == 3 and b[3] == 1024),
    # benchmark scale (SCALE_LIMITED): 128 x 128 planes, one per tile, double-buffered
    ("grid_sample_bilinear", "32 64 128 128 128 128", lambda b: b[0] == 48 and b[2] == 1 and b[4] == 2),
    ("spatial_transformer_sampler", "32 64 128 128 128 128", lambda b: b[0] == 48 and b[2] == 1),
    # 200 x 200 only single-buffered with a small chunk; 512 x 512 does not fit (TILING); empty output: no work
    ("grid_sample_bilinear", "1 2 200 200 8 8", lambda b: b[0] == 2 and b[4] == 1 and b[3] < 512),
    ("grid_sample_bilinear", "32 64 512 512 512 512", lambda b: b[0] == 0),
    ("grid_sample_bilinear", "2 3 7 9 0 13", lambda b: b[0] == 1 and b[1] == 0),
])
def test_host_tiling(example, dims, expect):
    adsl = REPO / f"examples/resize/{example}.adsl"
    project, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    symbols = dict(zip(project.manifest["symbols"], (int(v) for v in dims.split()), strict=True))
    t = run_tiling(project, "ascend910b1", symbols, {}, 48, _FIELDS)
    got = [t["blocks"], *(t[f] for f in _FIELDS)]
    assert expect(got), got


_TASK = '''import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, grid):
        return nn.functional.grid_sample(x, grid, mode="{mode}", padding_mode="{padding}", align_corners={align})


def get_inputs():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 5, 14, 19, generator=g)
    x[:, :, 0, 3] = float("inf")  # out-of-range taps next to it read the zero slot, not inf * 0
    # half the points an identity affine grid halving the size (source positions on .5 ties), half random, some
    # far outside [-1, 1]
    tie = nn.functional.affine_grid(torch.eye(2, 3).expand(2, 2, 3), [2, 5, 7, 9], align_corners={align})
    rnd = torch.rand(2, 7, 9, 2, generator=g) * 3 - 1.5
    rnd[0, 0, 0] = torch.tensor([1e9, -3e9])
    return [x, torch.cat([tie, rnd], 1)]


def get_init_inputs():
    return []
'''


@pytest.mark.slow
@pytest.mark.parametrize("mode,padding,align", VARIANTS)
def test_every_variant_matches_pytorch_in_the_emulator(tmp_path, mode, padding, align):
    src = HEAD_SIM + f"            store(y[p], {_call(mode, padding, align)})\n"
    (tmp_path / "k.adsl").write_text(src)
    (tmp_path / "t.py").write_text(_TASK.format(mode=mode, padding=padding, align=align))
    r = subprocess.run([str(Path(sys.executable).parent / "ascend-lower"), str(tmp_path / "k.adsl"), "--validate", "sim",
                        "--task", str(tmp_path / "t.py"), "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, cwd=REPO, timeout=900)
    assert "sim: PASS" in r.stdout + r.stderr, r.stdout + r.stderr
