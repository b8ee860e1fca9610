"""Six hand-written operator-project kernels (op_kernel/*.cpp + op_host/*_tiling.h, in the style of
published benchmark exemplars) run unmodified in `ascend-sim run` and match numpy: tiling-data macros,
GET_TILING_DATA, DTYPE_<NAME>, TILING_KEY_IS + a launch tiling key, ASSERT, level-0 mask / repeat APIs,
Counter mode, WholeReduceSum / BlockReduceSum, SyncAll over a workspace, DataCopyPad, float Matmul with a
nested TCubeTiling and SetLocalWorkspace. Plus the op-project faults: a tiling key no branch handles and a
failed ASSERT."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from npu_harness.sim import runner

OPPROJ = Path(__file__).resolve().parent / "kernels" / "opproj"


def u32(name: str, value: int) -> dict:
    return {"name": name, "ctype": "uint32_t", "value": value}


def tiling(tname: str, header: str, fields: list[dict]) -> dict:
    return {"name": "tiling", "kind": "tiling", "type": tname, "pass": "gm", "header": str(OPPROJ / header), "fields": fields}


def launch(tmp: Path, entry: str, blocks: int, args: list[dict], **extra) -> Path:
    spec = {"entry": entry, "blocks": blocks, "args": args, **extra}
    path = tmp / "launch.json"
    path.write_text(json.dumps(spec))
    return path


def npy(tmp: Path, name: str, arr: np.ndarray) -> dict:
    np.save(tmp / f"{name}.npy", arr)
    return {"name": name, "kind": "input", "npy": f"{name}.npy"}


def run(tmp: Path, kernel: str, launch_path: Path, capsys, *extra: str) -> tuple[int, str]:
    rc = runner.main(["run", str(OPPROJ / kernel), "--launch", str(launch_path), "-o", str(tmp / "out"), *extra])
    return rc, capsys.readouterr().err


def test_add_custom(tmp_path, capsys):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(8 * 2048).astype(np.float16)
    y = rng.standard_normal(8 * 2048).astype(np.float16)
    args = [npy(tmp_path, "x", x), npy(tmp_path, "y", y),
            {"name": "z", "kind": "output", "dtype": "float16", "shape": [8 * 2048]},
            {"name": "workspace", "kind": "workspace", "bytes": 0},
            tiling("AddCustomTilingData", "add_custom_tiling.h", [u32("totalLength", 8 * 2048), u32("tileNum", 8)])]
    rc, err = run(tmp_path, "add_custom.cpp", launch(tmp_path, "add_custom", 8, args, tiling_key=1), capsys)
    assert rc == 0, err
    assert np.array_equal(np.load(tmp_path / "out" / "z.npy"), x + y)


def test_add_custom_unhandled_tiling_key(tmp_path, capsys):
    x = np.ones(4 * 512, np.float16)
    args = [npy(tmp_path, "x", x), npy(tmp_path, "y", x), {"name": "z", "kind": "output", "dtype": "float16", "shape": [4 * 512]},
            {"name": "workspace", "kind": "workspace", "bytes": 0},
            tiling("AddCustomTilingData", "add_custom_tiling.h", [u32("totalLength", 4 * 512), u32("tileNum", 2)])]
    rc, err = run(tmp_path, "add_custom.cpp", launch(tmp_path, "add_custom", 4, args, tiling_key=7), capsys)
    assert rc == 1 and "error[TILING-KEY]" in err and "tiling key 7" in err, err


def _npu_tiling_variant(tmp: Path) -> Path:
    """add_custom.cpp in the dialect whose kernels include the build-generated tiling-data header."""
    text = (OPPROJ / "add_custom.cpp").read_text()
    text = text.replace('#include "kernel_operator.h"\n',
                        '#include "kernel_operator.h"\n#define __NPU_TILING__\n#include "add_custom_tiling_data.h"\n', 1)
    kernel = tmp / "src" / "add_custom.cpp"
    kernel.parent.mkdir()
    kernel.write_text(text)
    return kernel


def test_generated_tiling_data_header_is_provided(tmp_path, capsys):
    x = np.arange(4 * 512, dtype=np.float16)
    args = [npy(tmp_path, "x", x), npy(tmp_path, "y", x), {"name": "z", "kind": "output", "dtype": "float16", "shape": [4 * 512]},
            {"name": "workspace", "kind": "workspace", "bytes": 0},
            tiling("AddCustomTilingData", "add_custom_tiling.h", [u32("totalLength", 4 * 512), u32("tileNum", 2)])]
    kernel = _npu_tiling_variant(tmp_path)
    rc = runner.main(["run", str(kernel), "--launch", str(launch(tmp_path, "add_custom", 4, args, tiling_key=1)),
                      "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert np.array_equal(np.load(tmp_path / "out" / "z.npy"), x + x)


def test_tiling_data_header_without_a_tiling_header_stays_a_compile_error(tmp_path, capsys):
    x = np.arange(4 * 512, dtype=np.float16)
    args = [npy(tmp_path, "x", x), npy(tmp_path, "y", x), {"name": "z", "kind": "output", "dtype": "float16", "shape": [4 * 512]},
            {"name": "workspace", "kind": "workspace", "bytes": 0}]
    kernel = _npu_tiling_variant(tmp_path)
    rc = runner.main(["run", str(kernel), "--launch", str(launch(tmp_path, "add_custom", 4, args, tiling_key=1)),
                      "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc != 0 and "error[COMPILE]" in err and "add_custom_tiling_data.h" in err, err


def test_add_custom_assert(tmp_path, capsys):
    x = np.ones(4 * 512, np.float16)
    args = [npy(tmp_path, "x", x), npy(tmp_path, "y", x), {"name": "z", "kind": "output", "dtype": "float16", "shape": [4 * 512]},
            {"name": "workspace", "kind": "workspace", "bytes": 0},
            tiling("AddCustomTilingData", "add_custom_tiling.h", [u32("totalLength", 4 * 512), u32("tileNum", 0)])]
    rc, err = run(tmp_path, "add_custom.cpp", launch(tmp_path, "add_custom", 4, args, tiling_key=1), capsys)
    assert rc == 1 and "error[ASSERT]: ASSERT(tileNum != 0 && \"tile num can not be zero!\") failed" in err, err


def test_leaky_relu_custom(tmp_path, capsys):
    x = np.random.default_rng(1).standard_normal(4 * 4096).astype(np.float32)
    args = [npy(tmp_path, "x", x), {"name": "y", "kind": "output", "dtype": "float32", "shape": [4 * 4096]},
            {"name": "workspace", "kind": "workspace", "bytes": 0},
            tiling("LeakyReluCustomTilingData", "leaky_relu_custom_tiling.h",
                   [u32("totalLength", 4 * 4096), u32("tileNum", 4), {"name": "negativeSlope", "ctype": "float", "value": 0.01}])]
    rc, err = run(tmp_path, "leaky_relu_custom.cpp", launch(tmp_path, "leaky_relu_custom", 4, args), capsys)
    assert rc == 0, err
    y = np.load(tmp_path / "out" / "y.npy")
    assert np.array_equal(y, np.where(x >= 0, x, x * np.float32(0.01)))


def test_layer_norm_custom(tmp_path, capsys):
    rng = np.random.default_rng(2)
    rows, cols = 20, 256
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 3 + 1
    g = rng.standard_normal(cols).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    args = [npy(tmp_path, "x", x), npy(tmp_path, "gamma", g), npy(tmp_path, "beta", b),
            {"name": "y", "kind": "output", "dtype": "float32", "shape": [rows, cols]},
            {"name": "workspace", "kind": "workspace", "bytes": 0},
            tiling("LayerNormCustomTilingData", "layer_norm_custom_tiling.h",
                   [u32("rowNum", rows), u32("colNum", cols), u32("rowsPerCore", 3),
                    {"name": "epsilon", "ctype": "float", "value": 1e-5}])]
    rc, err = run(tmp_path, "layer_norm_custom.cpp", launch(tmp_path, "layer_norm_custom", 7, args), capsys)
    assert rc == 0, err
    xd = x.astype(np.float64)
    ref = (xd - xd.mean(1, keepdims=True)) / np.sqrt(xd.var(1, keepdims=True) + 1e-5) * g + b
    assert np.allclose(np.load(tmp_path / "out" / "y.npy"), ref, rtol=1e-4, atol=1e-4)


def test_mse_loss_custom(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n, blocks = 6 * 2048, 6
    p = rng.standard_normal(n).astype(np.float32)
    t = rng.standard_normal(n).astype(np.float32)
    args = [npy(tmp_path, "predict", p), npy(tmp_path, "label", t),
            {"name": "loss", "kind": "output", "dtype": "float32", "shape": [1]},
            {"name": "workspace", "kind": "workspace", "bytes": blocks * 32},
            tiling("MseLossCustomTilingData", "mse_loss_custom_tiling.h",
                   [u32("totalLength", n), u32("blockLength", n // blocks), u32("tileLength", 512)])]
    rc, err = run(tmp_path, "mse_loss_custom.cpp", launch(tmp_path, "mse_loss_custom", blocks, args), capsys)
    assert rc == 0, err
    ref = np.mean((p.astype(np.float64) - t) ** 2)
    assert np.allclose(np.load(tmp_path / "out" / "loss.npy"), ref, rtol=1e-5)


@pytest.mark.parametrize("key", [1, 2])
def test_reduce_sum_custom(tmp_path, capsys, key):
    rng = np.random.default_rng(4)
    rows, cols = 10, 1024
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    args = [npy(tmp_path, "x", x), {"name": "y", "kind": "output", "dtype": "float32", "shape": [rows]},
            {"name": "workspace", "kind": "workspace", "bytes": 0},
            tiling("ReduceSumCustomTilingData", "reduce_sum_custom_tiling.h",
                   [u32("rowNum", rows), u32("colNum", cols), u32("rowsPerCore", 3),
                    {"name": "reserved", "ctype": "uint32_t", "value": [0, 0]}])]
    rc, err = run(tmp_path, "reduce_sum_custom.cpp", launch(tmp_path, "reduce_sum_custom", 4, args, tiling_key=key), capsys)
    assert rc == 0, err
    assert np.allclose(np.load(tmp_path / "out" / "y.npy"), x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)


def test_matmul_add_custom(tmp_path, capsys):
    rng = np.random.default_rng(5)
    M, N, K = 128, 128, 256
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    d = rng.standard_normal((M, N)).astype(np.float32)
    cube = [("usedCoreNum", 4), ("M", M), ("N", N), ("Ka", K), ("Kb", K), ("singleCoreM", 64), ("singleCoreN", 64),
            ("singleCoreK", K), ("baseM", 64), ("baseN", 64), ("baseK", 32), ("depthA1", 1), ("depthB1", 1), ("stepM", 1),
            ("stepN", 1), ("stepKa", 1), ("stepKb", 1), ("isBias", 0), ("iterateOrder", 0), ("dbL0A", 1), ("dbL0B", 1),
            ("dbL0C", 1)]
    fields = [{"name": "cubeTilingData", "fields": [{"name": k, "ctype": "int32_t", "value": v} for k, v in cube]},
              u32("localWorkspaceBytes", 1024)]
    args = [npy(tmp_path, "a", a), npy(tmp_path, "b", b), npy(tmp_path, "d", d),
            {"name": "c", "kind": "output", "dtype": "float32", "shape": [M, N]},
            {"name": "workspace", "kind": "workspace", "bytes": 1 << 20},
            tiling("MatmulAddCustomTilingData", "matmul_add_custom_tiling.h", fields)]
    rc, err = run(tmp_path, "matmul_add_custom.cpp", launch(tmp_path, "matmul_add_custom", 2, args, kernel_type="mix"), capsys)
    assert rc == 0, err
    ref = a.astype(np.float64) @ b + d
    assert np.allclose(np.load(tmp_path / "out" / "c.npy"), ref, rtol=1e-4, atol=1e-3)
