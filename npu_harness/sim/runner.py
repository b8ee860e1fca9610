"""`ascend-sim run KERNEL.cpp --launch LAUNCH.json`: run any AscendC kernel written against the emulated
API subset (docs/emulator.md "Standalone runner").

Exit status: 0 clean run; 1 the emulator reported faults (``error[CODE]: ...`` lines), the kernel
does not compile, or it hangs; 2 bad launch input (JSON, .npy files, tiling fields that do not match
the struct).

The launch description (paths relative to the JSON file)::

    {"entry": "add_custom", "blocks": 8, "kernel_type": "vector",        # vector | cube | mix
     "target": "ascend910b1",                                            # optional (--target wins)
     "headers": ["add_tiling.h"],                                        # optional, included first
     "args": [
       {"name": "x", "kind": "input", "npy": "x.npy"},
       {"name": "z", "kind": "output", "dtype": "float32", "shape": [8, 2048], "init": "poison"},
       {"name": "ws", "kind": "workspace", "bytes": 1024},
       {"name": "n", "kind": "scalar", "ctype": "uint32_t", "value": 16384},
       {"name": "tiling", "kind": "tiling", "type": "AddTiling", "pass": "value",   # or "gm"
        "header": "add_tiling.h",
        "fields": [{"name": "totalLength", "ctype": "uint32_t", "value": 16384}]}]}

The generated driver includes the kernel file, allocates GM with ``sim::GmAlloc``, calls
``sim::Launch(blocks, [&] { entry(args...); })`` and writes every output to ``DIR/<name>.npy``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .compiler import CompileError, RunResult, compile_program, run_program
from .iodir import scratch_dir, write_array

EXIT_OK, EXIT_FAULT, EXIT_BAD_LAUNCH = 0, 1, 2

#: numpy dtype name -> C++ element type (bfloat16: give the data as uint16 bit patterns)
DTYPES: dict[str, str] = {
    "float32": "float", "float16": "half", "bfloat16": "bfloat16_t", "float64": "double",
    "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
    "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t", "bool": "bool",
}
_NP_STORAGE = {"bfloat16": "uint16"}

#: scalar / tiling field C++ types and how the driver parses them (sscanf format, parse type)
CTYPES: dict[str, tuple[str, str]] = {
    "int8_t": ("%lld", "long long"), "int16_t": ("%lld", "long long"), "int32_t": ("%lld", "long long"),
    "int64_t": ("%lld", "long long"), "uint8_t": ("%llu", "unsigned long long"),
    "uint16_t": ("%llu", "unsigned long long"), "uint32_t": ("%llu", "unsigned long long"),
    "uint64_t": ("%llu", "unsigned long long"), "bool": ("%lld", "long long"), "int": ("%lld", "long long"),
    "float": ("%lf", "double"), "double": ("%lf", "double"), "half": ("%lf", "double"),
    "bfloat16_t": ("%lf", "double"),
}

KERNEL_TYPES = ("vector", "cube", "mix")


class LaunchError(Exception):
    """Bad launch input (exit 2)."""


@dataclass
class GmArg:
    name: str
    kind: str  # input / output / workspace
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    data: np.ndarray | None = None
    init: str = "poison"
    out_name: str = ""


@dataclass
class Launch:
    entry: str
    blocks: int
    kernel_type: str
    target: str | None
    headers: list[Path]
    order: list[tuple[str, object]]  # (kind, spec) in call order
    base: Path
    tiling_key: int | None = None


#: ge::DataType enumerators (ORIG_DTYPE_<NAME> of op projects; ref_next §6.3) and ge::Format FORMAT_ND
GE_DTYPES: dict[str, tuple[str, int]] = {
    "float32": ("DT_FLOAT", 0), "float16": ("DT_FLOAT16", 1), "int8": ("DT_INT8", 2), "int32": ("DT_INT32", 3),
    "uint8": ("DT_UINT8", 4), "int16": ("DT_INT16", 6), "uint16": ("DT_UINT16", 7), "uint32": ("DT_UINT32", 8),
    "int64": ("DT_INT64", 9), "uint64": ("DT_UINT64", 10), "float64": ("DT_DOUBLE", 11), "bool": ("DT_BOOL", 12),
    "bfloat16": ("DT_BF16", 27),
}


def _fields(fields: object, where: str, prefix: str = "") -> list[tuple[str, str, str]]:
    """Flatten tiling fields into (C++ member path, ctype, value): a field with "fields" is a nested struct
    (TILING_DATA_FIELD_DEF_STRUCT, e.g. a TCubeTiling), a list "value" an array (TILING_DATA_FIELD_DEF_ARR);
    dotted names ("cubeTilingData.M") also reach nested members."""
    if not isinstance(fields, list):
        raise LaunchError(f"{where}: fields must be a list")
    out = []
    for j, f in enumerate(fields):
        at = f"{where}.fields[{j}]"
        if not isinstance(f, dict):
            raise LaunchError(f"{at}: expected an object")
        name = f.get("name")
        if not isinstance(name, str) or not all(p.isidentifier() for p in name.split(".")):
            raise LaunchError(f"{at}.name: {name!r} is not a C++ member name")
        path = f"{prefix}{name}"
        if "fields" in f:
            out += _fields(f["fields"], f"{at} ('{name}')", path + ".")
            continue
        ctype = f.get("ctype")
        if ctype not in CTYPES:
            raise LaunchError(f"{at} ('{name}'): ctype {ctype!r} not supported")
        value = f.get("value")
        if isinstance(value, list):
            for k, v in enumerate(value):
                out.append((f"{path}[{k}]", ctype, _number(v, ctype, f"{at} ('{name}').value[{k}]")))
        else:
            out.append((path, ctype, _number(value, ctype, f"{at} ('{name}').value")))
    return out


def _ident(name: object, what: str) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise LaunchError(f"{what}: {name!r} is not a C++ identifier")
    return name


def _int(v: object, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise LaunchError(f"{what}: expected an integer, got {v!r}")
    return v


def _number(v: object, ctype: str, what: str) -> str:
    if ctype in ("float", "double", "half", "bfloat16_t"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise LaunchError(f"{what}: expected a number, got {v!r}")
        return repr(float(v))
    if isinstance(v, bool):
        return str(int(v))
    if not isinstance(v, int):
        raise LaunchError(f"{what}: expected an integer, got {v!r}")
    bits = {"int8_t": 8, "int16_t": 16, "int32_t": 32, "int": 32, "int64_t": 64, "uint8_t": 8, "uint16_t": 16,
            "uint32_t": 32, "uint64_t": 64, "bool": 1}[ctype]
    lo, hi = (0, (1 << bits) - 1) if ctype.startswith("u") or ctype == "bool" else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if not lo <= v <= hi:
        raise LaunchError(f"{what}: {v} does not fit {ctype}")
    return str(v)


def parse_launch(path: Path) -> Launch:
    try:
        spec = json.loads(path.read_text())
    except OSError as e:
        raise LaunchError(f"cannot read {path}: {e}") from None
    except json.JSONDecodeError as e:
        raise LaunchError(f"{path}: invalid JSON: {e}") from None
    if not isinstance(spec, dict):
        raise LaunchError(f"{path}: the launch description must be a JSON object")
    base = path.resolve().parent
    unknown = set(spec) - {"entry", "blocks", "kernel_type", "target", "headers", "args", "comment", "tiling_key"}
    if unknown:
        raise LaunchError(f"unknown launch key(s): {', '.join(sorted(unknown))}")
    entry = _ident(spec.get("entry"), "entry")
    blocks = _int(spec.get("blocks"), "blocks")
    if blocks < 1:
        raise LaunchError(f"blocks: {blocks} must be >= 1")
    tiling_key = spec.get("tiling_key")
    if tiling_key is not None and (_int(tiling_key, "tiling_key") < 0 or tiling_key >= 1 << 64):
        raise LaunchError(f"tiling_key: {tiling_key} must be a non-negative 64-bit integer")
    ktype = spec.get("kernel_type", "vector")
    if ktype not in KERNEL_TYPES:
        raise LaunchError(f"kernel_type: {ktype!r} is not one of {', '.join(KERNEL_TYPES)}")
    headers = []
    for h in spec.get("headers", []):
        hp = (base / h).resolve()
        if not hp.is_file():
            raise LaunchError(f"headers: {hp} does not exist")
        headers.append(hp)
    args = spec.get("args")
    if not isinstance(args, list):
        raise LaunchError("args: expected a list")
    order: list[tuple[str, object]] = []
    names: set[str] = set()
    tilings = 0
    for i, a in enumerate(args):
        if not isinstance(a, dict):
            raise LaunchError(f"args[{i}]: expected an object")
        name = _ident(a.get("name"), f"args[{i}].name")
        if name in names:
            raise LaunchError(f"args[{i}]: duplicate name '{name}'")
        names.add(name)
        kind = a.get("kind")
        where = f"args[{i}] ('{name}')"
        if kind == "input":
            npy = a.get("npy")
            if not isinstance(npy, str):
                raise LaunchError(f"{where}: an input needs \"npy\": FILE")
            try:
                data = np.load(base / npy, allow_pickle=False)
            except (OSError, ValueError) as e:
                raise LaunchError(f"{where}: cannot load {base / npy}: {e}") from None
            dtype = a.get("dtype", str(data.dtype))
            if dtype not in DTYPES:
                raise LaunchError(f"{where}: dtype {dtype!r} not supported (have: {', '.join(DTYPES)})")
            storage = np.dtype(_NP_STORAGE.get(dtype, dtype))
            if data.dtype != storage:
                raise LaunchError(f"{where}: {npy} holds {data.dtype}, expected {storage}")
            data = np.ascontiguousarray(data)
            order.append(("gm", GmArg(name, "input", dtype, tuple(data.shape), data.nbytes, data)))
        elif kind == "output":
            dtype = a.get("dtype")
            if dtype not in DTYPES:
                raise LaunchError(f"{where}: output dtype {dtype!r} not supported (have: {', '.join(DTYPES)})")
            shape = a.get("shape")
            if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                      for d in shape):
                raise LaunchError(f"{where}: shape must be a list of non-negative integers")
            init = a.get("init", "poison")
            if init not in ("poison", "zeros"):
                raise LaunchError(f"{where}: init must be \"poison\" or \"zeros\"")
            nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(_NP_STORAGE.get(dtype, dtype)).itemsize
            out_name = a.get("npy", f"{name}.npy")
            if not isinstance(out_name, str) or "/" in out_name:
                raise LaunchError(f"{where}: npy must be a plain file name")
            order.append(("gm", GmArg(name, "output", dtype, tuple(shape), nbytes, None, init, out_name)))
        elif kind == "workspace":
            nbytes = _int(a.get("bytes", 0), f"{where}.bytes")
            if nbytes < 0:
                raise LaunchError(f"{where}: bytes must be >= 0")
            order.append(("gm", GmArg(name, "workspace", "uint8", (nbytes,), nbytes, None, "zeros")))
        elif kind == "scalar":
            ctype = a.get("ctype")
            if ctype not in CTYPES:
                raise LaunchError(f"{where}: ctype {ctype!r} not supported (have: {', '.join(CTYPES)})")
            order.append(("scalar", (name, ctype, _number(a.get("value"), ctype, f"{where}.value"))))
        elif kind == "tiling":
            tilings += 1
            tname = a.get("type")
            if not isinstance(tname, str) or not all(p.isidentifier() for p in tname.split("::")):
                raise LaunchError(f"{where}: type must name the tiling struct (C++ identifier, may be qualified)")
            passing = a.get("pass", "value")
            if passing not in ("value", "gm"):
                raise LaunchError(f"{where}: pass must be \"value\" or \"gm\"")
            hdr = a.get("header")
            if hdr is not None:
                hp = (base / hdr).resolve()
                if not hp.is_file():
                    raise LaunchError(f"{where}: header {hp} does not exist")
                if hp not in headers:
                    headers.append(hp)
            fl = _fields(a.get("fields", []), where)
            order.append(("tiling", (name, tname, passing, fl)))
        else:
            raise LaunchError(f"{where}: kind must be input, output, workspace, scalar or tiling (got {kind!r})")
    return Launch(entry, blocks, ktype, spec.get("target"), headers, order, base, tiling_key)


_DRIVER_HEAD = """// Driver generated by ascend-sim (npu_harness/sim/runner.py) for {entry}.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include "kernel_operator.h"
"""

_DRIVER_MAIN = r"""
namespace ascend_sim_launch {
// A GM argument converts to GM_ADDR or to any typed __gm__ pointer the entry declares.
struct GmArg {
    uint8_t* p;
    template <class T> operator T*() const { return reinterpret_cast<T*>(p); }
};
template <class T, class P> T parse_arg(const char* s, const char* fmt) {
    P v{};
    if (std::sscanf(s, fmt, &v) != 1) {
        std::fprintf(stderr, "error[LAUNCH]: cannot parse argument '%s'\n", s);
        std::fflush(stderr);
        __builtin__exit(2);
    }
    return static_cast<T>(v);
}
}  // namespace ascend_sim_launch

