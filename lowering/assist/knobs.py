"""The menu of a kernel's schedule knobs: what a model may change, the legal values, and how a choice is
applied to the kernel.

Every knob is a choice the DSL author could have written, applied to the checked kernel before the
pipeline runs, so every constraint check of the rule-based pipeline judges it again:

- `loopK.size`: the UB tile length of flat tile loop K (`tile(blk, size=...)`): "auto" or a multiple of
  the kernel's tile granule (32-byte blocks of every dtype; whole 256-byte repeats when it compares).
- `loopK.rows`: the most rows per tile of row loop K (`tile(blk, size=N)` over rows): "auto" (the host
  picks as many as fit UB, balanced, at least 2 tiles per core) or a cap of 1..4095 (the host still picks
  fewer where UB or balance needs it).
- `loopK.chunk`: the column chunk length of row loop K's chunked variant (rows longer than UB,
  `tile(blk, chunk=N)`, lowering/passes/plan_chunks.py): "auto" (the rule: each pass's largest chunk that
  fits UB beside the row-level blocks) or a multiple of 256 elements, every pass's chunk length (an upper
  bound: the host still balances the row's chunks below it); plan_tiling checks it against each pass's UB
  plan. Offered only where the rule-based lowering has a chunked variant.
- `loopK.buffers`: the depth of tile loop K's queues (`buffers=1|2`).
- `splitJ.cores`: the core split of vector split loop J (`split(N, cores=AIV|K)`): "all" (every vector
  core; the host picks how many from the extent) or a cap of 1 up to the target's AIV count.
- `mm.base_m` / `mm.base_n` / `mm.base_k`: the cube's base block of a matmul kernel (`matmul(...,
  base_m=...)`): "auto" (the rule: 128 x 128 x 64, shrunk to fit the epilogue's UB) or a multiple of the
  16 x 16 fractal; plan_cube checks L0A/L0B/L0C/L1/UB.
- `fuse.J`: fuse split loop J with the split loop right after it (false / true): one split loop whose tile
  loop runs both bodies (lowering/assist/loops.py says when that is legal and why not).
- `expr.NAME` / `expr.store_T`: an algebraic rewrite of the value assigned to NAME (or stored into T) in
  a tile loop: a DSL expression over the same names (parsed and type-checked like the kernel's own text;
  whether it computes the same values is for the emulator to show).

Loops are numbered in the order they appear in the kernel (the split loops' tile loops, top to bottom;
split loops among themselves).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ascend_dsl import ir, printer
from ascend_dsl.diagnostics import DslError
from ascend_dsl.parser import parse_text

from ..passes.plan_chunks import row_level_bytes
from ..rewrite import map_tile_bodies, rewrite_expr
from ..targets import Target
from ..tiling_rules import AUTO_TILE_GRANULE, MAX_BUFFERS_PER_QUEUE, tile_granule
from .loops import FuseError, adjacent_pairs, fuse

#: Longest expression a rewrite may give (characters).
MAX_EXPR_CHARS = 400
#: Cube base sizes: multiples of the f16 fractal up to this (the checker rejects what does not fit).
FRACTAL = 16
MAX_BASE = 512
#: Rows per tile: DataCopyPad moves at most 4095 rows (blockCount).
MAX_ROWS = 4095


@dataclass(frozen=True)
class Knob:
    key: str
    #: "size" | "rows" | "chunk" | "buffers" | "cores" | "base" | "fuse" | "expr"
    kind: str
    loop: int
    current: int | str
    #: what the prompt says about it (where it is, its legal values)
    doc: str
    granule: int = 0
    max_size: int = 0  # size, chunk: the largest tile (chunk of every pass) that fits UB with buffers=1 (the
    #                    checker decides with the real depth); cores: the target's core count of the split's kind

    def schema(self) -> dict:
        if self.kind in ("size", "chunk"):
            return {"oneOf": [{"const": "auto"}, {"type": "integer", "multipleOf": self.granule,
                                                  "minimum": self.granule, "maximum": self.max_size}],
                    "description": self.doc}
        if self.kind == "buffers":
            return {"enum": list(range(1, MAX_BUFFERS_PER_QUEUE + 1)), "description": self.doc}
        if self.kind == "rows":
            return {"oneOf": [{"const": "auto"}, {"type": "integer", "minimum": 1, "maximum": MAX_ROWS}],
                    "description": self.doc}
        if self.kind == "cores":
            return {"oneOf": [{"const": "all"}, {"type": "integer", "minimum": 1, "maximum": self.max_size}],
                    "description": self.doc}
        if self.kind == "fuse":
            return {"type": "boolean", "description": self.doc}
        if self.kind == "base":
            return {"oneOf": [{"const": "auto"}, {"type": "integer", "multipleOf": FRACTAL, "minimum": FRACTAL,
                                                  "maximum": MAX_BASE}], "description": self.doc}
        return {"type": "string", "maxLength": MAX_EXPR_CHARS, "description": self.doc}

    def check(self, value) -> str | None:
        """Why `value` is not on the menu (None: it is). The constraint checker still judges it after."""
        if self.kind in ("size", "chunk"):
            if value == "auto":
                return None
            if isinstance(value, bool) or not isinstance(value, int):
                return f"{self.key} must be \"auto\" or an integer, not {value!r}"
            if value < self.granule or value % self.granule:
                return f"{self.key}={value} is not a positive multiple of {self.granule} elements"
            if value > self.max_size:
                what = "tile" if self.kind == "size" else "chunk of every pass"
                return f"{self.key}={value} exceeds {self.max_size}, the largest {what} that fits UB even with buffers=1"
            return None
        if self.kind == "buffers":
            if isinstance(value, bool) or value not in range(1, MAX_BUFFERS_PER_QUEUE + 1):
                return f"{self.key} must be one of 1..{MAX_BUFFERS_PER_QUEUE}, not {value!r}"
            return None
        if self.kind == "rows":
            if value == "auto" or (not isinstance(value, bool) and isinstance(value, int) and 1 <= value <= MAX_ROWS):
                return None
            return f"{self.key} must be \"auto\" or an integer in 1..{MAX_ROWS}, not {value!r}"
        if self.kind == "cores":
            if value == "all" or (not isinstance(value, bool) and isinstance(value, int) and 1 <= value <= self.max_size):
                return None
            return f"{self.key} must be \"all\" or an integer in 1..{self.max_size}, not {value!r}"
        if self.kind == "fuse":
            return None if isinstance(value, bool) else f"{self.key} must be true or false, not {value!r}"
        if self.kind == "base":
            if value == "auto":
                return None
            if (isinstance(value, bool) or not isinstance(value, int) or not FRACTAL <= value <= MAX_BASE
                    or value % FRACTAL):
                return f"{self.key} must be \"auto\" or a multiple of {FRACTAL} in {FRACTAL}..{MAX_BASE}, not {value!r}"
            return None
        if not isinstance(value, str) or not value.strip():
            return f"{self.key} must be a DSL expression (a string)"
        if len(value) > MAX_EXPR_CHARS or "\n" in value:
            return f"{self.key} must be one line of at most {MAX_EXPR_CHARS} characters"
        return None


def _loops(kernel: ir.Kernel) -> list[ir.TileLoop]:
    out: list[ir.TileLoop] = []

    def visit(tl: ir.TileLoop) -> ir.TileLoop:
        out.append(tl)
        return tl

    map_tile_bodies(kernel, visit, chunks=False)
    return out


def _splits(kernel: ir.Kernel) -> list[ir.SplitLoop]:
    """The kernel's vector split loops, top to bottom (a cube split has no core cap)."""
    return [s for s in kernel.body if isinstance(s, ir.SplitLoop)]


