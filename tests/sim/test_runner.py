"""`ascend-sim run` (npu_harness/sim/runner.py) on a hand-written kernel and on an emitted gallery kernel."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from npu_harness.sim import runner

ROOT = Path(__file__).resolve().parents[2]
KDIR = Path(__file__).resolve().parent / "kernels" / "runner"
KERNEL = KDIR / "scaled_add.cpp"


def tiling(total: int, tile: int, alpha: float, **kw) -> dict:
    return {"name": "tiling", "kind": "tiling", "type": "ScaledAddTiling", "header": str(KDIR / "scaled_add_tiling.h"),
            "fields": [{"name": "totalLength", "ctype": "uint32_t", "value": total},
                       {"name": "tileLength", "ctype": "uint32_t", "value": tile},
                       {"name": "alpha", "ctype": "float", "value": alpha}], **kw}


def write_launch(tmp: Path, spec: dict, name: str = "launch.json") -> Path:
    p = tmp / name
    p.write_text(json.dumps(spec))
    return p


@pytest.fixture()
def xy(tmp_path: Path) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    return x, y


def add_spec(blocks: int = 4, tile: int = 64) -> dict:
    return {"entry": "scaled_add", "blocks": blocks, "kernel_type": "vector",
            "args": [{"name": "x", "kind": "input", "npy": "x.npy"}, {"name": "y", "kind": "input", "npy": "y.npy"},
                     {"name": "z", "kind": "output", "dtype": "float32", "shape": [1000]}, tiling(1000, tile, 0.5)]}


def test_hand_written_kernel(tmp_path, xy, capsys):
    x, y = xy
    out = tmp_path / "out"
    rj = tmp_path / "report.json"
    rc = runner.main(["run", str(KERNEL), "--launch", str(write_launch(tmp_path, add_spec())), "-o", str(out),
                      "--report", "--report-json", str(rj)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    z = np.load(out / "z.npy")
    assert np.array_equal(z, (y * np.float32(0.5)) + x)
    assert "ESTIMATE" in captured.out
    rep = json.loads(rj.read_text())
    assert rep["estimate"]["gm_read_bytes"] == 8000 and rep["estimate"]["gm_write_bytes"] == 4000
    assert len(rep["counters"]["blocks"]) == 4


def test_tiling_in_gm_and_atomic_add(tmp_path, xy, capsys):
    x, _ = xy
    spec = {"entry": "row_sum_atomic", "blocks": 5,
            "args": [{"name": "x", "kind": "input", "npy": "x.npy"},
                     {"name": "out", "kind": "output", "dtype": "float32", "shape": [8], "init": "zeros"},
                     tiling(1000, 64, 0.0, **{"pass": "gm"})]}
    rc = runner.main(["run", str(KERNEL), "--launch", str(write_launch(tmp_path, spec)), "-o", str(tmp_path)])
    assert rc == 0, capsys.readouterr().err
    got = np.load(tmp_path / "out.npy")
    assert np.allclose(got, x.reshape(-1, 8).sum(0), rtol=1e-5, atol=1e-5)


def test_fault_exits_1(tmp_path, xy, capsys):
    rc = runner.main(["run", str(KERNEL), "--launch", str(write_launch(tmp_path, add_spec(tile=20000))),
                      "-o", str(tmp_path)])  # 3 queues x 2 x 80 KB > 192 KB UB
    err = capsys.readouterr().err
    assert rc == 1
    assert "error[UB-OVERFLOW]:" in err and "scaled_add.cpp" in err


def test_block_dim_follows_kernel_type(tmp_path, xy, capsys):
    spec = add_spec(blocks=40)
    spec["kernel_type"] = "cube"  # cube / mix kernels: at most the AIC count (24 on 910B1)
    rc = runner.main(["run", str(KERNEL), "--launch", str(write_launch(tmp_path, spec)), "-o", str(tmp_path)])
    assert rc == 1 and "error[BLOCK-DIM]" in capsys.readouterr().err


@pytest.mark.parametrize("mutate,needle", [
    (lambda s: s["args"][0].update(npy="missing.npy"), "cannot load"),
    (lambda s: s.update(blocks=0), "blocks"),
    (lambda s: s["args"][2].update(dtype="complex64"), "dtype"),
    (lambda s: s["args"][3]["fields"][0].update(value=-1), "does not fit"),
    (lambda s: s.update(kernel_type="gpu"), "kernel_type"),
    (lambda s: s["args"][3]["fields"][1].update(ctype="uint64_t"), "do not match"),  # struct says uint32_t
    (lambda s: s["args"][3]["fields"].append({"name": "nope", "ctype": "int32_t", "value": 1}), "does not match"),
    (lambda s: s.update(entry="no_such_kernel"), "does not match"),
    (lambda s: s["args"].pop(1), "does not match"),  # argument list shorter than the entry's
])
def test_bad_launch_exits_2(tmp_path, xy, capsys, mutate, needle):
    spec = add_spec()
    mutate(spec)
    rc = runner.main(["run", str(KERNEL), "--launch", str(write_launch(tmp_path, spec)), "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "error[LAUNCH]" in err and needle in err


def test_kernel_compile_error_exits_1(tmp_path, xy, capsys):
    bad = tmp_path / "bad_kernel.cpp"
    bad.write_text(KERNEL.read_text().replace("Add(z, z, x, n);", "Add(z, z, x, n, undefined_thing);"))
    (tmp_path / "scaled_add_tiling.h").write_text((KDIR / "scaled_add_tiling.h").read_text())
    rc = runner.main(["run", str(bad), "--launch", str(write_launch(tmp_path, add_spec())), "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 1 and "error[COMPILE]" in err and "undefined_thing" in err


def test_invalid_json_exits_2(tmp_path, capsys):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    assert runner.main(["run", str(KERNEL), "--launch", str(p)]) == 2


def test_emitted_gallery_kernel(tmp_path, capsys):
    from ascend_dsl import load_file
    from lowering.context import PassContext
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target

    src = load_file(ROOT / "examples" / "activation" / "gelu.adsl")[0]
    kernel = src.instantiate({})
    ctx = PassContext(get_target("ascend910b1"), "gelu.adsl")
    run_pipeline(kernel, ctx)
    project = ctx.project
    kdir = tmp_path / "gelu"
    kdir.mkdir()
    for name, text in project.files.items():
        (kdir / name).parent.mkdir(parents=True, exist_ok=True)
        (kdir / name).write_text(text)
    n, blocks = 10000, 3
    x = np.linspace(-4, 4, n, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    block_len = -(-n // blocks)
    block_len = -(-block_len // 8) * 8
    spec = {"entry": "gelu_custom", "blocks": blocks, "kernel_type": "vector",
            "args": [{"name": "x", "kind": "input", "npy": "x.npy"},
                     {"name": "y", "kind": "output", "dtype": "float32", "shape": [n]},
                     {"name": "tiling", "kind": "tiling", "type": "GeluTilingData",
                      "fields": [{"name": "N", "ctype": "uint64_t", "value": n},
                                 {"name": "blockLength", "ctype": "uint64_t", "value": block_len},
                                 {"name": "tileLength", "ctype": "uint32_t", "value": 1024}]}]}
    rc = runner.main(["run", str(kdir / "gelu_kernel.cpp"), "--launch", str(write_launch(tmp_path, spec)),
                      "-o", str(tmp_path / "out")])
    assert rc == 0, capsys.readouterr().err
    y = np.load(tmp_path / "out" / "y.npy")
    want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    assert np.abs(y - want).max() < 1e-4


def test_mix_kernel_with_matmul(tmp_path, capsys):
    """kernel_type "mix": 2 launched blocks run 4 AIV, each driving the Matmul API (IterateAll)."""
    rng = np.random.default_rng(1)
    m, k, n = 70, 40, 33
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    fields = {"usedCoreNum": 4, "M": m, "N": n, "Ka": k, "Kb": k, "singleCoreM": 18, "singleCoreN": n, "singleCoreK": k,
              "baseM": 16, "baseN": 32, "baseK": 32, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1,
              "stepKb": 1, "dbL0A": 2, "dbL0B": 2, "dbL0C": 1}
    spec = {"entry": "mix_matmul", "blocks": 2, "kernel_type": "mix",
            "args": [{"name": "a", "kind": "input", "npy": "a.npy"}, {"name": "b", "kind": "input", "npy": "b.npy"},
                     {"name": "c", "kind": "output", "dtype": "float32", "shape": [m, n]},
                     {"name": "ws", "kind": "workspace", "bytes": 1024},
                     {"name": "tiling", "kind": "tiling", "type": "AscendC::tiling::TCubeTiling",
                      "fields": [{"name": f, "ctype": "int32_t", "value": v} for f, v in fields.items()]}]}
    rj = tmp_path / "report.json"
    rc = runner.main(["run", str(KDIR / "mix_matmul.cpp"), "--launch", str(write_launch(tmp_path, spec)),
                      "-o", str(tmp_path / "out"), "--report-json", str(rj)])
    assert rc == 0, capsys.readouterr().err
    c = np.load(tmp_path / "out" / "c.npy")
    assert np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max() < 1e-3
    rep = json.loads(rj.read_text())
    assert len(rep["counters"]["blocks"]) == 4 and rep["estimate"]["bottleneck"] == "M"
    assert sum(blk["cube_macs"] for blk in rep["counters"]["blocks"]) == (3 * 32 + 16) * 48 * 48  # rows 18, 18, 18, 16 in base blocks of 16: whole fractals


def test_aic_driven_mix_kernel(tmp_path, capsys):
    """kernel_type "mix" with cross-core flags: the AIC of each of the 2 AI Cores computes A_i @ B on the low-level cube API
    into a workspace slot and sets a mode-2 flag; both AIV wait, scale and write C. The order check (on by default)
    reruns the 6 blocks in reverse order: the flags make the result order-independent."""
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, (64, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (32, 32)).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    spec = {"entry": "cross_cube_scale", "blocks": 2, "kernel_type": "mix",
            "args": [{"name": "a", "kind": "input", "npy": "a.npy"}, {"name": "b", "kind": "input", "npy": "b.npy"},
                     {"name": "c", "kind": "output", "dtype": "float32", "shape": [64, 32]},
                     {"name": "ws", "kind": "workspace", "bytes": 2 * 32 * 32 * 4}]}
    rj = tmp_path / "report.json"
    rc = runner.main(["run", str(KDIR / "cross_cube_scale.cpp"), "--launch", str(write_launch(tmp_path, spec)),
                      "-o", str(tmp_path / "out"), "--report-json", str(rj)])
    assert rc == 0, capsys.readouterr().err
    c = np.load(tmp_path / "out" / "c.npy")
    np.testing.assert_array_equal(c, 2 * (a.astype(np.float32).reshape(2, 32, 32) @ b.astype(np.float32)).reshape(64, 32))
    blocks = json.loads(rj.read_text())["counters"]["blocks"]
    assert [blk.get("core") for blk in blocks] == [None] * 4 + ["aic"] * 2


EXCHANGE = """#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void exchange(GM_ADDR z) {
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)z, 16);
    const int b = int(GetBlockIdx());
    g.SetValue(b * 8, float(b + 1));
    g.SetValue(b * 8 + 1, g.GetValue((1 - b) * 8));  // BUG: reads the other block's slot without SyncAll
}
"""


@pytest.mark.parametrize("flags,order_dependent", [([], True), (["--no-order-check"], False)])
def test_order_check_is_on_by_default(tmp_path, capsys, flags, order_dependent):
    """ascend-sim run runs the blocks a second time in reverse order unless told not to: a cross-block read without
    SyncAll changes the output between the orders (ORDER-DEPENDENT; the GM-RACE is reported either way)."""
    src = tmp_path / "exchange.cpp"
    src.write_text(EXCHANGE)
    spec = {"entry": "exchange", "blocks": 2, "kernel_type": "vector",
            "args": [{"name": "z", "kind": "output", "dtype": "float32", "shape": [16], "init": "zeros"}]}
    rc = runner.main(["run", str(src), "--launch", str(write_launch(tmp_path, spec)), "-o", str(tmp_path / "out"), *flags])
    err = capsys.readouterr().err
    assert rc == 1 and "error[GM-RACE]" in err
    assert ("error[ORDER-DEPENDENT]" in err) == order_dependent, err