int main(int argc, char** argv) {
    using namespace ascend_sim_launch;
    if (argc != @ARGC@) {
        std::fprintf(stderr, "error[LAUNCH]: driver expects @ARGC@ arguments, got %d\n", argc);
        return 2;
    }
    const std::string dir = argv[1];
    const uint32_t blocks = parse_arg<uint32_t, unsigned long long>(argv[2], "%llu");
@BODY@
    const int errors = AscendC::sim::Launch(blocks, [&] { @ENTRY@(@CALL@); });
@OUTPUTS@
@FREE@
    return errors == 0 ? 0 : 1;
}
"""


def driver_source(launch: Launch, kernel: Path) -> tuple[str, list[str]]:
    """(driver translation unit, argv after IO_DIR) for ``launch``; the kernel text is inlined under
    ``#line`` so reports name the kernel file."""
    body: list[str] = []
    argv: list[str] = [str(launch.blocks)]
    call: list[str] = []
    outputs: list[str] = []
    frees: list[str] = []
    ai = 3

    def arg() -> str:
        nonlocal ai
        ai += 1
        return f"argv[{ai - 1}]"

    for kind, spec in launch.order:
        if kind == "gm":
            g: GmArg = spec  # type: ignore[assignment]
            v = f"gm_{g.name}"
            body.append(f"    const size_t {v}_bytes = parse_arg<size_t, unsigned long long>({arg()}, \"%llu\");")
            argv.append(str(g.nbytes))
            if g.kind == "input":  # mapped from the file (copy-on-write)
                body.append(f"    uint8_t* {v} = AscendC::sim::GmMapInput((dir + \"/{g.name}.bin\").c_str(), {v}_bytes);")
            elif g.kind == "output":  # backed by the output file, 0xFF-poisoned
                body.append(f"    uint8_t* {v} = AscendC::sim::GmMapOutput((dir + \"/{g.name}.out\").c_str(), {v}_bytes);")
            else:
                body.append(f"    uint8_t* {v} = AscendC::sim::GmAlloc({v}_bytes);")
            body.append(f"    if (!{v}) return 2;")
            if g.kind != "input" and g.init == "zeros":
                body.append(f"    std::memset({v}, 0, {v}_bytes);")
            call.append(f"GmArg{{{v}}}")
            frees.append(f"    AscendC::sim::GmFree({v});")
        elif kind == "scalar":
            name, ctype, value = spec  # type: ignore[misc]
            fmt, ptype = CTYPES[ctype]
            body.append(f"    const {ctype} s_{name} = parse_arg<{ctype}, {ptype}>({arg()}, \"{fmt}\");")
            argv.append(value)
            call.append(f"s_{name}")
        else:
            name, tname, passing, fields = spec  # type: ignore[misc]
            v = f"t_{name}"
            body.append(f"    {tname} {v}{{}};")
            for fname, ctype, value in fields:
                fmt, ptype = CTYPES[ctype]
                body.append(f"    static_assert(std::is_same_v<std::remove_cvref_t<decltype({v}.{fname})>, {ctype}>, "
                            f"\"launch JSON: field {fname} of {tname} is not {ctype}\");")
                body.append(f"    {v}.{fname} = parse_arg<{ctype}, {ptype}>({arg()}, \"{fmt}\");")
                argv.append(value)
            if passing == "gm":
                body.append(f"    uint8_t* gm_{v} = AscendC::sim::GmAlloc(sizeof({v}));")
                body.append(f"    std::memcpy(gm_{v}, &{v}, sizeof({v}));")
                call.append(f"GmArg{{gm_{v}}}")
                frees.append(f"    AscendC::sim::GmFree(gm_{v});")
            else:
                call.append(v)
    if launch.tiling_key is not None:  # TILING_KEY_VAR, as the host's context->SetTilingKey(k)
        body.append(f"    AscendC::sim::SetTilingKey({launch.tiling_key}ull);")
    if launch.kernel_type == "mix":  # 1 AIC + 2 AIV per block; the body runs on the AIV (docs/emulator.md)
        body.append("    AscendC::SetKernelMode(AscendC::KernelMode::MIX_MODE);")
    elif launch.kernel_type == "cube":
        body.append("    AscendC::SetKernelMode(AscendC::KernelMode::AIC_MODE);")
    head = _DRIVER_HEAD.format(entry=launch.entry)
    head += "".join(f'#include "{h}"\n' for h in launch.headers)
    head += _op_project_macros(launch)
    text = kernel.read_text()
    main = (_DRIVER_MAIN.replace("@ARGC@", str(ai)).replace("@BODY@", "\n".join(body))
            .replace("@ENTRY@", launch.entry).replace("@CALL@", ", ".join(call))
            .replace("@OUTPUTS@", "\n".join(outputs)).replace("@FREE@", "\n".join(frees)))
    n_head = head.count("\n")
    src = (head + f'#line 1 "{kernel.name}"\n' + text.rstrip("\n") + "\n"
           + f'#line {n_head + text.count(chr(10)) + 4} "ascend_sim_launch.cpp"\n' + main)
    return src, argv


