"""Antialiased resize (resize_linear / resize_cubic(v, antialias=True); lowering/emit/antialias.py): the interpreter
against F.interpolate(antialias=True), the host tiling's limits, and the emulator over both filters, both
align_corners, downsampling and upsampling per axis, unchanged axes, bands and a non-finite input value."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from dsl_snippets import tile_kernel

from ascend_dsl import interpreter, load_file, parse_text, printer
from lowering import lower
from npu_harness.tiling_probe import run_tiling

REPO = Path(__file__).resolve().parent.parent
HEAD = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], y: Tensor[f32, "N, C, OH, OW"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
'''
VARIANTS = [(call, align) for call in ("resize_linear", "resize_cubic") for align in (False, True)]


def _body(call: str, align: bool) -> str:
    return f"store(y[p], {call}(load(x[p]){', align_corners=True' if align else ''}, antialias=True))"


@pytest.mark.parametrize("call,align", VARIANTS)
def test_interpreter_is_f_interpolate_antialias(call, align):
    k = tile_kernel(HEAD, _body(call, align), "aa.adsl")
    x = torch.randn(2, 3, 17, 23, generator=torch.Generator().manual_seed(1))
    y = torch.zeros(2, 3, 5, 31)
    interpreter.run(k, {"x": x, "y": y}, num_cores=2, tile=1)
    mode = "bilinear" if call == "resize_linear" else "bicubic"
    assert torch.equal(y, torch.nn.functional.interpolate(x, size=(5, 31), mode=mode, align_corners=align,
                                                          antialias=True))
    again = parse_text(printer.kernel(k), "aa.adsl")[0].instantiate()  # the printed call parses back
    assert printer.kernel(again) == printer.kernel(k)


_FIELDS = ("blockLength", "bandRows", "inRows", "tapsW", "tapsH", "bufferNum")


@pytest.mark.parametrize("dims,expect", [
    # small planes: one band per plane; taps 2 * ceil(support) + 1 (17 -> 5: scale 3.4, 9 taps; 23 -> 7: 9)
    ("2 3 17 23 5 7", lambda b: b[0] == 6 and b[2] == 5 and b[4] == 9 and b[5] == 9 and b[6] == 2),
    # benchmark scale, 512 x 512 -> 37 x 32: bands of output rows with the input rows they read
    ("32 64 512 512 37 32", lambda b: b[0] == 48 and 0 < b[2] < 37 and b[3] < 512 and b[4] == 33),
    # upsampling: 3 taps (support 1)
    ("1 2 30 11 61 11", lambda b: b[4] == 3 and b[5] == 3),
    # downsampling by 32 needs 65 taps: TILING; an empty size is refused as PyTorch does
    ("1 1 8 4096 8 128", lambda b: b[0] == 0),
    ("1 1 8 3968 8 128", lambda b: b[0] == 1 and b[4] == 63),
    ("1 1 0 5 3 3", lambda b: b[0] == 0),
])
def test_host_tiling(dims, expect):
    adsl = REPO / "examples/resize/downsample_bilinear2d_antialias.adsl"
    project, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    symbols = dict(zip(project.manifest["symbols"], (int(v) for v in dims.split()), strict=True))
    t = run_tiling(project, "ascend910b1", symbols, {}, 48, _FIELDS)
    got = [t["blocks"], *(t[f] for f in _FIELDS)]
    assert expect(got), got


_TASK = '''import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return nn.functional.interpolate(x, size=({oh}, {ow}), mode="{mode}", align_corners={align}, antialias=True)


def get_inputs():
    x = torch.randn(1, 2, {h}, {w}, generator=torch.Generator().manual_seed(7))
    x[0, 1, 0, 0] = float("inf")  # columns whose filter does not reach it stay finite (the zero slot)
    return [x]


def get_init_inputs():
    return []
'''


@pytest.mark.slow
@pytest.mark.parametrize("call,align", VARIANTS)
@pytest.mark.parametrize("sizes", [(17, 23, 5, 7), (9, 40, 9, 13), (30, 11, 61, 11), (301, 257, 37, 200),
                                   (41, 9, 7, 1)])  # output width 1: PyTorch repeats the first output row
def test_every_variant_matches_pytorch_in_the_emulator(tmp_path, call, align, sizes):
    h, w, oh, ow = sizes
    (tmp_path / "k.adsl").write_text(HEAD + f"            {_body(call, align)}\n")
    mode = "bilinear" if call == "resize_linear" else "bicubic"
    (tmp_path / "t.py").write_text(_TASK.format(h=h, w=w, oh=oh, ow=ow, mode=mode, align=align))
    r = subprocess.run([str(Path(sys.executable).parent / "ascend-lower"), str(tmp_path / "k.adsl"), "--validate",
                        "sim", "--task", str(tmp_path / "t.py"), "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, cwd=REPO, timeout=900)
    assert "sim: PASS" in r.stdout + r.stderr, r.stdout + r.stderr
