"""benchmarks/emit_snapshot.py hashes every emitted file and each kernel's emulator driver; a kernel of several
launches has no view of its own, so its driver is each launch's driver in launch order."""

import importlib.util
from pathlib import Path

import lowering
from ascend_dsl import ir, parse_text
from npu_harness.gallery import discover

ROOT = Path(__file__).resolve().parent.parent


def _snapshot_module():
    spec = importlib.util.spec_from_file_location("emit_snapshot", ROOT / "benchmarks" / "emit_snapshot.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_driver_of_a_kernel_of_several_launches_is_each_launchs_driver_in_order():
    snap = _snapshot_module()
    project, ctx = lowering.lower(parse_text({e.name: e for e in discover()}["gemm_cumsum"].adsl.read_text(), "g.adsl")[0].instantiate())
    assert ctx.lowered.kind is ir.KernelKind.LAUNCHES and project.view is None
    text = snap._driver(project, ctx)
    starts = [text.index(f'#line 1 "{sub.name}_kernel.cpp"') for sub in project.launches]
    assert len(project.launches) == 2 and starts == sorted(starts)
