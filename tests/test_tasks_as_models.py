"""Tasks written the way models are: weights in modules, scalars on submodules and in forward(), input groups
with per-case dtypes, dtype from data, --cap on every way of writing sizes, memory limits. Most checks use
`--validate interp` (no emulator compile); the gallery runs the same forms in the emulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from npu_harness.task import run_task_cases

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"


def _cli(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "npu_harness.cli", *args], check=False, capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env={**os.environ, **(env or {})})


def _task(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\nimport torch.nn as nn\n" + textwrap.dedent(body))
    return path


def _kernel(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.adsl"
    path.write_text(textwrap.dedent(text))
    return path


LAYER_NORM = """\
    from ascend_dsl import kernel, Tensor, f32, f16

    @kernel(T=[f32, f16])
    def ln(x: Tensor[T, "B, D"], {params}y: Tensor[T, "B, D"], eps: f32 = 1e-5):
        for blk in split(B, cores=AIV):
            for r in tile(blk, size=auto, buffers=2):
                xt = load(x[r, :])
                xc = xt - mean(xt, axis=1)
                store(y[r, :], xc * rsqrt(mean(xc * xc, axis=1) + eps){use})
"""


def test_weights_bind_by_name_and_errors_name_missing_and_extra(tmp_path):
    task = EX / "normalization/layer_norm_module.py"
    good = _kernel(tmp_path, "good", LAYER_NORM.format(params='ln_weight: Tensor[T, "D"], ln_bias: Tensor[T, "D"], ',
                                                        use=" * load(ln_weight[:]) + load(ln_bias[:])"))
    r = _cli(str(good), "-o", str(tmp_path / "g"), "--validate", "interp", "--task", str(task), "--set", "D=300")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "scalars: eps=1e-06 (ln.eps)" in r.stdout and "interp: PASS" in r.stdout
    missing = _kernel(tmp_path, "missing", LAYER_NORM.format(params='ln_w: Tensor[T, "D"], ', use=" * load(ln_w[:])"))
    r = _cli(str(missing), "-o", str(tmp_path / "m"), "--validate", "interp", "--task", str(task), "--set", "D=300")
    assert r.returncode == 2 and "error[BINDING]" in r.stderr, r.stderr
    assert "kernel input(s) ln_w are neither" in r.stderr and "ln_weight, ln_bias are not kernel inputs" in r.stderr
    assert "ln_weight (float32 [300])" in r.stderr and "Traceback" not in r.stderr


def test_kernel_default_used_is_reported(tmp_path):
    task = _task(tmp_path, "lrelu", """
        class Model(nn.Module):
            def forward(self, x):
                return torch.nn.functional.leaky_relu(x, 0.01)
        def get_inputs():
            return [torch.randn(1000)]
        def get_init_inputs():
            return []
    """)
    r = _cli(str(EX / "activation/leaky_relu.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp", "--task",
             str(task))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "scalars: negative_slope=0.01 (kernel default: the task has no value of that name)" in r.stdout


def test_ambiguous_submodule_attribute_is_an_error(tmp_path):
    task = _task(tmp_path, "two_norms", """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.LayerNorm(64, eps=1e-5, elementwise_affine=False)
                self.b = nn.LayerNorm(64, eps=1e-3, elementwise_affine=False)
            def forward(self, x):
                return self.b(self.a(x))
        def get_inputs():
            return [torch.randn(4, 64)]
        def get_init_inputs():
            return []
    """)
    r = _cli(str(EX / "normalization/rms_norm.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp", "--task",
             str(task))
    assert r.returncode == 2 and "error[BINDING]" in r.stderr
    assert "a.eps=1e-05, b.eps=0.001" in r.stderr and "a_eps, b_eps" in r.stderr


GROUPS = """
    import json, os
    class Model(nn.Module):
        def forward(self, x, y, s):
            return (x + y) * s
    DT = {"float32": torch.float32, "float16": torch.float16, "int8": torch.int8}
    def get_input_groups():
        out = []
        with open(os.path.join(os.path.dirname(__file__), "grp.json")) as f:
            for line in f:
                c = {e["name"]: e for e in json.loads(line)["inputs"]}
                out.append([torch.randn(c["x"]["shape"]).to(DT[c["x"]["dtype"]]),
                            torch.randn(c["y"]["shape"]).to(DT[c["y"]["dtype"]]), c["s"]["value"]])
        return out
