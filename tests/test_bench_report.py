"""The closing report of benchmarks/bench_gallery_model.py on a fabricated row list (formatting only: no kernel
is lowered or timed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_gallery_model.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_gallery_model", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(kernel, klass, goal, frac, *, kb=False, scale=True, ok=True, bottleneck="MTE2", gm_x=1.0, kind="memory"):
    return {"kernel": kernel, "class": klass, "target_fraction": goal, "dtype": "f32",
            "shape": {"batch_size": 16, "dim": 16384} if kb else {"batch_size": 256, "dim": 65536},
            "benchmark_scale": scale, "kernelbench_shape": kb, "long_rows": False, "ok": ok,
            "ideal_fraction": frac, "roofline_fraction": frac, "ideal_kind": kind, "bottleneck": bottleneck,
            "hbm_bound": False, "gm_traffic_ratio": gm_x}


def test_every_category_has_a_target(bench):
    class Ex:
        def __init__(self, category, name):
            self.category, self.name = category, name

    for category, name, goal in [("matmul", "matmul_square", 0.70), ("fuse", "matmul_gelu", 0.70),
                                 ("convolution", "conv2d", 0.70), ("attention", "sdpa", 0.70),
                                 ("pooling", "max_pool2d", 0.60), ("resize", "upsample_nearest2d", 0.60),
                                 ("math", "cumsum", 0.70), ("reduce", "prod_dim", 0.70), ("activation", "relu", 0.85)]:
        assert bench.target_fraction(Ex(category, name))[1] == goal, name


def test_rows_below_target_carry_their_reason_and_the_summary_counts(bench):
    rows = [
        _row("activation/relu", "element-wise", 0.85, 0.90),
        _row("activation/relu", "element-wise", 0.85, 0.40, kb=True, scale=False, bottleneck="S"),
        _row("reduce/prod_dim", "reduce", 0.70, 0.27, bottleneck="V", gm_x=2.5),
        _row("matmul/matmul_square", "matmul", 0.70, 0.95, ok=False, bottleneck="M", kind="cube"),
        bench.error_row(type("Ex", (), {"category": "pooling", "name": "max_pool2d"}), "pooling", 0.60, "f16",
                        {"batch_size": 16, "dim": 16384}, False, "TILING"),
        _row("math/cumsum", "scan", 0.70, 0.70, kb=True, scale=False),
        _row("activation/gelu", "element-wise", 0.85, 0.65, kb=True, scale=False),  # KernelBench bar: 60%
    ]
    lines = bench.report_lines(rows)
    assert lines[-1] == ("ideal: 2/7 rows meet their target; KernelBench shapes: 2/4 at >= 60% of the ideal "
                         "(issue 21: >= 80% of them; 1/4 at their class targets)")
    text = "\n".join(lines)
    assert "element-wise   target >= 85%: 1/3 rows meet it (at benchmark scale 1/1)" in text
    assert "below: relu f32 16x16384: 40% of the ideal (memory-bound ideal), bound by S (scalar unit), " \
           "GM traffic x1.00 the least" in text
    assert "below: prod_dim f32 256x65536: 27% of the ideal (memory-bound ideal), bound by V (vector unit), " \
           "GM traffic x2.50 the least" in text
    assert "matmul_square f32 256x65536: 95% of the ideal (cube-bound ideal), bound by M (cube), GM traffic x1.00 " \
           "the least; VALIDATION FAILED" in text  # fast but wrong: misses
    assert "below: max_pool2d f16 16x16384: no estimate (TILING)" in text
    assert "scan           target >= 70%: 1/1 rows meet it" in text and "below: cumsum" not in text  # at its target


@pytest.mark.parametrize("name, expected", [
    ("relu", [{"batch_size": 16, "dim": 16384}, {"batch_size": 64, "dim": 65536}, {"batch_size": 256, "dim": 65536}]),
    ("embedding", [{}]),          # batch_size x seq_len x num_embeddings x embedding_dim: no `dim`
    ("layer_norm_module", [{}]),  # B x D
    ("add_groups", [{}]),         # get_input_groups: its own cases
    # GEMMs: the task's sizes, then issue 21's benchmark scale in the task's own names
    ("matmul_square", [{}, {"M": 4096, "K": 4096, "N": 4096}]),
    ("matmul_batched", [{}, {"Bt": 8, "M": 2048, "K": 2048, "N": 2048}]),
    ("linear_relu_module", [{}, {"batch_size": 4096, "in_features": 4096, "out_features": 4096}]),
    ("matvec", [{}, {"M": 4096, "K": 4096}]),
    ("matmul_tall_skinny", [{}, {"M": 65536}]),
    ("conv_max_pool", [{}]),      # a conv chain: its task's sizes
])
def test_bench_shapes_use_only_the_tasks_own_size_names(bench, name, expected):
    """A shape naming sizes the task does not have was a TASK-ERROR row (31 rows in the last --quick run)."""
    from npu_harness import gallery

    ex = next(e for e in gallery.discover() if e.name == name)
    assert bench.bench_shapes(ex) == expected


def test_kernelbench_option_keeps_only_the_default_shapes(bench):
    from npu_harness import gallery

    relu = next(e for e in gallery.discover() if e.name == "relu")
    softmax = next(e for e in gallery.discover() if e.name == "softmax")
    assert bench.wanted_shapes(relu, bench.bench_shapes(relu), quick=False, kernelbench=True) == \
        [{"batch_size": 16, "dim": 16384}]
    assert bench.wanted_shapes(softmax, bench.bench_shapes(softmax), quick=False, kernelbench=True) == \
        [{"batch_size": 128, "dim": 4096}]
    assert bench.wanted_shapes(relu, bench.bench_shapes(relu), quick=True, kernelbench=True) == []


def test_a_task_timeout_is_retried_once_at_a_longer_limit_and_then_names_its_limit(bench):
    from ascend_dsl.diagnostics import DslError

    ex = type("Ex", (), {"name": "relu"})
    limits = []

    def slow_then_fine(ex, dts, shape, target, task_timeout):
        limits.append(task_timeout)
        if len(limits) == 1:
            raise DslError.at("TASK-TIMEOUT", f"task file relu.py did not finish within {task_timeout:.0f} s", None)
        return "result"

    assert bench.validate_with_retry(ex, {}, {}, "ascend910b1", 100.0, validate=slow_then_fine) == "result"
    assert limits == [100.0, 200.0]

    def always_slow(ex, dts, shape, target, task_timeout):
        raise DslError.at("TASK-TIMEOUT", f"task file relu.py did not finish within {task_timeout:.0f} s", None)

    with pytest.raises(DslError) as e:
        bench.validate_with_retry(ex, {}, {}, "ascend910b1", 100.0, validate=always_slow)
    assert bench.error_label(e.value) == "TASK-TIMEOUT: task file relu.py did not finish within 200 s"

    def wrong(ex, dts, shape, target, task_timeout):  # any other error is not retried
        limits.append(task_timeout)
        raise DslError.at("TILING", "no tiling", None)

    limits.clear()
    with pytest.raises(DslError):
        bench.validate_with_retry(ex, {}, {}, "ascend910b1", 100.0, validate=wrong)
    assert limits == [100.0] and bench.error_label(DslError.at("TILING", "x", None)) == "TILING"
