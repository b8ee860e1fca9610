"""MultiKernelBench exports (`--export mkb-direct`, `--export mkb-opproject`): each export's structure, and
its host-side code built against the emulator's ACL layer and run: the direct-launch kernel file (its
`<<<>>>` launch function) with the launch header, and the op project's kernel_src with its GM tiling
entry. The torch bindings need torch's C++ headers: that syntax check is opt-in (ASCEND_DSL_TORCH_EXT_TESTS=1,
about 30 s of CPU each)."""

from __future__ import annotations

import ast
import json
import os
import runpy
import subprocess
import sys
import sysconfig
import tempfile
import types
from pathlib import Path

import numpy as np
import pytest

from ascend_dsl import DslError, load_file
from ascend_dsl.api import KernelFunction
from lowering import all_targets, lower
from lowering.emit.host import emulator_defines
from npu_harness.device.chevron import rewrite_launches
from npu_harness.device.emulator_build import ACL_RUNTIME, inline_include
from npu_harness.export import ExportFacts, export_facts, mkb_direct, mkb_opproject, write_export
from npu_harness.sim.compiler import INCLUDE_DIR, compile_program, run_program

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).parent / "programs"
LEAKY = REPO / "examples/activation/leaky_relu.adsl"
SLOPE = 0.01  # the task Model's negative_slope
RMS = REPO / "examples/normalization/rms_norm_param.adsl"  # norm.weight (random) is an input, eps = norm.eps
TORCH_EXT = os.environ.get("ASCEND_DSL_TORCH_EXT_TESTS") == "1"


@pytest.fixture(scope="module")
def leaky():
    kernel = load_file(LEAKY)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1")
    return kernel, project, ctx


@pytest.fixture(scope="module")
def direct(leaky):
    kernel, project, ctx = leaky
    facts = export_facts([kernel], None, {}, 120)  # no task: the kernel's name and DSL defaults
    return mkb_direct.submission(kernel, project, ctx, facts)


@pytest.fixture(scope="module")
def six(leaky):
    kernel, project, ctx = leaky
    return mkb_opproject.strings(kernel, project, ctx, ExportFacts("leaky_relu", scalars={"negative_slope": SLOPE}))


def _sources(sub: dict) -> dict[str, str]:
    return {s["path"]: s["content"] for s in sub["sources"]}


def test_direct_submission_structure(direct):
    assert direct["build"] == {"type": "ascendc_direct_launch"} and direct["entry"] == {"model": "ModelNew.py::ModelNew"}
    assert direct["problem"] == "leaky_relu" and direct["format_version"] == "0.1"
    src = _sources(direct)
    assert sorted(src) == ["ModelNew.py", "kernel/leaky_relu_kernel.cpp", "kernel/leaky_relu_launch.h",
                           "kernel/leaky_relu_tiling.h", "kernel/pybind11.cpp"]
    json.dumps(direct)  # serialisable as the harness reads it
    model = ast.parse(src["ModelNew.py"])
    assert "ModelNew" in [n.name for n in model.body if isinstance(n, ast.ClassDef)]
    assert "benchmark_ops.leaky_relu(*tensors, 0.01)" in src["ModelNew.py"]  # the slope, baked in
    kernel = src["kernel/leaky_relu_kernel.cpp"]
    assert 'extern "C" __global__ __aicore__ void leaky_relu_custom(' in kernel
    assert "leaky_relu_custom<<<blocks, nullptr, stream>>>(x, y, *tiling);" in kernel
    assert 'extern "C" void launch_leaky_relu(' in src["kernel/leaky_relu_launch.h"]
    bind = src["kernel/pybind11.cpp"]
    assert "PYBIND11_MODULE(benchmark_ops, m)" in bind and "c10_npu::getCurrentNPUStream().stream()" in bind
    assert "at::Tensor y = at::empty(x.sizes()" in bind  # y: [N] like x: [N]