_TILING_DATA_INCLUDE = re.compile(r'^\s*#\s*include\s*"(\w+_tiling_data\.h)"', re.M)


def _tiling_data_headers(launch: Launch, kernel: Path, directory: Path) -> None:
    """Stand-ins for the `<op>_tiling_data.h` an op project's build generates from the host tiling header
    (kernels of that dialect write `#define __NPU_TILING__` + `#include "<op>_tiling_data.h"` before
    GET_TILING_DATA). The driver already includes the launch's tiling headers, so each stand-in is empty; one
    is made only for a name the kernel includes, that is not next to the kernel, when the launch gives a
    tiling header (otherwise the missing file stays a compile error that names it)."""
    directory.mkdir(parents=True, exist_ok=True)
    if not any(kind == "tiling" for kind, _ in launch.order) or not launch.headers:
        return
    for name in sorted(set(_TILING_DATA_INCLUDE.findall(kernel.read_text()))):
        if not (kernel.parent / name).exists():
            (directory / name).write_text(f"// {name}: generated by ascend-sim; the launch's tiling header is "
                                          "included by the driver.\n#pragma once\n")


def _op_project_macros(launch: Launch) -> str:
    """What an op project's build generates for the kernel: DTYPE_<NAME> / ORIG_DTYPE_<NAME> / FORMAT_<NAME>
    per GM argument (ref_next §6.3), and the tiling struct GET_TILING_DATA fills (ASCEND_SIM_TILING_TYPE)."""
    lines = []
    for name, value in (("FORMAT_ND", 2), *sorted(GE_DTYPES.values())):
        lines += [f"#ifndef {name}", f"#define {name} {value}", "#endif"]
    for kind, spec in launch.order:
        if kind == "gm" and spec.kind in ("input", "output"):  # type: ignore[union-attr]
            up = spec.name.upper()  # type: ignore[union-attr]
            lines += [f"#define DTYPE_{up} {DTYPES[spec.dtype]}", f"#define ORIG_DTYPE_{up} {GE_DTYPES[spec.dtype][0]}",  # type: ignore
                      f"#define FORMAT_{up} FORMAT_ND"]
    # an op project's build puts the host's tiling structs (namespace optiling) where the kernel sees them
    lines += ["namespace optiling {}", "using namespace optiling;"]
    tilings = [spec for kind, spec in launch.order if kind == "tiling"]
    if len(tilings) == 1:
        lines += ["#undef ASCEND_SIM_TILING_TYPE", f"#define ASCEND_SIM_TILING_TYPE {tilings[0][1]}"]  # type: ignore[index]
    return "\n".join(lines) + "\n"


