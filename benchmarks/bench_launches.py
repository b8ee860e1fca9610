"""Kernels of several launches as the cost model sees them (ESTIMATES, not measurements): a conv + batch norm +
ReLU chain and a GEMM + layer norm chain, each as one `.adsl` of two launches (examples/fuse/conv_batch_norm_relu,
examples/fuse/gemm_layer_norm), beside the same ops as separate kernels (as PyTorch runs them eagerly: conv, batch
norm, ReLU; linear, layer norm). (One fused kernel is not an option for either: a conv's vector block only
stores, relu's or casts the accumulator, and a matmul epilogue takes no [N] vector such as the norm's weight.)

    python benchmarks/bench_launches.py [--target ascend910b1] [--conv N,C,K,H,W] [--gemm M,K,N]

Every kernel is validated in the emulator against torch (a row is printed only with its PASS/FAIL) and its
estimate is the cost model's for the emulator's counters; a kernel of several launches adds its launches'
estimates (npu_harness/cost/launches.py: times and launch overheads add). ideal% = the ideal for the whole
problem (max of the least GM traffic of its inputs and outputs, the useful cube MACs at the cube's peak) / the
estimate: the same figure for every form, so the forms compare directly. Defaults are scaled to what the
emulator steps in about a minute on one core (issue 14's 16x64x256x256 conv is ~77 G multiply-adds:
`--conv 16,64,128,256,256` runs it, for a long time); per core a larger problem repeats the same tiles.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONV = '''@kernel(T=[f16])
def conv(x: Tensor[T, "N, C, H, W"], conv_weight: Tensor[T, "K, C, KH, KW"], y: Tensor[f32, "N, K, OH, OW"]):
    for blk in split(N, K, OH, OW, cores=AIC):
        with cube:
            acc = conv2d(x[blk], conv_weight[blk], padding=1)
        with vector:
            store(y[blk], acc)
'''
BATCH_NORM = '''@kernel
def bn(x: Tensor[f32, "N, C, H, W"], w: Tensor[f32, "C"], b: Tensor[f32, "C"], m: Tensor[f32, "C"],
       v: Tensor[f32, "C"], y: Tensor[f32, "N, C, H, W"], eps: f32 = 1e-5):
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            scale = load(w[r]) * rsqrt(load(v[r]) + eps)
            store(y[r, :], load(x[r, :]) * scale + (load(b[r]) - load(m[r]) * scale))
'''
RELU = '''@kernel
def relu_k(x: Tensor[f32, "L"], y: Tensor[f32, "L"]):
    for blk in split(L, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], relu(load(x[t])))
'''
LINEAR = '''@kernel(T=[f16])
def linear(x: Tensor[T, "M, K"], fc_weight: Tensor[T, "N, K"], fc_bias: Tensor[f32, "N"], y: Tensor[f32, "M, N"]):
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(x[blk], fc_weight[blk], bias=fc_bias, transpose_b=True)
        with vector:
            store(y[blk], acc)
'''
LAYER_NORM = '''@kernel
def ln(h: Tensor[f32, "M, N"], w: Tensor[f32, "N"], b: Tensor[f32, "N"], y: Tensor[f32, "M, N"], eps: f32 = 1e-5):
    for blk in split(M, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            v = load(h[r, :])
            d = v - mean(v, axis=1)
            store(y[r, :], d * rsqrt(mean(d * d, axis=1) + eps) * load(w[:]) + load(b[:]))
'''
def validate(text_or_path, inputs: list, outputs: list, target: str, task_overrides: dict | None = None):
    """(ok, estimate or None, note) of one kernel: lowered, validated in the emulator against `outputs` (or the
    gallery task's own reference when `text_or_path` is a gallery .adsl and `task_overrides` is given)."""
    from ascend_dsl import load_file, parse_text
    from ascend_dsl.diagnostics import DslError
    from lowering import lower
    from npu_harness.task import TaskRun
    from npu_harness.validate import load_task_for, validate_sim

    try:
        if isinstance(text_or_path, Path):
            k = load_file(text_or_path)[0].instantiate()
            run = load_task_for(k, text_or_path.with_suffix(".py"), overrides=task_overrides)
        else:
            k = parse_text(text_or_path, "bench.adsl")[0].instantiate()
            run = TaskRun(inputs, outputs)
        project, ctx = lower(k, target)
        r = validate_sim(k, ctx.lowered, project, ctx, run)
    except DslError as e:
        return False, None, e.render().splitlines()[0]
    note = "" if r.ok else (r.detail.splitlines() or ["outputs differ"])[-1][:120]
    return r.ok, r.report, note


def row(label: str, parts: list, ideal_us: float | None) -> str:
    if any(p[1] is None for p in parts):
        return f"  {label:<44} {'-':>12}  cannot run: {'; '.join(p[2] for p in parts if p[2])}"
    total = sum(p[1].time_us for p in parts)
    ok = "PASS" if all(p[0] for p in parts) else "FAIL"
    launches = " + ".join(f"{p[1].time_us:.1f}" for p in parts)
    if len(parts) == 1 and "launches in order: " in parts[0][1].note:  # one kernel of several launches: each one
        launches = parts[0][1].note.split("launches in order: ")[1].removesuffix(" us")
    ideal = f"{100 * ideal_us / total:5.1f}%" if ideal_us else "   - "
    return f"  {label:<44} {total:10.1f} us  ideal% {ideal}  [{ok}; {launches} us]"


def conv_chain(n: int, c: int, k: int, h: int, w: int, target: str) -> None:
    from npu_harness.cost import load_params, target_for

    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, c, h, w, generator=g).half()
    wt = (torch.randn(k, c, 3, 3, generator=g) * 0.1).half()
    bw, bb, bm = torch.rand(k, generator=g) + 0.5, torch.rand(k, generator=g) - 0.5, torch.rand(k, generator=g) - 0.5
    bv = torch.rand(k, generator=g) + 0.5
    conv = torch.nn.functional.conv2d(x.float(), wt.float(), padding=1)
    scale = bw / torch.sqrt(bv + 1e-5)
    bn = conv * scale[:, None, None] + (bb - bm * scale)[:, None, None]
    print(f"conv2d 3x3 {c}->{k} on {n}x{c}x{h}x{w} (f16, padding 1) + batch norm (eval) + ReLU, {target}:")
    launches = validate(ROOT / "examples/fuse/conv_batch_norm_relu.adsl", [], [], target,
                        {"batch_size": n, "in_channels": c, "out_channels": k, "height": h, "width": w})
    p = load_params(target_for(target))
    least = x.numel() * 2 + wt.numel() * 2 + 4 * k * 4 + conv.numel() * 4
    ideal = max(least / (p.hbm_gbps * 1e3), n * k * h * w * c * 9 / (p.cube_macs_per_cycle * p.clock_ghz * 1e3
                                                                             * p.aic))
    print(row("one .adsl, 2 launches (conv; bn+relu)", [launches], ideal))
    sep = [validate(CONV, [x, wt], [conv], target), validate(BATCH_NORM, [conv, bw, bb, bm, bv], [bn], target),
           validate(RELU, [bn.reshape(-1)], [torch.relu(bn).reshape(-1)], target)]
    print(row("separate kernels (conv; bn; relu)", sep, ideal))