@pytest.mark.slow
def test_direct_export_host_parts_build_and_run_on_the_acl_layer(direct, tmp_path):
    kdir = tmp_path / "kernel"
    kdir.mkdir()
    for path, text in _sources(direct).items():
        if path.startswith("kernel/"):
            (tmp_path / path).write_text(text)
    kernel_cpp = kdir / "leaky_relu_kernel_sim.cpp"
    kernel_cpp.write_text(rewrite_launches((kdir / "leaky_relu_kernel.cpp").read_text(), "leaky_relu_kernel.cpp"))
    driver = tmp_path / "driver.cpp"
    driver.write_text((PROGRAMS / "mkb_direct_driver.cpp").read_text())
    binary = compile_program([kernel_cpp, driver, ACL_RUNTIME], extra_include_dirs=[kdir],
                             defines=emulator_defines(all_targets()["ascend910b1"], False))
    _run_and_compare(binary)


@pytest.mark.slow
def test_opproject_kernel_src_builds_and_runs_with_gm_tiling(six, tmp_path):
    driver = tmp_path / "driver.cpp"
    driver.write_text(inline_include((PROGRAMS / "mkb_op_driver.cpp").read_text(), "leaky_relu_custom.cpp",
                                     six["kernel_src"], "driver.cpp"))
    binary = compile_program([driver], defines=emulator_defines(all_targets()["ascend910b1"], False))
    _run_and_compare(binary)


def _run_and_compare(binary: Path) -> None:
    x = np.random.default_rng(1).standard_normal(20011).astype(np.float32)
    with tempfile.TemporaryDirectory() as io:
        x.tofile(Path(io) / "x.bin")
        res = run_program(binary, [io, str(x.size), str(SLOPE)], timeout=60)
        assert res.returncode == 0 and not res.errors, res.stderr
        y = np.fromfile(Path(io) / "y.bin", dtype=np.float32)
    np.testing.assert_array_equal(y, np.where(x > 0, x, x * np.float32(SLOPE)))


