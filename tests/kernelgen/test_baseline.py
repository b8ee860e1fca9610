"""fast_p's stated baseline: the gallery kernel's cost-model estimate for the same task."""

from __future__ import annotations

import shutil
from pathlib import Path

from kernelgen.baseline import gallery_baselines
from kernelgen.report import _fast_p

REPO = Path(__file__).resolve().parents[2]


def test_gallery_baseline_and_fast_p(tmp_path):
    cat = tmp_path / "activation"
    cat.mkdir()
    for name in ("relu", "tanh"):
        for ext in (".py", ".adsl"):
            shutil.copy(REPO / "examples/activation" / f"{name}{ext}", cat / f"{name}{ext}")
    (cat / "tanh.adsl").unlink()  # a task without a gallery kernel gets no baseline
    base = gallery_baselines(tmp_path)
    assert set(base) == {"activation/relu"} and base["activation/relu"] > 0
    t = base["activation/relu"]
    records = [{"task": "activation/relu", "passed": True, "final": {"estimate_us": t / 2}},
               {"task": "activation/tanh", "passed": True, "final": {"estimate_us": 1.0}}]
    fp = _fast_p(records, [1.0, 3.0], base)
    assert fp == {"1.0": 0.5, "3.0": 0.0}  # relu twice as fast as the gallery; tanh has no baseline
