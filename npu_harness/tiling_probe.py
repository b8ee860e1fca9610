"""Run only a lowered kernel's host tiling function at given shapes: does it launch?

The host tiling code (`<kernel>_tiling.h`) decides from runtime shapes how a kernel runs (cores, rows
or elements per tile, chunked long rows); it returns 0 blocks when the kernel cannot run at those
shapes, which a launch reports as TILING. Probing it needs no tensor data, so benchmark-scale
shapes (a 4096 x 393216 softmax, 16 x 64 x 256 x 256 norms) are checked in milliseconds, where the
emulator validates smaller ones. One binary per kernel (cached by content) serves every shape.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from ascend_dsl.diagnostics import DslError
from lowering.emit import EmittedProject

from .sim.compiler import CompileError, compile_program, run_program
from .sim.runner import sim_defines

_MAIN = '''#include <cstdio>
#include <cstdlib>
#include "{name}_tiling.h"
int main(int argc, char** argv)
{{
    if (argc != {argc}) {{
        std::fprintf(stderr, "usage: probe {usage}\\n");
        return 2;
    }}
    {tiling_type} t{{}};
    const unsigned blocks = {tiling_fn}({args});
    std::printf("{{\\"blocks\\": %u{field_fmt}", blocks{field_args});
{why}    std::printf("}}\\n");
    return 0;
}}
'''


#: With a tiling_why function (lowering/emit/shared.py), 0 blocks also print "why" (its text has no quotes).
_WHY = """    if (blocks == 0) {{
        char why[1024];
        {fn}(t, why, sizeof why);
        std::printf(", \\"why\\": \\"%s\\"", why);
    }}
"""


def probe_source(project: EmittedProject, fields: tuple[str, ...] = ()) -> str:
    """A main() that calls the tiling function with the shape symbols, scalars and core count from argv
    and prints the block count and the named fields of the tiling struct as JSON."""
    m = project.manifest
    names = [*m["symbols"], *(s["name"] for s in m["scalars"]), "coreNum"]
    args = [f"std::strtoull(argv[{i}], nullptr, 10)" for i, _ in enumerate(m["symbols"], 1)]
    args += [f"std::strtod(argv[{i}], nullptr)" for i, _ in enumerate(m["scalars"], len(args) + 1)]
    args += [f"static_cast<uint32_t>(std::strtoul(argv[{len(args) + 1}], nullptr, 10))", "&t"]
    return _MAIN.format(name=project.name, argc=len(names) + 1, usage=" ".join(names), tiling_type=m["tiling_type"],
                        tiling_fn=m["tiling_fn"], args=", ".join(args),
                        field_fmt="".join(f', \\"{f}\\": %llu' for f in fields),
                        field_args="".join(f", (unsigned long long)t.{f}" for f in fields),
                        why=_WHY.format(fn=why) if (why := getattr(project.view, "tiling_why", "")) else "")


def run_tiling(project: EmittedProject, target: str, symbols: dict[str, int], scalars: dict[str, float],
               core_num: int, fields: tuple[str, ...] = ()) -> dict[str, int]:
    """`blocks` the host tiling launches at these shapes (0: the kernel cannot run there: TILING), and
    the values it sets for the named fields of the tiling struct."""
    m = project.manifest
    kind = "mix" if m["kernel_type"].startswith("MIX") else "vector"
    with tempfile.TemporaryDirectory(prefix="ascend-probe-") as tmp:
        src = Path(tmp)
        for fname, text in project.files.items():  # the tiling header and any it includes (a multi-stage
            if fname.endswith("_tiling.h"):        # kernel's per-stage headers)
                (src / fname).write_text(text)
        main = src / f"{project.name}_probe.cpp"
        main.write_text(probe_source(project, tuple(fields)))
        try:
            binary = compile_program([main], defines=sim_defines(target, kind))
        except CompileError as e:
            raise DslError.at("INTERNAL", f"the host tiling code does not compile:\n{e.stderr.strip()[-2000:]}",
                              None) from None
    args = [str(symbols[s]) for s in m["symbols"]] + [repr(float(scalars[s["name"]])) for s in m["scalars"]]
    res = run_program(binary, [*args, str(core_num)], timeout=30)
    if res.returncode != 0 or res.timed_out:
        raise DslError.at("INTERNAL", f"the host tiling probe failed (exit {res.returncode}): {res.stderr.strip()}",
                          None)
    return json.loads(res.stdout)


def with_workspace_symbols(project: EmittedProject, symbols: dict[str, int], scalars: dict[str, float]) -> dict[str, int]:
    """`symbols` and those the kernel's compiler-declared workspaces define (manifest `workspace_symbols`: the
    NC1HWC0 route's C1 = ceil(C / 16)), which the launches' host tilings take like any shape symbol."""
    out = dict(symbols)
    for d in project.manifest.get("workspace_symbols", []):
        num = math.prod(out[f] if isinstance(f, str) and f in out else scalars[f] if isinstance(f, str) else f for f in d["num"])
        den = math.prod(out[f] if isinstance(f, str) and f in out else scalars[f] if isinstance(f, str) else f for f in d["den"])
        out[d["name"]] = int(-(-num // den) if d["ceil"] else num // den)
    return out


def launch_failure(project: EmittedProject, target: str, symbols: dict[str, int], scalars: dict[str, float],
                   core_num: int) -> str:
    """Why the host tiling launches no block at these shapes: the kernel's own explanation with the sizes when
    it has one (tiling_why), else its fixed TILING message. A kernel of several launches: the first launch that
    cannot run, named."""
    if project.launches:
        symbols = with_workspace_symbols(project, symbols, scalars)
        for sub in project.launches:
            if launch_blocks(sub, target, symbols, scalars, core_num) == 0:
                return f"launch {sub.name}: {launch_failure(sub, target, symbols, scalars, core_num)}"
        return ""
    return run_tiling(project, target, symbols, scalars, core_num).get("why") or project.view.tiling_error


def launch_blocks(project: EmittedProject, target: str, symbols: dict[str, int], scalars: dict[str, float],
                  core_num: int) -> int:
    """Blocks the host tiling launches at these shapes (0: the kernel cannot run there: TILING); a kernel of
    several launches: the fewest any launch takes (0 when one cannot run)."""
    if project.launches:
        symbols = with_workspace_symbols(project, symbols, scalars)
        return min(launch_blocks(sub, target, symbols, scalars, core_num) for sub in project.launches)
    return run_tiling(project, target, symbols, scalars, core_num)["blocks"]
