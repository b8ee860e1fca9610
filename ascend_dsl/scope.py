"""What names mean while a kernel is parsed: parameters, shape symbols, loop variables, kernel-scope
values and accumulators, and the tile loop being parsed (what a tile is, its local values).

Loops enter and leave through context managers (`with scope.split(...)`, `with scope.tile_loop(...)`),
which restore what they change, so the front end and its plug-ins (parser_box, parser_cube,
parser_slots) share one object instead of saving and restoring builder fields.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import ir
from .dtypes import DType


@dataclass
class LoopVar:
    kind: str  # "block" | "tile"
    over: str | None = None


@dataclass
class TileScope:
    """The tile loop being parsed: what a tile is, its local values (and the dtypes compared to make each
    mask), and in a `with vector:` epilogue the cube loop's block (parser_cube.CubeScope)."""

    shape: ir.TileShape = ir.FLAT_TILES
    locals: dict[str, ir.ValType] = field(default_factory=dict)
    mask_dtypes: dict[str, DType] = field(default_factory=dict)
    cube: object = None


@dataclass
class Scope:
    params: dict[str, ir.Param] = field(default_factory=dict)
    symbols: set[str] = field(default_factory=set)
    type_args: dict[str, DType] = field(default_factory=dict)
    loops: dict[str, LoopVar] = field(default_factory=dict)
    kscalars: dict[str, ir.ValType] = field(default_factory=dict)  # kernel-scope accumulators and scalars
    acc_names: set[str] = field(default_factory=set)  # scalar accumulators (`total = 0.0` before a loop)
    phase_accs: set[str] = field(default_factory=set)  # accumulators updated by the current split loop
    combined: set[str] = field(default_factory=set)  # accumulators whose split loop has ended (readable)
    constants: set[str] = field(default_factory=set)  # `c = 0.5` read before any loop updated it: not an accumulator
    slot_accs: dict = field(default_factory=dict)  # name -> parser_slots.SlotAcc: `s = zeros(C)`
    split_extent: tuple[str, ...] = ()  # the extent of the current (or last) split loop
    #: The current tile loop; the last one's values stay visible after it, so that a kernel-scope use of
    #: one is reported as a tile value where a scalar is needed rather than as an unknown name.
    tile: TileScope = field(default_factory=TileScope)

    @contextmanager
    def loop_var(self, var: str, kind: str, over: str | None = None) -> Iterator[None]:
        """`var` names a loop for the statements of the block."""
        outer = dict(self.loops)
        self.loops[var] = LoopVar(kind, over)
        try:
            yield
        finally:
            self.loops = outer

    @contextmanager
    def split(self, var: str, extent: tuple[str, ...]) -> Iterator[None]:
        """A split loop; its accumulators are combined across cores (readable) when it ends."""
        self.split_extent = extent
        with self.loop_var(var, "block"):
            yield
        self.combined.update(self.phase_accs)
        self.phase_accs = set()

    @contextmanager
    def tile_loop(self, shape: ir.TileShape, cube: object = None) -> Iterator[TileScope]:
        """A tile loop (or a cube loop's `with vector:` epilogue) with fresh local values."""
        self.tile = TileScope(shape, cube=cube)
        try:
            yield self.tile
        finally:
            self.tile.cube = None