def test_opproject_six_strings(six):
    assert list(six) == list(mkb_opproject.STRINGS)
    proto = json.loads(six["project_json_src"])
    assert proto == [{"op": "LeakyReluCustom", "language": "cpp",
                      "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]}],
                      "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]}]}]
    assert "struct LeakyReluTilingData" in six["host_tiling_src"]
    host = six["host_operator_src"]
    for needle in ("static ge::graphStatus TilingFunc(gert::TilingContext* context)", "context->SetBlockDim(blocks);",
                   "GetLibApiWorkSpaceSize()", "*context->GetOutputShape(0) = x;", "OP_ADD(LeakyReluCustom);",
                   'AddConfig("ascend910b")', "static_cast<float>(0.01)"):
        assert needle in host, needle
    kernel = six["kernel_src"]
    assert 'extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, ' \
           "GM_ADDR tiling)" in kernel
    assert "GET_TILING_DATA_WITH_STRUCT(LeakyReluTilingData, tilingData, tiling);" in kernel
    assert "leaky_relu_direct(" in kernel and '#include "leaky_relu_tiling.h"' not in kernel
    assert "EXEC_NPU_CMD(aclnnLeakyReluCustom, x, y);" in six["python_bind_src"]
    assert "custom_ops_lib.leaky_relu_custom(" in six["model_src"]
    text = mkb_opproject.module_text(six, "header")
    ns: dict = {}
    exec(compile(text, "export.py", "exec"), ns)  # the file MKB exec()s defines the six strings
    assert all(ns[k].strip() == six[k].strip() for k in mkb_opproject.STRINGS)


def test_cli_export_takes_names_scalars_and_output_shapes_from_the_task(leaky, tmp_path):
    sum_dim = REPO / "examples/reduce/sum_dim.adsl"
    out = subprocess.run([sys.executable, "-m", "npu_harness.cli", str(sum_dim), "-o", str(tmp_path / "cli"),
                          "--export", "mkb-direct", "--validate", "interp", "--cap", "4096"],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "interp: PASS" in out.stdout  # validated at the capped sizes
    sub = json.loads((tmp_path / "cli" / "sum_dim_mkb_direct.json").read_text())  # the task's stem names it
    model = _sources(sub)["ModelNew.py"]
    assert sub["problem"] == "sum_dim" and "benchmark_ops.sum_dim(*tensors)" in model
    # exported for the task's own sizes (MultiKernelBench runs those): x [16, 256, 256] viewed as rows: out [4096]
    assert "outputs[0] = outputs[0].reshape((16, 256))" in model
    kernel, project, ctx = leaky
    path = write_export("mkb-opproject", kernel, project, ctx, export_facts([kernel], None, {}, 120), tmp_path)
    assert path == tmp_path / "leaky_relu_mkb_opproject.py" and "kernel_src = r\'\'\'" in path.read_text()


@pytest.fixture(scope="module")
def rms():
    source = load_file(RMS)[0]
    kernels = [source.instantiate(d) for d in source.dtype_variants]
    facts = export_facts(kernels, RMS.with_suffix(".py"), {}, 120)
    kernel = kernels[facts.variant]
    project, ctx = lower(kernel, "ascend910b1")
    return source, facts, mkb_direct.submission(kernel, project, ctx, facts), mkb_opproject.strings(kernel, project,
                                                                                                     ctx, facts)


def test_export_facts_of_a_model_with_parameters(rms):
    _, facts, direct, six = rms
    assert facts.op == "rms_norm_param" and facts.variant == 0  # float32 data: the f32 variant
    assert facts.scalars == {"eps": 1e-6}  # the submodule's norm.eps, not the DSL default 1e-5
    assert facts.params == ("norm_weight",) and facts.reshapes == ()
    model = _sources(direct)["ModelNew.py"]
    assert "class ModelNew(Model):" in model and "class RMSNorm(nn.Module):" in model
    assert "ascend_dsl" not in model and "class ModelNew(Model):" in six["model_src"]


def _load_model_new(source: str, path: Path, module: str, fn: str, call) -> type:
    """ModelNew of an export, its extension module (`module.fn`) standing in by `call`."""
    stub = types.ModuleType(module)
    setattr(stub, fn, call)
    sys.modules[module] = stub
    try:
        ns = runpy.run_path(str(_write(path, source)))
    finally:
        del sys.modules[module]
    return ns["ModelNew"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.slow
def test_exported_model_new_computes_the_task_models_result_with_its_weights(rms, tmp_path):
    import torch

    source, facts, direct, six = rms
    kfn = KernelFunction(source)
    seen = []

    def benchmark_op(*args):  # the direct export's pybind function: tensors, then the baked-in scalars
        seen.append(args)
        return kfn(*args[:-1], eps=args[-1])  # the kernel through the torch op (emulator)

    task = runpy.run_path(str(RMS.with_suffix(".py")))
    model_new = _load_model_new(_sources(direct)["ModelNew.py"], tmp_path / "ModelNew.py", "benchmark_ops",
                                "rms_norm_param", benchmark_op)
    torch.manual_seed(1024)  # MultiKernelBench seeds Model and ModelNew alike
    ref_model = task["Model"](256)
    torch.manual_seed(1024)
    new = model_new(256)
    x = torch.randn(4, 8, 256)
    with torch.no_grad():
        torch.testing.assert_close(new(x), ref_model(x), rtol=1e-5, atol=1e-5)
    (args,) = seen
    assert args[0] is x and torch.equal(args[1], ref_model.norm.weight) and args[2] == 1e-6

    # the op project's ModelNew gathers the same tensors (its scalars live in TilingFunc)
    got = []
    op_model = _load_model_new(six["model_src"], tmp_path / "model_src.py", "custom_ops_lib",
                               "rms_norm_param_custom", lambda *t: got.append(t) or t[0])
    torch.manual_seed(1024)
    op_model(256)(x)
    assert len(got[0]) == 2 and torch.equal(got[0][0], x) and torch.equal(got[0][1], ref_model.norm.weight)


@pytest.mark.skipif(not TORCH_EXT, reason="opt-in: ASCEND_DSL_TORCH_EXT_TESTS=1 (torch C++ headers, ~30 s CPU)")
def test_direct_export_pybind_compiles_against_torch_and_the_acl_layer(direct, tmp_path):
    import torch

    for path, text in _sources(direct).items():
        if path.startswith("kernel/"):
            (tmp_path / path).parent.mkdir(exist_ok=True)
            (tmp_path / path).write_text(text)
    tinc = Path(torch.__file__).parent / "include"
    cmd = ["g++", "-std=c++17", "-fsyntax-only", f"-I{tinc}", f"-I{tinc}/torch/csrc/api/include",
           f"-I{sysconfig.get_paths()['include']}", f"-I{INCLUDE_DIR.parent / 'include_torch_npu'}",
           f"-I{INCLUDE_DIR}", f"-I{tmp_path / 'kernel'}", str(tmp_path / "kernel" / "pybind11.cpp")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.parametrize("rel", ["pooling/max_pool2d.adsl", "convolution/conv2d.adsl"])
def test_output_dims_no_input_determines_are_the_task_sizes_and_the_inputs_are_pinned_to_them(rel):
    """A pool's or a convolution's OH, OW follow from H, W and the window: no input tensor has them, so an
    export takes them from the task (MultiKernelBench runs the task's sizes) and checks the inputs' sizes."""
    path = REPO / "examples" / rel
    source = load_file(path)[0]
    kernels = [source.instantiate(d) for d in source.dtype_variants]
    facts = export_facts(kernels, path.with_suffix(".py"), {}, 120)
    sizes = dict(facts.sizes)
    assert {"OH", "OW", "H", "W"} <= set(sizes) and sizes["OH"] < sizes["H"] + 3
    kernel = kernels[facts.variant]
    project, ctx = lower(kernel, "ascend910b1")
    pybind = _sources(mkb_direct.submission(kernel, project, ctx, facts))["kernel/pybind11.cpp"]
    assert f"const int64_t OH = {sizes['OH']};" in pybind and f"TORCH_CHECK(H == {sizes['H']}," in pybind
    host = mkb_opproject.strings(kernel, project, ctx, facts)["host_operator_src"]
    assert f"const int64_t OW = {sizes['OW']};" in host and f"if (!(W == {sizes['W']}))" in host


def test_output_dims_no_input_determines_need_a_task():
    kernel = load_file(REPO / "examples/pooling/max_pool2d.adsl")[0].instantiate()
    with pytest.raises(DslError) as e:
        export_facts([kernel], None, {}, 120)
    d = e.value.diagnostics[0]
    assert d.code == "EXPORT" and "OH, OW" in d.message and "--task" in d.hint


def test_direct_export_of_a_matmul_sizes_the_workspace_for_split_k_partials():
    kernel = load_file(REPO / "examples/matmul/matmul_square.adsl")[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1")
    facts = ExportFacts("matmul_square", scalars={p.name: p.default for p in kernel.scalars})
    pybind = _sources(mkb_direct.submission(kernel, project, ctx, facts))["kernel/pybind11.cpp"]
    assert "16 * 1024 * 1024 + tiling.splitWsBytes" in pybind  # the tiling puts the partials after the 16 MB


@pytest.mark.parametrize("kind,text", [("mkb-opproject", "cannot be expressed in the op-project format"),
                                       ("mkb-direct", "is not written yet")])
def test_an_export_of_several_launches_is_a_located_unsupported_naming_the_format(kind, text, tmp_path):
    path = REPO / "examples/fuse/gemm_softmax_long.adsl"
    kernel = load_file(path)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1")
    with pytest.raises(DslError) as ei:
        write_export(kind, kernel, project, ctx, ExportFacts("gemm_softmax_long", scalars={}), tmp_path)
    d = ei.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and f"the {kind} export" in d.message and text in d.message, d.message
    assert d.span.line == 13 and not list(tmp_path.iterdir())  # the second launch's loop; nothing written


def test_a_row_fallback_kernel_exports_its_fused_form_only_where_it_runs_at_the_tasks_sizes(tmp_path):
    """matmul_softmax: fused at 64 x 32 x 128; at a row of 1301 no fused block exists (its host runs the launches
    there), so the export is a located UNSUPPORTED rather than a kernel that fails TILING in the harness."""
    kernel = load_file(REPO / "examples/fuse/matmul_softmax.adsl")[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1")
    assert project.fallback is not None
    small = ExportFacts("matmul_softmax", scalars={}, symbols=(("K", 32), ("M", 64), ("N", 128)))
    assert write_export("mkb-direct", kernel, project, ctx, small, tmp_path).is_file()
    long = ExportFacts("matmul_softmax", scalars={}, symbols=(("K", 45), ("M", 37), ("N", 1301)))
    with pytest.raises(DslError) as ei:
        write_export("mkb-opproject", kernel, project, ctx, long, tmp_path)
    d = ei.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "no block at the task's sizes (K=45, M=37, N=1301)" in d.message, d.message
