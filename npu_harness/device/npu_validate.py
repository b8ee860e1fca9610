"""`--validate npu` (ascend-lower) and `--level npu` (ascend-eval): build the emitted project with CANN,
run the kernel and the task's PyTorch reference on the NPU, compare, and time both as MultiKernelBench
does (benchmark.py), in a worker subprocess with a timeout (npu_worker.py). Without CANN or torch_npu
it stops at once with one line naming what is missing (env.py)."""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from ..compare import Comparison
from ..subprocess_limits import run_limited
from . import env

NPU_RUN_TIMEOUT_S = 1800.0  # includes the CANN build of a new kernel (minutes) and 2 x 103 timed calls


@dataclass
class NpuResult:
    ok: bool
    device: str = ""
    shapes: dict = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    kernel_ms: dict | None = None
    reference_ms: dict | None = None
    speedup: float | None = None
    fast_p: dict = field(default_factory=dict)
    error: str = ""
    level: str = "npu"

    def summary(self) -> str:
        shapes = ", ".join(f"{k}={v}" for k, v in self.shapes.items())
        if not self.ok:
            return f"{self.level}: FAIL ({shapes or self.device})"
        fp = ", ".join(f"fast_{p} = {v}" for p, v in self.fast_p.items())
        return (f"{self.level}: PASS ({shapes}; kernel {self.kernel_ms['mean_ms']:.4f} ms, eager "
                f"{self.reference_ms['mean_ms']:.4f} ms (mean of {self.kernel_ms['trials']}), speedup "
                f"{self.speedup:.2f}x; {fp}; on {self.device})")


def validate_npu(dsl: Path, kernel: str, dtypes: dict, target: str, task: Path, *, seed: int = 0,
                 overrides: dict | None = None, cap: int | None = None, device: str = "npu",
                 correct_trials: int = 5, warmup: int | None = None, trials: int | None = None,
                 fast_p: tuple[float, ...] = (1.0,), timeout: float = NPU_RUN_TIMEOUT_S) -> NpuResult:
    """`device="npu"` needs CANN and torch_npu (env.NpuUnavailable otherwise); `device="cpu"` runs the same
    harness with the emulator standing in for the NPU (tests)."""
    if device == "npu":
        env.require_npu()
    from .benchmark import TRIALS, WARMUP

    req = {"dsl": str(Path(dsl).resolve()), "kernel": kernel, "dtypes": {k: str(v) for k, v in dtypes.items()},
           "target": target, "task": str(Path(task).resolve()), "seed": seed, "set": overrides or {}, "cap": cap,
           "device": device, "correct_trials": correct_trials, "warmup": WARMUP if warmup is None else warmup,
           "trials": TRIALS if trials is None else trials, "fast_p": list(fast_p)}
    with tempfile.TemporaryDirectory(prefix="ascend-npu-") as tmp:
        req_path, out_path = Path(tmp) / "request.json", Path(tmp) / "result.json"
        req_path.write_text(json.dumps(req))
        res = run_limited([sys.executable, "-m", "npu_harness.device.npu_worker", str(req_path), str(out_path)],
                          timeout=timeout)
        if res.timed_out:
            raise DslError.at("NPU-TIMEOUT", f"the {device} validation did not finish within {timeout:.0f} s", None)
        if res.returncode != 0 or not out_path.is_file():
            tail = "\n".join(res.stderr.strip().splitlines()[-12:])
            raise DslError.at("NPU-ERROR", f"the {device} validation worker failed (exit {res.returncode}):\n{tail}",
                              None)
        data = json.loads(out_path.read_text())
    comps = [Comparison(**c) for c in data.pop("comparisons", [])]
    return NpuResult(comparisons=comps, level="npu" if device == "npu" else "npu harness on the emulator", **data)
