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
from ascend_dsl.extern_ops import declared_in, registered
from lowering import DEFAULT_TARGET, PASS_NAMES, all_targets, lower
from lowering.emit.fallback import written_files

from . import assist_cli
from .project_io import write_project
from .subprocess_limits import LimitSettingError, describe_limit, limit_self


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
                   help="bind a dtype variable, e.g. T=f16 (default: with --validate, the variant matching the task's "
                   "data, else the first listed)")
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
    p.add_argument("--cap", type=int, help="scale the task's sizes down (keeping equal sizes equal and multiples "
                   "multiples) until no tensor has more than this many elements; prints the shapes run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--report", action="store_true",
                   help="with --validate sim: print the emulator counters' cost-model ESTIMATE (time, bottleneck, roofline)")
    p.add_argument("--report-json", type=Path, metavar="FILE",
                   help="with --validate sim: write the counters and the cost-model estimate as JSON")
    p.add_argument("--task-timeout", type=float, default=120.0, metavar="S",
                   help="seconds the task file may take to build inputs and the reference (default 120)")
    p.add_argument("--dump-after", default="", metavar="PASS|all",
                   help=f"write the IR after these passes (comma-separated): {', '.join(PASS_NAMES)}")
    assist_cli.add_args(p)
    return p


def main(argv: list[str] | None = None, models=None, parser: argparse.ArgumentParser | None = None) -> int:
    """`models(args)`: the assisted lowering's model for a provider name (kernelgen/cli_lower.py passes it)."""
    args = (parser or build_parser()).parse_args(argv)
    try:
        if argv is None:  # a command (not a call from Python): the tool itself stays within the memory limit
            limit_self()
        return _run(args, models)
    except DslError as e:
        print(e.render(), file=sys.stderr)
        return 3 if "INTERNAL" in e.codes else 2
    except LimitSettingError as e:
        print(f"error[ARGS]: {e}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"error[MEMORY-LIMIT]: ascend-lower exceeded the memory limit of {describe_limit()}\n"
              "   = hint: validate at smaller sizes: --cap N or --set NAME=VALUE", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - a bug of ours: one located line and exit 3, not a traceback
        import traceback

        frame = traceback.extract_tb(e.__traceback__)[-1]
        print(f"error[INTERNAL]: {type(e).__name__}: {e}\n --> {frame.filename}:{frame.lineno}\n"
              "  = hint: this is a bug of ascend-dsl, not of the kernel; please report it with the DSL and task files",
              file=sys.stderr)
        return 3


def _run(args, models=None) -> int:
    task = _task_file(args)
    # extern ops (ascend_dsl/extern_ops.py) declared beside the kernel or in its task are known while it lowers
    declared = {op.name: op for path in dict.fromkeys([args.file, task]) for op in declared_in(path)}
    with registered(list(declared.values())):
        return _run_kernel(args, task, models)


def _run_kernel(args, task: Path, models=None) -> int:
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
    dump = frozenset(x.strip() for x in args.dump_after.split(",") if x.strip())
    overrides = _overrides(args)
    assistant = assist_cli.make_assistant(args, task, overrides, models)
    if not args.validate and not args.export:
        kernel = source.instantiate(dict(args.dtype))
        project, ctx = lower(kernel, args.target, args.file.name, dump, assistant)
        assist_cli.print_notes(assistant)
        _write(args, kernel, project, ctx)
        return 0
    from .validate_cases import KernelVariants

    variants = KernelVariants(source, dict(args.dtype), args.target, args.file.name, dump, assistant,
                              one_launch=bool(args.export) or args.validate in ("acl", "npu"))
    if not args.validate:  # --export alone: the variant the task's data picks
        facts = _export_facts(args, variants, task, overrides)
        _, project, ctx = variants.lower(facts.variant)
        assist_cli.print_notes(assistant)
        _write(args, variants.kernels[facts.variant], project, ctx, variants, facts)
        return 0
    if args.validate == "npu":
        return _validate_npu(args, variants, task, overrides)
    if args.validate == "tiling":
        return _check_tiling(args, variants, task, overrides)
    from .validate import load_cases_for

    cases = load_cases_for(variants.kernels, task, seed=args.seed, overrides=overrides, cap=args.cap,
                           timeout=args.task_timeout)
    first = cases.cases[0].variant or 0
    _, project, ctx = variants.lower(first)
    assist_cli.print_notes(assistant)
    _write(args, variants.kernels[first], project, ctx, variants)
    _print_task(args, cases, variants)
    return _validate(args, variants, cases)


def _task_file(args) -> Path:
    """The task file: --task, else a .adsl kernel's sibling .py, or the .py FILE itself (kernel and task
    together)."""
    return args.task or (args.file if args.file.suffix == ".py" else args.file.with_suffix(".py"))


def _overrides(args) -> dict:
    """--set NAME=VALUE as {name: int or text}."""
    return {k: int(v) if v.lstrip("-").isdigit() else v for k, v in args.set}


def _export_facts(args, variants, task: Path, overrides: dict):
    """What --export takes from the task (its meta-device run at the task's own sizes): without --task and
    without a task file beside FILE, the kernel's name and the DSL defaults."""
    from .export import export_facts

    has_task = args.task is not None or task.is_file()
    return export_facts(variants.kernels, task if has_task else None, overrides, args.task_timeout)


def _export(args, variants, out: Path, facts) -> None:
    from .export import write_export

    _, project, ctx = variants.lower(facts.variant)
    print(f"wrote {write_export(args.export, variants.kernels[facts.variant], project, ctx, facts, out)}")


def _write(args, kernel, project, ctx, variants=None, facts=None) -> None:
    """Write the project (and, with --export, the MultiKernelBench submission beside it)."""
    out = args.out or Path("build/ascendc") / kernel.name
    written = written_files(project)  # with a row fallback (lowering/emit/fallback.py), its launches under fallback/
    files = dict(written)
    for pname, text in ctx.dumps.items():
        files[f"dumps/{PASS_NAMES.index(pname) + 1:02d}_{pname}.adsl"] = text
    write_project(out, files)
    dtypes = ", ".join(f"{k}={v}" for k, v in kernel.type_args) or "-"
    if variants is not None and not variants.explicit and len(variants.kernels) > 1:
        dtypes += ", from the task's data"
    total_ms = sum(ctx.timings.values()) * 1000
    unit = project.manifest.get("tile_unit", "launches")
    tile = ("{} launches run in order: {}".format(len(project.launches), ", ".join(
                f"{la['kernel']} ({la['kind']})" for la in project.manifest["launches"])) if unit == "launches"
            else f"max tile {project.manifest['max_tile']} elements" if unit == "elements" else
            "MIX 1:2, base blocks <= {} x {} x {}".format(*project.manifest["base_block"]) if unit == "base blocks"
            else f"MIX 1:2, {len(project.manifest['stages'])} cube stages joined by workspace tensors" if unit == "stages"
            else "MIX 1:2, flash attention: blocks of <= {max_query_rows} query rows x <= {max_keys} keys, online "
                 "softmax".format(**project.manifest["flash"]) if unit == "query blocks"
            else "planes (or bands of output rows) per tile sized at run time from the shapes" if unit == "planes"
            else "positions per tile and rows of the reduced axis per chunk sized at run time" if unit == "positions"
            else "rows per tile sized at run time from the row length")
    print(f"{kernel.name}: lowered for {ctx.target.name} ({dtypes}) in {total_ms:.1f} ms; "
          f"{tile}, {sum(len(p.manifest['buffers']) for p in project.launches or (project,))} UB buffers")
    print(f"wrote {out}/ ({', '.join(sorted(written))})")
    if project.fallback is not None:
        print(f"fallback/: {len(project.fallback.launches)} launches, run when the fused kernel's tiling finds no "
              "base block at the launch's shapes (a row of N too long) or its estimate is above theirs (B re-read "
              "per few rows: npu_harness/row_fallback.py)")
    if ctx.dumps:
        print(f"IR dumps: {out}/dumps/")
    if args.export and variants is not None:
        _export(args, variants, out, facts or _export_facts(args, variants, _task_file(args), _overrides(args)))


def _shapes(run) -> str:
    """The shapes of a case's tensors as run: forward()'s arguments, then the parameters."""
    from .task_result import is_tensor

    names = list(run.arg_names) + [f"arg{i}" for i in range(len(run.arg_names), len(run.inputs))]
    parts = [f"{n} {list(x.shape)} {x.dtype}" if is_tensor(x) else f"{n}={x!r}" for n, x in zip(names, run.inputs,
                                                                                               strict=False)]
    parts += [f"{k} {list(t.shape)}" for k, t in run.params.items()]
    return ", ".join(parts)


def _print_task(args, cases, variants) -> None:
    """What the task ran as: the sizes --cap chose, the shapes, every dtype conversion."""
    if args.cap:
        if cases.scaling:
            sizes = ", ".join(f"{a} -> {b}" for a, b in sorted(cases.scaling["sizes"].items(), key=lambda kv: int(kv[0])))
            print(f"--cap {args.cap}: sizes scaled {sizes} ({cases.scaling['method']})")
            for note in cases.scaling.get("notes", []):
                print(f"  note: {note}")
        else:
            print(f"--cap {args.cap}: every tensor is within the cap; the task runs at its own sizes")
    groups = cases.format == "groups"
    for run in cases.cases:
        if args.cap and not groups:
            print(f"task shapes: {_shapes(run)}")
        if run.conversions:
            why = ("as --dtype asks" if variants.explicit else "the kernel has no variant for the task's dtypes"
                   if len(variants.kernels) == 1 or not _data_matches(run, variants) else "to the variant picked")
            prefix = f"{run.label}: " if groups else ""
            print(f"{prefix}converted for the kernel ({variants.label(run.variant or 0)}; {why}): "
                  + ", ".join(run.conversions))


def _data_matches(run, variants) -> bool:
    """Whether the case's forward() tensors match the picked variant exactly (conversions only of parameters)."""
    arg_names = set(run.arg_names)
    return not any(c.split(" ", 1)[0] in arg_names for c in run.conversions)


def _validate(args, variants, cases) -> int:
    from .validate_cases import validate_cases

    report = validate_cases(variants, cases, args.validate)
    groups = cases.format == "groups"
    for o in report.outcomes:
        if groups:
            status = "PASS" if o.ok else "FAIL"
            how = o.result.summary().split(" ", 2)[2] if o.result is not None else "(error: below)"
            print(f"{o.run.label} [{_shapes(o.run)}; {variants.label(o.variant)}]: {status} {how}")
            if o.result is not None and o.result.defaults:
                print(f"  {o.result.scalars}")
        elif o.result is not None and o.result.scalars:
            print(o.result.scalars)
        if o.result is not None:
            for c in o.result.comparisons:
                if not groups or not c.ok:
                    print(f"  {c.describe()}")
            if o.result.sim_errors or o.result.detail:
                print(o.result.detail, file=sys.stderr)
        if o.error is not None:
            print(o.error.render(), file=sys.stderr)
    print(report.summary())
    first = report.outcomes[0].result if report.outcomes else None
    if (args.report or args.report_json) and first is not None and first.level == "sim":
        _write_report(first, args.report, args.report_json)
    if groups and report.outcomes and all(o.error is not None for o in report.outcomes):
        return 2
    return 0 if report.ok else 1


def _validate_npu(args, variants, task: Path, overrides: dict) -> int:
    """--validate npu: the project written, then built with CANN and run on the NPU by a worker; one line and
    exit 2 when CANN or torch_npu is missing."""
    from .device.env import NpuUnavailable, require_npu
    from .device.npu_validate import validate_npu

    try:
        require_npu()
    except NpuUnavailable as e:
        print(f"error[NPU-UNAVAILABLE]: {e}", file=sys.stderr)
        return 2
    from .validate import load_cases_for

    shapes = load_cases_for(variants.kernels, task, overrides=overrides, meta=True, timeout=args.task_timeout)
    v = shapes.cases[0].variant or 0  # the variant the task's data picks (the worker picks the same)
    _, project, ctx = variants.lower(v)
    _write(args, variants.kernels[v], project, ctx, variants)
    result = validate_npu(args.file, variants.source.name, dict(args.dtype), args.target, task, seed=args.seed,
                          overrides=overrides, cap=args.cap)
    for c in result.comparisons:
        print(f"  {c.describe()}")
    if result.error:
        print(result.error, file=sys.stderr)
    print(result.summary())
    return 0 if result.ok else 1


def _check_tiling(args, variants, task: Path, overrides: dict) -> int:
    """--validate tiling: bind the task's shapes (meta device, no data) and run only the host tiling."""
    from .binding import bind
    from .tiling_probe import launch_blocks, launch_failure
    from .validate import load_cases_for

    cases = load_cases_for(variants.kernels, task, overrides=overrides, meta=True, timeout=args.task_timeout)
    status = 0
    for run in cases.cases:
        v = run.variant or 0
        _, project, ctx = variants.lower(v)
        if run is cases.cases[0]:
            _write(args, variants.kernels[v], project, ctx, variants)
        b = bind(variants.kernels[v], run)
        form = ""
        if project.fallback is not None:  # the form the host picks at these shapes (npu_harness/row_fallback.py)
            from .row_fallback import pick

            f = pick(variants.kernels[v], ctx.lowered, project, ctx, b.symbols, b.scalars)
            project, ctx, form = f.project, f.ctx, f"; the {f.name} form"
        blocks = launch_blocks(project, ctx.target.name, b.symbols, b.scalars, ctx.target.aiv)
        sizes = ", ".join(f"{k}={val}" for k, val in b.symbols.items()) + form
        label = f"{run.label}: " if cases.format == "groups" else ""
        if blocks == 0:
            why = launch_failure(project, ctx.target.name, b.symbols, b.scalars, ctx.target.aiv)
            print(f"{label}tiling: FAIL ({sizes}): the host tiling launches no block (a launch reports TILING: {why})")
            status = 1
        else:
            print(f"{label}tiling: PASS ({sizes}; {blocks} blocks of {ctx.target.aiv} vector cores)")
    return status


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
