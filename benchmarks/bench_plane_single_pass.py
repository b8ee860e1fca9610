"""Would single-pass plane statistics pay? (issue 21 item 2; ESTIMATES of the cost model, not measurements.)

    python benchmarks/bench_plane_single_pass.py [--target ascend910b1] [--task-timeout S] [--only group_norm]

The fold of lowering/passes/plane_moments.py's pattern is not lowered (docs/design.md, "plane statistics, first
step"). This script measures a hand-written proxy of the data flow it would give, beside the gallery kernel, at the
shapes benchmarks/bench_gallery_model.py runs (benchmark scale and the task's own): x read once for the statistics
(each plane's mean and squared deviations in one pass: the row form's chunked single pass, lowering/passes/
chunk_moments.py), the between-planes term two-pass on the planes' means (a slot accumulator of one mean per plane,
and a loop that reads only those), then the normalising loop as before. Every row is validated in the emulator
against torch; it prints device time before -> after and the ideal% of each (the ideal comes from each kernel's own
source ops, so compare device times).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gallery_model import BENCH_TASK_TIMEOUT_S, bench_shapes, largest_case, validate_with_retry  # noqa: E402

#: The single-pass proxy of group_norm / group_norm_module (weight / bias named as in the gallery kernel).
PROXY = '''from ascend_dsl import kernel, Tensor, f32, f16, i32


@kernel(T=[f32, f16])
def {name}(x: Tensor[T, "N, C, H, W"], {w}: Tensor[f32, "C"], {b}: Tensor[f32, "C"],
{pad}y: Tensor[T, "N, C, H, W"],{groups} eps: f32 = 1e-5):
    """proxy: each plane's mean and squared deviations in one pass; between planes two-pass on the plane means."""
    pm = zeros(N * C)
    s = zeros({slots})
    sw = zeros({slots})
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xv = cast(load(x[r, :]), f32)
            m = mean(xv, axis=1)
            xc = xv - m
            s[r] += m * cast(H * W, f32)
            sw[r] += sum(xc * xc, axis=1)
            pm[r] += m
    ss = zeros({slots})
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            e = pm[r] - s[r]{per}
            ss[r] += e * e * cast(H * W, f32)
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            mu = s[r]{per}
            scale = load({w}[r]) * rsqrt((sw[r] + ss[r]){per} + eps)
            shift = load({b}[r]) - mu * scale
            store(y[r, :], cast(cast(load(x[r, :]), f32) * scale + shift, T))
'''

#: name -> (weight, bias, the group parameter, slots, the scale from a slot total to a mean)
GROUPED = (" * cast(num_groups, f32) / (C * H * W)")
KERNELS = {"group_norm": ("weight", "bias", " num_groups: i32 = 8,", "N * num_groups", GROUPED),
           "group_norm_module": ("gn_weight", "gn_bias", " num_groups: i32 = 1,", "N * num_groups", GROUPED),
           "batch_norm_train": ("weight", "bias", "", "C", " / (N * H * W)")}


def _row(ex, dts, shape, target, timeout) -> str:
    r = largest_case(validate_with_retry(ex, dts, shape, target, timeout))
    est = r.report
    return f"{est.kernel_us:6.2f} us ({100 * est.ideal_fraction:3.0f} %{'' if r.ok else ', VALIDATION FAILED'})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--only", default="", help="comma-separated kernel names (group_norm, group_norm_module, batch_norm_train)")
    ap.add_argument("--task-timeout", type=float, default=BENCH_TASK_TIMEOUT_S)
    args = ap.parse_args(argv)
    from npu_harness import gallery

    only = {k for k in args.only.split(",") if k}
    print(f"cost model ESTIMATES on {args.target}: device time (ideal%), gallery two-pass -> single-pass proxy")
    with tempfile.TemporaryDirectory() as tmp:
        for ex in gallery.discover():
            if ex.name not in KERNELS or (only and ex.name not in only):
                continue
            w, b, groups, slots, per = KERNELS[ex.name]
            adsl = Path(tmp) / f"{ex.name}.adsl"
            pad = " " * (len(ex.name) + 5)
            adsl.write_text(PROXY.format(name=ex.name, w=w, b=b, pad=pad, groups=groups, slots=slots, per=per))
            proxy = replace(ex, adsl=adsl)
            for dts in ex.validation_dtypes():
                for shape in bench_shapes(ex):
                    label = f"{ex.name:<18} {'/'.join(map(str, dts.values())):<4} {'x'.join(map(str, shape.values())) or 'task':<13}"
                    before = _row(ex, dts, shape, args.target, args.task_timeout)
                    after = _row(proxy, dts, shape, args.target, args.task_timeout)
                    print(f"{label} {before} -> {after}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
