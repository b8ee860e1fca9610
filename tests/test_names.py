"""Value names: the DSL's built-in calls cannot name a value (a located error that says so); op names written
only as operators (neg, add, pow) can, and kernels may share a name with an op (issue 16)."""

from __future__ import annotations

import pytest

from ascend_dsl import DslError, parse_text
from lowering import lower

KERNEL = '''@kernel
def tanh(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    {scalar} = 2.0
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            {local} = load(x[t]) * {scalar}
            store(y[t], {local})
'''


def test_operator_op_names_are_free_value_names():
    k = parse_text(KERNEL.format(scalar="add", local="neg"), "names.adsl")[0].instantiate()
    project, _ = lower(k, "ascend910b1", "names.adsl")
    assert "tanh_custom" in project.files["tanh_kernel.cpp"]


@pytest.mark.parametrize("scalar,local,bad,line", [("s", "exp", "exp", 6), ("sum", "v", "sum", 3),
                                                    ("s", "load", "load", 6), ("zeros", "v", "zeros", 3)])
def test_builtin_call_names_cannot_name_values(scalar, local, bad, line):
    with pytest.raises(DslError) as e:
        parse_text(KERNEL.format(scalar=scalar, local=local), "names.adsl")[0].instantiate()
    d = e.value.diagnostics[0]
    assert d.code == "DUPLICATE-NAME" and f"'{bad}' is the name of the built-in {bad}(...)" in d.message
    assert d.span.line == line and d.hint == f"pick another name, e.g. {bad}_v"
