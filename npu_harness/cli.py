"""`ascend-lower`: DSL file -> AscendC project, optionally validated against a PyTorch task.

Exit codes: 0 success (validation PASS), 1 validation FAIL, 2 user error, 3 internal compiler error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ascend_dsl import load_file
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import BY_NAME
from lowering import DEFAULT_TARGET, PASS_NAMES, all_targets, lower

from .project_io import write_project


def _kv(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got '{text}'")
    k, v = text.split("=", 1)
    return k.strip(), v.strip()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ascend-lower", description="Lower an ascend-dsl kernel to AscendC.")
    p.add_argument("file", type=Path, help="a .adsl file, or a .py file with @kernel functions")
    p.add_argument("-o", "--out", type=Path, help="output directory (default: build/ascendc/<kernel>)")
    p.add_argument("--target", default=DEFAULT_TARGET, help=f"one of: {', '.join(sorted(all_targets()))}")
    p.add_argument("--kernel", help="which kernel of the file (default: the only/first one)")
    p.add_argument("--dtype", action="append", type=_kv, default=[], metavar="VAR=DTYPE",
                   help="bind a dtype variable, e.g. T=f16 (default: the first listed)")
    p.add_argument("--validate", choices=["sim", "interp", "tiling", "acl", "npu"],
                   help="validate against the task's PyTorch reference (sim, interp), or only check that the host "
                   "tiling launches at the task's shapes, without data (tiling: benchmark-scale sizes in seconds); "
                   "acl: the emitted host program on the emulator's ACL runtime; npu: built with CANN, run, compared "
                   "and timed against PyTorch eager on the NPU (needs CANN + torch_npu)")
    p.add_argument("--export", choices=["mkb-direct", "mkb-opproject"],
                   help="also write a MultiKernelBench submission: mkb-direct (ascendc_direct_launch JSON) or "
                   "mkb-opproject (the six-string op-project .py); uses the task (if any) for scalars and output shapes")
    p.add_argument("--task", type=Path, help="KernelBench-format task file (default: the .py next to a .adsl FILE, or a .py FILE itself)")
    p.add_argument("--set", action="append", type=_kv, default=[], metavar="NAME=INT",
                   help="override a module-level size constant of the task, e.g. dim=1000003")
    p.add_argument("--cap", type=int, help="scale the task's size constants down until every input has at most "
                   "this many elements")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--report", action="store_true",
                   help="with --validate sim: print the emulator counters' cost-model ESTIMATE (time, bottleneck, roofline)")
    p.add_argument("--report-json", type=Path, metavar="FILE",
                   help="with --validate sim: write the counters and the cost-model estimate as JSON")
    p.add_argument("--task-timeout", type=float, default=120.0, metavar="S",
                   help="seconds the task file may take to build inputs and the reference (default 120)")
    p.add_argument("--dump-after", default="", metavar="PASS|all",
                   help=f"write the IR after these passes (comma-separated): {', '.join(PASS_NAMES)}")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except DslError as e:
        print(e.render(), file=sys.stderr)
        return 3 if "INTERNAL" in e.codes else 2
    except KeyboardInterrupt:
        return 130


def _run(args) -> int:
    sources = load_file(args.file)
    if not sources:
        raise DslError.at("NO-KERNEL", f"{args.file} defines no @kernel function", None)
    if args.kernel:
        matches = [s for s in sources if s.name == args.kernel]
        if not matches:
            raise DslError.at("NO-KERNEL", f"no kernel '{args.kernel}' in {args.file}", None,
                              f"kernels: {', '.join(s.name for s in sources)}")
        source = matches[0]
    else:
        source = sources[0]
    for _var, dt in args.dtype:
        if dt not in BY_NAME:
            raise DslError.at("UNKNOWN-DTYPE", f"unknown dtype '{dt}' in --dtype", None,
                              f"dtypes: {', '.join(BY_NAME)}")
    kernel = source.instantiate(dict(args.dtype))
    dump = frozenset(x.strip() for x in args.dump_after.split(",") if x.strip())
    project, ctx = lower(kernel, args.target, args.file.name, dump)
    out = args.out or Path("build/ascendc") / kernel.name
    files = dict(project.files)
    for pname, text in ctx.dumps.items():
        files[f"dumps/{PASS_NAMES.index(pname) + 1:02d}_{pname}.adsl"] = text
    write_project(out, files)
    dtypes = ", ".join(f"{k}={v}" for k, v in kernel.type_args) or "-"
    total_ms = sum(ctx.timings.values()) * 1000
    unit = project.manifest["tile_unit"]
    tile = (f"max tile {project.manifest['max_tile']} elements" if unit == "elements" else
            "MIX 1:2, base blocks <= {} x {} x {}".format(*project.manifest["base_block"]) if unit == "base blocks"
            else "planes (or bands of output rows) per tile sized at run time from the shapes" if unit == "planes"
            else "positions per tile and rows of the reduced axis per chunk sized at run time" if unit == "positions"
            else "rows per tile sized at run time from the row length")
    print(f"{kernel.name}: lowered for {ctx.target.name} ({dtypes}) in {total_ms:.1f} ms; "
          f"{tile}, {len(project.manifest['buffers'])} UB buffers")
    print(f"wrote {out}/ ({', '.join(sorted(project.files))})")
    if ctx.dumps:
        print(f"IR dumps: {out}/dumps/")
    # A .adsl kernel's reference is its sibling .py; a .py file may hold the kernel and the task together.
    task = args.task or (args.file if args.file.suffix == ".py" else args.file.with_suffix(".py"))
    overrides = {k: int(v) if v.lstrip("-").isdigit() else v for k, v in args.set}
    if args.export:
        from .export import write_export

        print(f"wrote {write_export(args.export, kernel, project, ctx, task, out, overrides, args.task_timeout)}")
    if not args.validate:
        return 0
    from .validate import load_task_for, validate_interp, validate_sim

    if args.validate == "tiling":
        return _check_tiling(kernel, project, ctx, task, overrides, args.task_timeout)
    if args.validate == "npu":
        return _validate_npu(args, kernel, task, overrides)
    run = load_task_for(kernel, task, seed=args.seed, overrides=overrides, cap=args.cap, timeout=args.task_timeout)
    if run.constants and args.cap:
        print("task sizes used: " + ", ".join(f"{k}={v}" for k, v in run.constants.items()))
    if args.validate == "interp":
        result = validate_interp(kernel, run)
    elif args.validate == "acl":
        from .device.host_program import validate_host

        result = validate_host(kernel, project, ctx, run)
    else:
        result = validate_sim(kernel, ctx.lowered, project, ctx, run)
    for c in result.comparisons:
        print(f"  {c.describe()}")
    if result.sim_errors or result.detail:
        print(result.detail, file=sys.stderr)
    print(result.summary())
    if (args.report or args.report_json) and result.level == "sim":
        _write_report(result, args.report, args.report_json)
    return 0 if result.ok else 1


def _validate_npu(args, kernel, task: Path, overrides: dict) -> int:
    """--validate npu: one line and exit 2 when CANN or torch_npu is missing."""
    from .device.env import NpuUnavailable
    from .device.npu_validate import validate_npu

    try:
        result = validate_npu(args.file, kernel.name, dict(args.dtype), args.target, task, seed=args.seed,
                              overrides=overrides, cap=args.cap)
    except NpuUnavailable as e:
        print(f"error[NPU-UNAVAILABLE]: {e}", file=sys.stderr)
        return 2
    for c in result.comparisons:
        print(f"  {c.describe()}")
    if result.error:
        print(result.error, file=sys.stderr)
    print(result.summary())
    return 0 if result.ok else 1


def _check_tiling(kernel, project, ctx, task: Path, overrides: dict, timeout: float) -> int:
    """--validate tiling: bind the task's shapes (meta device, no data) and run only the host tiling."""
    from .binding import bind_shapes
    from .task import run_task_shapes
    from .tiling_probe import launch_blocks

    shapes = run_task_shapes(task, overrides=overrides, timeout=timeout)
    symbols, scalars = bind_shapes(kernel, shapes.inputs, shapes.outputs, shapes.attrs)
    blocks = launch_blocks(project, ctx.target.name, symbols, scalars, ctx.target.aiv)
    sizes = ", ".join(f"{k}={v}" for k, v in symbols.items())
    if blocks == 0:
        from lowering.emit import build_view

        why = build_view(ctx.lowered, ctx).get("tiling_error", "the host tiling found no tile that fits the Unified "
                                               "Buffer")
        print(f"tiling: FAIL ({sizes}): the host tiling launches no block (a launch reports TILING: {why})")
        return 1
    print(f"tiling: PASS ({sizes}; {blocks} blocks of {ctx.target.aiv} vector cores)")
    return 0


def _write_report(result, show: bool, json_path: Path | None) -> None:
    """--report / --report-json: the cost model's estimate (an ESTIMATE, not a measurement)."""
    import json

    est = result.report
    if show:
        print(est.text() if est is not None else "cost model: no emulator counters (run failed?)")
    if json_path:
        from .cost import DISCLAIMER

        data = {"note": DISCLAIMER, "ok": result.ok, "shapes": result.shapes,
                "estimate": est.to_dict() if est is not None else None, "counters": result.counters}
        json_path.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