def sim_defines(target_name: str, kernel_type: str) -> dict[str, int]:
    """-D macros of the emulator for a lowering target (UB / L1 / L0 sizes, DataCopyPad, block limit).
    Run-time settings (time limit, threads, checks) are environment variables, so they do not change
    the build (see run_program)."""
    from lowering.targets import get_target

    t = get_target(target_name)
    d = {
        "ASCEND_SIM_UB_BYTES": t.ub_bytes,
        "ASCEND_SIM_HAS_DATACOPYPAD": int(t.has_datacopypad),
        "__NPU_ARCH__": t.npu_arch,
        "ASCEND_SIM_MAX_BLOCKS": t.aiv if kernel_type == "vector" else t.aic,
        "ASCEND_SIM_L1_BYTES": t.l1_bytes,
        "ASCEND_SIM_L0A_BYTES": t.l0a_bytes,
        "ASCEND_SIM_L0B_BYTES": t.l0b_bytes,
        "ASCEND_SIM_L0C_BYTES": t.l0c_bytes,
    }
    return d


@dataclass
class RunOutcome:
    exit_code: int
    run: RunResult | None
    outputs: dict[str, Path]
    estimate: object | None = None
    message: str = ""


@dataclass(frozen=True)
class Checks:
    """Run-time checks of ``ascend-sim run`` (environment of the emulator process, see launch.h)."""

    order_check: bool = True    # run the blocks again in reverse order and compare (ORDER-DEPENDENT)
    racecheck: bool = True      # PIPE-RACE
    auto_sync: bool = True      # model --cce-auto-sync (S <-> V / MTE, V -> V synchronised by the compiler)
    fp16_overflow: bool = False  # report half results that overflow to inf (FP16-OVERFLOW)
    threads: int | None = None  # worker threads (default: the CPUs available)

    def env(self) -> dict[str, str]:
        e = {"ASCEND_SIM_ORDER_CHECK": str(int(self.order_check)), "ASCEND_SIM_RACECHECK": str(int(self.racecheck)),
             "ASCEND_SIM_AUTO_SYNC": str(int(self.auto_sync)), "ASCEND_SIM_FP16_OVERFLOW": str(int(self.fp16_overflow))}
        if self.threads:
            e["ASCEND_SIM_THREADS"] = str(self.threads)
        return e


