"""The emission registry (lowering/emit/KINDS): every kernel kind has a view builder, templates that exist
and a manifest, and the project a kind emits carries its frozen, typed view."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ascend_dsl import ir, load_file
from lowering import PassContext, lower
from lowering.emit import KINDS, KernelView, kind_of
from lowering.pipeline import run_pipeline
from lowering.targets import get_target

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "codegen_templates"

#: A gallery kernel of each kind.
EXAMPLES = {
    ir.KernelKind.VECTOR: "activation/softmax",
    ir.KernelKind.WINDOW: "pooling/max_pool2d",
    ir.KernelKind.RESIZE: "resize/upsample_bilinear2d",
    ir.KernelKind.GRID: "resize/grid_sample_bilinear",
    ir.KernelKind.GATHER_MIDDLE: "index/gather_middle",
    ir.KernelKind.SCATTER_SHARED: "index/index_copy",
    ir.KernelKind.ANTIALIAS: "resize/downsample_bilinear2d_antialias",
    ir.KernelKind.BOX: "reduce/sum_dim0",
    ir.KernelKind.MIX: "fuse/matmul_bias_relu",
    ir.KernelKind.CHAIN: "attention/sdpa",  # lowered with the flash fusion off (no gallery kernel stays a chain)
    ir.KernelKind.FLASH: "attention/sdpa",
    ir.KernelKind.CONV: "convolution/conv2d",
}


def test_every_kind_is_registered_with_its_templates():
    # LAUNCHES has no templates of its own: its project holds each launch's (lowering/emit/launches.py);
    # CONVERT5HD is only ever a compiler-written launch (tests/test_conv5hd.py), not a gallery kernel of its own
    assert set(KINDS) == set(ir.KernelKind) - {ir.KernelKind.LAUNCHES} == set(EXAMPLES) | {ir.KernelKind.CONVERT5HD}
    for kind, entry in KINDS.items():
        for template in (entry.kernel_template, entry.tiling_template):
            assert (TEMPLATES / template).is_file(), (kind, template)
        assert callable(entry.build_view) and callable(entry.manifest), kind


@pytest.mark.parametrize("kind", list(EXAMPLES), ids=lambda k: k.value)
def test_a_project_carries_the_frozen_view_of_its_kind(kind):
    path = ROOT / "examples" / f"{EXAMPLES[kind]}.adsl"
    src = load_file(path)[0]
    if kind is ir.KernelKind.CHAIN:
        ctx = PassContext(get_target("ascend910b1"), path.name)
        ctx.allow_flash = False
        ctx.lowered = run_pipeline(src.instantiate(src.dtype_variants[0]), ctx)
        project = ctx.project
    else:
        project, ctx = lower(src.instantiate(src.dtype_variants[0]), "ascend910b1", path.name)
    assert ctx.lowered.kind is kind
    view = project.view
    assert isinstance(view, KernelView) and type(view) is not KernelView, type(view)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.name = "changed"  # type: ignore[misc]
    # the view is the kind's own (a FLASH kernel the ring took: the ring's, emit.kind_of): built again from the
    # lowered kernel, it is equal
    assert kind_of(ctx.lowered).build_view(ctx.lowered, ctx) == view