"""
ADD_SCALED = """\
    from ascend_dsl import kernel, Tensor, f32, f16

    @kernel(T=[f32, f16])
    def add_scaled(x: Tensor[T, "N"], y: Tensor[T, "N"], z: Tensor[T, "N"], s: f32 = 1.0):
        for blk in split(N, cores=AIV):
            for t in tile(blk, size=auto, buffers=2):
                store(z[t], cast((cast(load(x[t]), f32) + cast(load(y[t]), f32)) * s, T))
"""


def _groups(tmp_path, cases) -> Path:
    task = _task(tmp_path, "grp", GROUPS)
    (tmp_path / "grp.json").write_text("".join(json.dumps({"inputs": [
        {"name": "x", "type": "tensor", "dtype": dt, "shape": xs}, {"name": "y", "type": "tensor", "dtype": dt,
                                                                   "shape": ys},
        {"name": "s", "type": "attr", "value": s}]}) + "\n" for dt, xs, ys, s in cases))
    return task


def test_input_groups_every_case_its_own_dtype_and_attribute_and_a_broadcast_case_named(tmp_path):
    task = _groups(tmp_path, [("float32", [17, 31], [17, 31], 2.0), ("float16", [4, 100], [4, 100], -0.5),
                              ("float32", [17, 31], [1, 31], 1.0), ("int8", [8], [8], 1.0)])
    kernel = _kernel(tmp_path, "add_scaled", ADD_SCALED)
    r = _cli(str(kernel), "-o", str(tmp_path / "o"), "--validate", "interp", "--task", str(task))
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert "case 0 [x [17, 31] float32, y [17, 31] float32, s=2.0; T=f32]: PASS" in out
    assert "case 1 [x [4, 100] float16, y [4, 100] float16, s=-0.5; T=f16]: PASS" in out
    assert "case 2" in out and "case 3" in out
    assert out.strip().splitlines()[-1].startswith("interp: FAIL (2/4 cases pass; failed: case 2, case 3;")
    assert "error[BINDING]: case 2: shape symbol N is 527 for one tensor and 31 for 'y'" in r.stderr
    assert "the task broadcasts them" in r.stderr
    assert "error[DTYPE]: case 3: 'x' holds int8 data but the kernel declares it float32" in r.stderr


def test_eval_counts_a_groups_task_correct_only_when_every_case_passes(tmp_path):
    from kernelgen.candidate import evaluate
    from kernelgen.tasks import load_task

    d = tmp_path / "math"
    d.mkdir()
    good = [("float32", [17, 31], [17, 31], 2.0), ("float16", [5, 7], [5, 7], 0.5)]
    task = load_task(_groups(d, good))
    answer = "```python\n" + textwrap.dedent(ADD_SCALED) + "```"
    assert evaluate(answer, task, level="interp").passed
    wrong = answer.replace(" * s, T)", " * 2.0, T)")  # right for case 0 only
    out = evaluate(wrong, task, level="interp")
    assert not out.passed and "case 1" in out.diagnostics


def test_dtype_is_picked_from_the_data(tmp_path):
    task = _task(tmp_path, "relu16", """
        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x)
        def get_inputs():
            return [torch.randn(33, 1001).half()]
        def get_init_inputs():
            return []
    """)
    r = _cli(str(EX / "activation/relu.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp", "--task", str(task))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(T=f16, from the task's data)" in r.stdout and "converted" not in r.stdout
    forced = _cli(str(EX / "activation/relu.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp", "--task",
                  str(task), "--dtype", "T=f32")
    assert forced.returncode == 0 and "(T=f32; as --dtype asks): x float16 -> float32" in forced.stdout


def test_integer_data_into_a_float_kernel_is_an_error(tmp_path):
    task = _task(tmp_path, "relu8", """
        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x)
        def get_inputs():
            return [torch.randint(-5, 5, (64,), dtype=torch.int8)]
        def get_init_inputs():
            return []
    """)
    r = _cli(str(EX / "activation/relu.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp", "--task", str(task))
    assert r.returncode == 2 and "error[DTYPE]: 'x' holds int8 data but the kernel declares it float32" in r.stderr


def test_f32_data_into_an_f16_only_cube_kernel_states_the_conversion(tmp_path):
    r = _cli(str(EX / "fuse/linear_gelu_param.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp",
             "--set", "M=40", "--set", "K=32", "--set", "N=48")
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("converted for the kernel (T=f16; the kernel has no variant for the task's dtypes): x float32 -> float16, "
            "linear_weight float32 -> float16") in r.stdout


# ---- --cap -------------------------------------------------------------------------------------------------

def _shapes(cases):
    return [[list(t.shape) for t in c.inputs if hasattr(t, "shape")] for c in cases.cases]


def test_cap_scales_literals_in_get_inputs_and_keeps_equal_sizes_equal(tmp_path):
    task = _task(tmp_path, "lit", """
        class Model(nn.Module):
            def forward(self, a, b):
                return torch.tril(a) @ b
        def get_inputs():
            return [torch.randn(8192, 8192), torch.randn(8192, 4096)]
        def get_init_inputs():
            return []
    """)
    cases = run_task_cases(task, cap=1_000_000)
    (a, b), = _shapes(cases)
    assert a[0] == a[1] == b[0] and b[1] * 2 == b[0] and a[0] * a[1] <= 1_000_000, (a, b)
    assert cases.cases[0].outputs[0].shape == (a[0], b[1])


def test_cap_keeps_sizes_shared_by_two_roles(tmp_path):
    """KernelBench's hinge loss: predictions [batch, *input_shape] times targets [batch], with input_shape =
    (batch,), broadcast: the two sizes must stay equal; uppercase and tuple constants count."""
    task = _task(tmp_path, "hinge", """
        class Model(nn.Module):
            def forward(self, predictions, targets):
                return torch.mean(torch.clamp(1 - predictions * targets, min=0))
        BATCH = 32768
        input_shape = (32768,)
        def get_inputs():
            return [torch.randn(BATCH, *input_shape), torch.randint(0, 2, (BATCH,)).float() * 2 - 1]
        def get_init_inputs():
            return []
    """)
    cases = run_task_cases(task, cap=1_000_000)
    (p, t), = _shapes(cases)
    assert p[0] == p[1] == t[0] and p[0] * p[1] <= 1_000_000
    assert cases.constants["BATCH"] == p[0] and cases.scaling["method"].startswith("uniform")


def test_cap_keeps_rows_longer_than_ub_and_the_cli_prints_the_shapes_run(tmp_path):
    task = _task(tmp_path, "softmax", """
        class Model(nn.Module):
            def forward(self, x):
                return torch.softmax(x, dim=1)
        def get_inputs():
            return [torch.randn(4096, 393216)]
        def get_init_inputs():
            return []
    """)
    r = _cli(str(EX / "activation/softmax.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp", "--task",
             str(task), "--cap", "1000000")
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("task shapes: x ["))
    rows, cols = json.loads(line.split("x ", 1)[1].split("]")[0] + "]")
    assert cols > 131072 and rows * cols <= 1_000_000, line
    assert "--cap 1000000: sizes scaled 4096 -> 7, 393216 -> " in r.stdout


def test_cap_scales_a_groups_json_and_literals_computed_at_run_time(tmp_path):
    task = _groups(tmp_path, [("float32", [4096, 4096], [4096, 4096], 2.0), ("float16", [17, 31], [17, 31], 1.0)])
    cases = run_task_cases(task, cap=100_000)
    big, small = _shapes(cases)
    assert big[0] == big[1] and big[0][0] * big[0][1] <= 100_000 and small == [[17, 31], [17, 31]]
    derived = _task(tmp_path, "derived", """
        class Model(nn.Module):
            def forward(self, x):
                return x * 2
        D = 4096
        def get_inputs():
            return [torch.randn(64, 2 * D)]
        def get_init_inputs():
            return []
    """)
    (x,), = _shapes(run_task_cases(derived, cap=100_000))
    assert x[0] * x[1] <= 100_000 and x[1] % 2 == 0


def test_cap_that_cannot_be_met_says_why(tmp_path):
    task = _task(tmp_path, "opaque", """
        class Model(nn.Module):
            def forward(self, x):
                return x
        def get_inputs():
            return [torch.randn(int("2048"), int("2048"))]
        def get_init_inputs():
            return []
    """)
    r = _cli(str(EX / "activation/relu.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp", "--task", str(task),
             "--cap", "1000")
    assert r.returncode == 2 and "error[CAP]" in r.stderr and "still has shape [2048, 2048]" in r.stderr
    assert "computed at run time" in r.stderr


def test_memory_limit_hit_in_the_task_is_reported(tmp_path):
    task = _task(tmp_path, "huge", """
        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x)
        def get_inputs():
            return [torch.randn(1 << 31)]
        def get_init_inputs():
            return []
    """)
    r = _cli(str(EX / "activation/relu.adsl"), "-o", str(tmp_path / "o"), "--validate", "sim", "--task", str(task),
             env={"ASCEND_DSL_MEMORY_LIMIT": "3G"})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "error[MEMORY-LIMIT]" in r.stderr and "memory limit of 3.0 GB" in r.stderr and "ASCEND_DSL_MEMORY_LIMIT" in \
        r.stderr and "Traceback" not in r.stderr.split("error[MEMORY-LIMIT]")[0]


def test_memory_limit_hit_in_the_emulator_is_reported(monkeypatch):
    from ascend_dsl import load_file
    from ascend_dsl.diagnostics import DslError
    from lowering import lower
    from npu_harness import validate
    from npu_harness.validate import load_task_for, validate_sim

    kernel = load_file(EX / "activation/relu.adsl")[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", "relu.adsl")
    run = load_task_for(kernel, EX / "activation/relu.py", overrides={"batch_size": 64, "dim": 1 << 20})
    monkeypatch.setattr(validate, "memory_limit", lambda: 200 << 20)  # 200 MB: less than 2 x 256 MB of GM
    with pytest.raises(DslError) as e:
        validate_sim(kernel, ctx.lowered, project, ctx, run)
    assert e.value.codes == ["MEMORY-LIMIT"] and "the emulator exceeded the memory limit" in e.value.render()


def test_bad_memory_limit_setting_is_a_user_error(tmp_path):
    r = _cli(str(EX / "activation/relu.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp",
             env={"ASCEND_DSL_MEMORY_LIMIT": "lots"})
    assert r.returncode == 2 and "ASCEND_DSL_MEMORY_LIMIT='lots'" in r.stderr


def test_prompt_shows_parameters_and_picks_examples_by_relevance():
    from kernelgen import prompt
    from kernelgen.tasks import load_task

    task = load_task(EX / "fuse/linear_relu_module.py", category="somewhere_else")
    user = prompt.initial_messages(task)[1]["content"]
    assert "fc_weight: float32 [384, 512]; fc_bias: float32 [384]" in user
    assert "x: float32 [256, 512]" in user
    picked = prompt.gallery_examples(task.category, exclude=task.path, task_source=task.source)
    assert picked and all("cores=AIC" in ex.dsl for ex in picked), [ex.name for ex in picked]
    pool = prompt.gallery_examples("pooling", exclude=EX / "pooling/avg_pool1d_module.py",
                                   task_source=(EX / "pooling/avg_pool1d_module.py").read_text())
    assert pool[0].name == "avg_pool1d"