def run(kernel: Path, launch_path: Path, *, target: str | None = None, out_dir: Path | None = None,
        timeout: float = 300.0, checks: Checks | None = None, memory_limit_bytes: int | None = None) -> RunOutcome:
    """Compile and run ``kernel`` as described by ``launch_path``. Never raises for user errors."""
    from ascend_dsl.diagnostics import DslError

    try:
        launch = parse_launch(launch_path)
    except LaunchError as e:
        return RunOutcome(EXIT_BAD_LAUNCH, None, {}, message=f"error[LAUNCH]: {e}")
    kernel = Path(kernel)
    if not kernel.is_file():
        return RunOutcome(EXIT_BAD_LAUNCH, None, {}, message=f"error[LAUNCH]: kernel file {kernel} does not exist")
    tname = target or launch.target or "ascend910b1"
    try:
        defines = sim_defines(tname, launch.kernel_type)
    except DslError as e:
        return RunOutcome(EXIT_BAD_LAUNCH, None, {}, message=f"error[LAUNCH]: {e.render() if hasattr(e, 'render') else e}")
    out = Path(out_dir) if out_dir else Path("ascend-sim-out")
    out.mkdir(parents=True, exist_ok=True)
    src, argv = driver_source(launch, kernel.resolve())
    with tempfile.TemporaryDirectory(prefix="ascend-sim-run-") as tmp:
        tmpd = Path(tmp)
        drv = tmpd / "src" / "ascend_sim_launch.cpp"
        drv.parent.mkdir()
        drv.write_text(src)
        generated = tmpd / "gen"
        _tiling_data_headers(launch, kernel.resolve(), generated)
        try:
            binary = compile_program([drv], defines=defines, extra_include_dirs=[kernel.resolve().parent, generated],
                                     extra_dirs_recursive=False)
        except CompileError as e:
            if "launch JSON:" in e.stderr:
                lines = [ln for ln in e.stderr.splitlines() if "launch JSON:" in ln]
                return RunOutcome(EXIT_BAD_LAUNCH, None, {}, message="error[LAUNCH]: tiling fields do not match the "
                                  "struct:\n" + "\n".join(lines[:10]))
            errs = [ln for ln in e.stderr.splitlines() if " error: " in ln]
            if errs and all(ln.startswith("ascend_sim_launch.cpp:") for ln in errs):
                # the kernel compiles; the call / tiling the launch JSON describes does not match it
                return RunOutcome(EXIT_BAD_LAUNCH, None, {}, message="error[LAUNCH]: the launch description does not "
                                  "match the kernel (entry name, argument list or tiling fields):\n" + "\n".join(errs[:10]))
            return RunOutcome(EXIT_FAULT, None, {}, message=f"error[COMPILE]: the kernel does not compile against the "
                              f"emulator:\n{e.message}")
        nbytes = sum(spec.nbytes for kind, spec in launch.order if kind == "gm")  # type: ignore[union-attr]
        outputs: dict[str, Path] = {}
        with scratch_dir(nbytes) as io_dir:
            io = Path(io_dir)
            for kind, spec in launch.order:
                if kind == "gm" and spec.kind == "input":  # type: ignore[union-attr]
                    write_array(io / f"{spec.name}.bin", spec.data)  # type: ignore[union-attr]
            limits = {} if memory_limit_bytes is None else {"memory_limit_bytes": memory_limit_bytes}
            res = run_program(binary, [str(io), *argv], timeout=timeout, env=(checks or Checks()).env(), **limits)
            for kind, spec in launch.order:
                if kind != "gm" or spec.kind != "output":  # type: ignore[union-attr]
                    continue
                raw = io / f"{spec.name}.out"  # type: ignore[union-attr]
                if not raw.exists():
                    continue
                arr = np.fromfile(raw, dtype=np.dtype(_NP_STORAGE.get(spec.dtype, spec.dtype)))  # type: ignore
                dest = out / spec.out_name  # type: ignore[union-attr]
                np.save(dest, arr.reshape(spec.shape))  # type: ignore[union-attr]
                outputs[spec.name] = dest  # type: ignore[union-attr]
    est = None
    if res.counters:
        from ..cost import estimate

        least = sum(spec.nbytes for kind, spec in launch.order if kind == "gm" and spec.kind in ("input", "output"))  # type: ignore
        try:
            est = estimate(res.counters, tname, least)
        except KeyError:
            est = None
    if res.timed_out:
        return RunOutcome(EXIT_FAULT, res, outputs, est, f"error[TIME-LIMIT]: the emulator run did not finish within "
                          f"{timeout:.0f} s and was killed (raise --timeout if the kernel is just slow)")
    if res.returncode == 2 and "error[LAUNCH]" in res.stderr:
        return RunOutcome(EXIT_BAD_LAUNCH, res, outputs, est)
    code = EXIT_OK if res.returncode == 0 and not res.errors else EXIT_FAULT
    return RunOutcome(code, res, outputs, est)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ascend-sim", description="AscendC CPU emulator (npu_harness/sim).")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a kernel file as described by a launch JSON")
    r.add_argument("kernel", type=Path, help="kernel .cpp (includes \"kernel_operator.h\")")
    r.add_argument("--launch", type=Path, required=True, help="launch description (JSON)")
    r.add_argument("--target", help="lowering target (default: the JSON's, else ascend910b1)")
    r.add_argument("-o", "--out", type=Path, help="directory for output .npy files (default ./ascend-sim-out)")
    r.add_argument("--timeout", type=float, default=300.0, help="seconds before the run is stopped (TIME-LIMIT)")
    r.add_argument("--no-order-check", action="store_true", help="do not re-run the blocks in reverse order (ORDER-DEPENDENT)")
    r.add_argument("--no-racecheck", action="store_true", help="no pipe-race check (PIPE-RACE)")
    r.add_argument("--no-auto-sync", action="store_true",
                   help="model a build without --cce-auto-sync (scalar <-> vector / DMA and vector -> vector need explicit sync)")
    r.add_argument("--fp16-overflow", action="store_true", help="report half results that overflow to inf")
    r.add_argument("--threads", type=int, help="worker threads of the emulator (default: the CPUs available)")
    r.add_argument("--memory-limit", type=float, default=8.0, metavar="GIB",
                   help="address-space limit of the emulator process in GiB (default 8); exceeding it is MEMORY-LIMIT")
    r.add_argument("--report", action="store_true", help="print counters' cost-model ESTIMATE")
    r.add_argument("--report-json", type=Path, metavar="FILE", help="write counters + estimate as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse: usage errors are bad launch input
        return EXIT_BAD_LAUNCH if e.code not in (0, None) else 0
    checks = Checks(order_check=not args.no_order_check, racecheck=not args.no_racecheck, auto_sync=not args.no_auto_sync,
                    fp16_overflow=args.fp16_overflow, threads=args.threads)
    outcome = run(args.kernel, args.launch, target=args.target, out_dir=args.out, timeout=args.timeout, checks=checks,
                  memory_limit_bytes=int(args.memory_limit * (1 << 30)))
    res = outcome.run
    if res is not None:
        if res.stdout:
            sys.stdout.write(res.stdout)
        if res.stderr:
            sys.stderr.write(res.stderr)
    if outcome.message:
        print(outcome.message, file=sys.stderr)
    for name, path in outcome.outputs.items():
        print(f"wrote {name}: {path}")
    if args.report:
        print(outcome.estimate.text() if outcome.estimate is not None else "cost model: no counters")
    if args.report_json:
        from ..cost import DISCLAIMER

        data = {"note": DISCLAIMER, "exit_code": outcome.exit_code,
                "estimate": outcome.estimate.to_dict() if outcome.estimate is not None else None,
                "counters": res.counters if res is not None else None}
        args.report_json.write_text(json.dumps(data, indent=1) + "\n")
    status = {EXIT_OK: "clean run", EXIT_FAULT: "FAULT", EXIT_BAD_LAUNCH: "bad launch input"}[outcome.exit_code]
    print(f"ascend-sim: {status}", file=sys.stderr)
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main())