def _fit(buffers: tuple[ir.Buffer, ...], granule: int, budget: int, depth: int) -> int:
    """The largest multiple of `granule` whose buffers, queues `depth` deep, fit `budget` bytes."""
    def need(size: int) -> int:
        return sum((b.num if b.position is ir.Position.VECCALC else depth) * b.bytes_for(size) for b in buffers)

    bits = sum((b.num if b.position is ir.Position.VECCALC else depth) * b.bits for b in buffers) or 1
    size = (budget * 8 // bits) // granule * granule + granule
    while size > 0 and need(size) > budget:
        size -= granule
    return max(size, 0)


def _largest(buffers: tuple[ir.Buffer, ...], budget: int, depth: int) -> int:
    """The largest multiple of 256 elements whose buffers, queues `depth` deep, fit `budget` bytes (a binary
    search: small per-chunk blocks make the per-element estimate of `_fit` too coarse)."""
    def fits(k: int) -> bool:
        size = k * AUTO_TILE_GRANULE
        return sum((b.num if b.position is ir.Position.VECCALC else depth) * b.bytes_for(size) for b in buffers) <= budget

    lo, hi = 0, budget // AUTO_TILE_GRANULE + 1  # fits(lo); not fits(hi): every element takes at least a byte
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo * AUTO_TILE_GRANULE


def _chunk_knob(i: int, tl: ir.TileLoop, plan: ir.ChunkPlan, target: Target, where: str) -> Knob:
    """`loopK.chunk` of a row loop with a chunked variant: its passes' UB plans bound the chunk length."""
    rest = target.ub_budget - row_level_bytes(plan)
    fit1 = min(_largest(p.loop.buffers_decl, rest, 1) for p in plan.passes)
    fit2 = min(_largest(p.loop.buffers_decl, rest, MAX_BUFFERS_PER_QUEUE) for p in plan.passes)
    chosen = ", ".join(str(p.max_chunk) for p in plan.passes)
    return Knob(f"loop{i}.chunk", "chunk", i, "auto" if tl.chunk is None else tl.chunk,
                f"{where}, used only when one row does not fit UB: the column chunk length in elements of each of "
                f"its {len(plan.passes)} pass(es) over the row, \"auto\" (the rule: each pass's largest chunk that "
                f"fits UB; it chose {chosen}) or a multiple of {AUTO_TILE_GRANULE} (an upper bound; the host balances "
                f"the row's chunks below it; smaller chunks: more chunks per row, so copy-in, compute and copy-out "
                f"overlap across more of them, each paying the fixed latencies); fits every pass up to {fit2} with "
                f"buffers={MAX_BUFFERS_PER_QUEUE}, {fit1} with buffers=1", AUTO_TILE_GRANULE, fit1)


def _stmt_name(s: ir.Stmt) -> str | None:
    return s.name if isinstance(s, ir.Assign) else f"store_{s.tensor}" if isinstance(s, ir.Store) else None


def _value_stmts(kernel: ir.Kernel) -> dict[str, tuple[int, ir.Assign | ir.Store]]:
    """knob name -> (loop, statement) of every tile-loop assignment and store whose target is unique in the
    kernel (a rewrite names exactly one statement)."""
    found: list[tuple[str, int, ir.Stmt]] = []
    for i, tl in enumerate(_loops(kernel)):
        found += [(_stmt_name(s), i, s) for s in tl.body if _stmt_name(s)]
    names = [n for n, _, _ in found]
    plain = (ir.Load, ir.Ref, ir.Const)  # nothing to rewrite in a load or a copy
    return {n: (i, s) for n, i, s in found if names.count(n) == 1 and not isinstance(s.value, plain)}


def menu(kernel: ir.Kernel, lowered: ir.Kernel, target: Target, source_name: str) -> tuple[Knob, ...]:
    """The knobs of `kernel` (the checked input of the pipeline); `lowered` (its rule-based lowering) gives
    the UB buffers each loop needs."""
    granule = tile_granule(kernel)
    planned = {tl.span: tl for tl in _loops(lowered)}
    knobs: list[Knob] = []
    for i, tl in enumerate(_loops(kernel)):
        where = f"{source_name}:{tl.span.line} (tile loop over {tl.over}, {tl.kind.value} tiles)"
        done = planned.get(tl.span)
        if tl.kind is ir.LoopKind.FLAT and done is not None and done.max_tile:
            fit1 = _fit(done.buffers_decl, granule, target.ub_budget, 1)
            fit2 = _fit(done.buffers_decl, granule, target.ub_budget, MAX_BUFFERS_PER_QUEUE)
            knobs.append(Knob(f"loop{i}.size", "size", i, "auto" if tl.size is None else tl.size,
                              f"{where}: the UB tile length in elements, \"auto\" (the rule: the largest tile that "
                              f"fits, shrunk by the host to balanced tiles, at least 2 per core) or a multiple of "
                              f"{granule} (an upper bound; the host still balances tiles); fits UB up to {fit2} with "
                              f"buffers={MAX_BUFFERS_PER_QUEUE}, {fit1} with buffers=1; the rule chose {done.max_tile}",
                              granule, fit1))
        elif tl.kind is ir.LoopKind.ROWS:
            knobs.append(Knob(f"loop{i}.rows", "rows", i, "auto" if tl.size is None else tl.size,
                              f"{where}: the most rows per UB tile, \"auto\" (the rule: as many as fit UB, balanced, at "
                              f"least 2 tiles per core; one row in column chunks when a row does not fit) or a cap "
                              f"1..{MAX_ROWS} (the host still takes fewer where UB or balance needs it)"))
            chunked = done.shape.chunked if done is not None else None
            if isinstance(chunked, ir.ChunkPlan):
                knobs.append(_chunk_knob(i, tl, chunked, target, where))
        knobs.append(Knob(f"loop{i}.buffers", "buffers", i, tl.buffers,
                          f"{where}: queue depth (2 = double buffering: copy-in, compute and copy-out overlap "
                          "across tiles; 1 = they serialise, but each tile may be twice as long)"))
    for j, s in enumerate(_splits(kernel)):
        n = target.cores(s.core_kind)
        knobs.append(Knob(f"split{j}.cores", "cores", j, "all" if s.cores is None else s.cores,
                          f"{source_name}:{s.span.line} (split over {' * '.join(s.extent)}): the most {s.core_kind} "
                          f"cores that share it, \"all\" (the rule: all {n}, fewer when the extent is small) or "
                          f"1..{n} (fewer cores: fewer, longer shares)", 1, n))
    for j in adjacent_pairs(kernel):
        s = _splits(kernel)[j]
        knobs.append(Knob(f"fuse.{j}", "fuse", j, False,
                          f"{source_name}:{s.span.line} (split loops {j} and {j + 1}): true fuses them into one split "
                          "loop whose tile loop runs both bodies (each tile visited once; a tensor both load is "
                          "copied in once); legal only when they split the same extent over the same cores with "
                          "the same tile settings and share no data across cores (no accumulator or slot of the "
                          "first read by the second, no tensor stored by one and accessed by the other)"))
    cube = ir.cube_loop(kernel)
    if cube is not None:
        done = ir.cube_loop(lowered)
        chosen = (done.plan.base_m, done.plan.base_n, done.plan.base_k) if done and done.plan else ("?",) * 3
        for j, axis in enumerate(("base_m", "base_n", "base_k")):
            if axis == "base_n" and done is not None and done.plan is not None and done.plan.whole_rows:
                continue  # a whole-row epilogue's base block spans N (set at run time)
            v = cube.matmul.base[j]
            knobs.append(Knob(f"mm.{axis}", "base", 0, "auto" if v is None else v,
                              f"{source_name}:{cube.matmul.span.line}: the cube's {axis} (a multiple of {FRACTAL}; "
                              f"L0A holds base_m x base_k, L0B base_k x base_n, L0C base_m x base_n f32, double-"
                              f"buffered; L1 {target.l1_bytes} B), \"auto\" = the rule; the rule chose {chosen[j]}"))
    for name, (i, s) in _value_stmts(kernel).items():
        what = f"the value assigned to {name}" if isinstance(s, ir.Assign) else f"the value stored into {s.tensor}"
        knobs.append(Knob(f"expr.{name}", "expr", i, printer.expr(s.value),
                          f"{source_name}:{s.span.line}: {what}, now `{printer.expr(s.value)}`; an algebraically "
                          "equal DSL expression over the same names (ops of docs/language.md) that is cheaper"))
    return tuple(knobs)


def describe(e: DslError) -> str:
    """A DslError on one line per diagnostic, for a model to read: error[CODE]: message (hint: ...)."""
    return "; ".join(f"error[{d.code}]: {d.message}" + (f" (hint: {d.hint})" if d.hint else "") for d in e.diagnostics)


class ApplyError(Exception):
    """A proposal that cannot be applied (an expression that does not parse or type-check)."""


def apply(kernel: ir.Kernel, knobs: tuple[Knob, ...], settings: dict) -> ir.Kernel:
    """`kernel` with the settings (knob key -> value, each already `check`ed) applied."""
    by_key = {k.key: k for k in knobs}
    loop_settings: dict[int, dict] = {}
    exprs: dict[str, str] = {}
    base: dict[str, int | None] = {}
    cores: dict[int, int | None] = {}
    fused: list[int] = []
    for key, value in settings.items():
        k = by_key[key]
        if k.kind == "fuse":
            if value:
                fused.append(k.loop)
        elif k.kind == "expr":
            exprs[key.removeprefix("expr.")] = value
        elif k.kind == "cores":
            cores[k.loop] = None if value == "all" else value
        elif k.kind == "base":
            base[key.removeprefix("mm.")] = None if value == "auto" else value
        else:
            field = "size" if k.kind == "rows" else k.kind  # size, buffers, chunk: fields of the TileLoop
            loop_settings.setdefault(k.loop, {})[field] = None if value == "auto" else value
    counter = iter(range(1 << 30))

    def set_loop(tl: ir.TileLoop) -> ir.TileLoop:
        return replace(tl, **loop_settings.get(next(counter), {}))

    out = map_tile_bodies(kernel, set_loop, chunks=False)
    if cores:
        out = _set_cores(out, cores)
    if base:
        out = _set_base(out, base)
    out = _rewrite(out, exprs) if exprs else out
    for j in sorted(fused, reverse=True):  # the last pair first: the numbers of the earlier ones stay
        try:
            out = fuse(out, j)
        except FuseError as e:
            raise ApplyError(f"fuse.{j}: {e}") from None
    return out


def _set_cores(kernel: ir.Kernel, cores: dict[int, int | None]) -> ir.Kernel:
    splits = _splits(kernel)
    new = {id(splits[j]): replace(splits[j], cores=n) for j, n in cores.items()}
    return replace(kernel, body=tuple(new.get(id(s), s) for s in kernel.body))


def _set_base(kernel: ir.Kernel, base: dict[str, int | None]) -> ir.Kernel:
    cube = ir.cube_loop(kernel)
    mm = cube.matmul
    sizes = tuple(base.get(axis, v) for axis, v in zip(("base_m", "base_n", "base_k"), mm.base, strict=True))
    new = replace(cube, body=(replace(mm, base=sizes), *cube.body[1:]))
    return replace(kernel, body=tuple(new if s is cube else s for s in kernel.body))


def _rewrite(kernel: ir.Kernel, exprs: dict[str, str]) -> ir.Kernel:
    """Replace the named values' expressions: the kernel is printed as DSL, the lines edited and parsed and
    type-checked again; the new expressions take the spans of the ones they replace (the emitted code's
    `// file:LINE` comments keep pointing at the user's file)."""
    text = printer.kernel(replace(kernel, kind=None))
    lines = text.splitlines()
    old = _value_stmts(kernel)
    for name, new in exprs.items():
        s = old[name][1]
        head = f"{name} = " if isinstance(s, ir.Assign) else f"store({s.tensor}["
        was = printer.expr(s.value)
        hits = [i for i, ln in enumerate(lines) if ln.strip().startswith(head) and was in ln]
        if len(hits) != 1:
            raise ApplyError(f"expr.{name}: cannot locate its statement in the kernel text")
        ln = lines[hits[0]]
        cut = ln.rindex(was)
        lines[hits[0]] = ln[:cut] + new + ln[cut + len(was):]
    try:
        parsed = parse_text("\n".join(lines) + "\n", f"<proposal for {kernel.name}>")
        fresh = parsed[0].instantiate({})
    except DslError as e:
        raise ApplyError(describe(e)) from None
    new_values = {name: s.value for name, (_, s) in _value_stmts(fresh).items()}

    def respan(e: ir.Expr, span) -> ir.Expr:
        return rewrite_expr(e, lambda x: None if x.span == span else replace(x, span=span))

    def put(tl: ir.TileLoop) -> ir.TileLoop:
        body = []
        for s in tl.body:
            name = _stmt_name(s)
            if name in exprs:
                s = replace(s, value=respan(new_values[name], s.value.span))
            body.append(s)
        return replace(tl, body=tuple(body))

    return map_tile_bodies(kernel, put, chunks=False)