def gemm_chain(m: int, kd: int, n: int, target: str) -> None:
    from npu_harness.cost import load_params, target_for

    g = torch.Generator().manual_seed(0)
    x = torch.randn(m, kd, generator=g).half()
    wt = (torch.randn(n, kd, generator=g) * 0.05).half()
    bias, lw, lb = torch.randn(n, generator=g), torch.rand(n, generator=g) + 0.5, torch.rand(n, generator=g) - 0.5
    hid = x.float() @ wt.float().T + bias
    ref = torch.nn.functional.layer_norm(hid, (n,), lw, lb, 1e-5)
    print(f"linear {kd}->{n} on {m} rows (f16) + layer norm over {n}, {target}:")
    p = load_params(target_for(target))
    least = x.numel() * 2 + wt.numel() * 2 + 3 * n * 4 + ref.numel() * 4
    ideal = max(least / (p.hbm_gbps * 1e3), m * n * kd / (p.cube_macs_per_cycle * p.clock_ghz * 1e3 * p.aic))
    launches = validate(ROOT / "examples/fuse/gemm_layer_norm.adsl", [], [], target, {"M": m, "K": kd, "N": n})
    print(row("one .adsl, 2 launches (linear; layer norm)", [launches], ideal))
    sep = [validate(LINEAR, [x, wt, bias], [hid], target), validate(LAYER_NORM, [hid, lw, lb], [ref], target)]
    print(row("separate kernels (linear; layer norm)", sep, ideal))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--conv", default="2,64,128,64,64", help="N,C,K,H,W")
    ap.add_argument("--gemm", default="1024,1024,512", help="M,K,N")
    args = ap.parse_args(argv)
    print("ESTIMATES from the cost model (emulator counters), not measurements; every kernel validated in the emulator")
    conv_chain(*map(int, args.conv.split(",")), args.target)
    gemm_chain(*map(int, args.gemm.split(",")), args.target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
