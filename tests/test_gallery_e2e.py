"""End to end: every gallery kernel, every declared dtype, every validation shape, in the emulator."""

from __future__ import annotations

import pytest

from npu_harness.gallery import discover, validate

CASES = [(ex, dts, shape) for ex in discover() for dts in ex.validation_dtypes() for shape in ex.shapes()]


def _explain(result) -> str:
    if hasattr(result, "outcomes"):  # a groups task: every case
        return "\n".join([result.summary(), *(o.error.render() if o.error else o.result.summary() for o in
                                               result.outcomes if not o.ok)])
    return "\n".join([result.summary(), *(c.describe() for c in result.comparisons), result.detail])


def _id(case) -> str:
    ex, dts, shape = case
    return "-".join([f"{ex.category}/{ex.name}", *(str(v) for v in dts.values()),
                     *(f"{k}{v}" for k, v in shape.items())]) or ex.name


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_gallery_kernel_in_emulator(case):
    ex, dts, shape = case
    result = validate(ex, dts, shape)
    assert result.ok, _explain(result)


@pytest.mark.parametrize("ex", discover(), ids=lambda e: f"{e.category}/{e.name}")
def test_gallery_kernel_in_interpreter(ex):
    for dts in ex.validation_dtypes():  # the first validation shape: the task's own sizes unless scaled down
        result = validate(ex, dts, ex.shapes()[0], level="interp")
        assert result.ok, _explain(result)
        # issue 11: a gallery task's inputs must make the check meaningful (no degenerate reference, every
        # select reached on both sides)
        assert not result.weaknesses, result.summary()


def test_gallery_has_every_required_activation():
    names = {e.name for e in discover() if e.category == "activation"}
    required = {"relu", "leaky_relu", "gelu", "sigmoid", "tanh", "swish", "elu", "hardsigmoid", "softplus",
                "softsign", "selu", "hardtanh"}
    assert required <= names, required - names


def test_gallery_index_lists_every_example():
    from pathlib import Path

    index = (Path(__file__).resolve().parent.parent / "examples/README.md").read_text()
    for ex in discover():
        assert f"[{ex.name}]({ex.category}/{ex.name}.adsl)" in index, f"regenerate examples/README.md ({ex.name})"
