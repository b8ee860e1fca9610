"""Index forms of issue 16 item 1 that are not expressible yet: each is a located error naming what works instead."""

from __future__ import annotations

import pytest

from ascend_dsl import DslError, parse_text


def _error(text: str) -> DslError:
    with pytest.raises(DslError) as e:
        parse_text(text, "k.adsl")[0].instantiate()
    return e.value


@pytest.mark.parametrize("call", ["scatter", "scatter_add"])
def test_element_scatter_along_dim_0_names_the_forms_that_work(call):
    e = _error(f'''@kernel
def k(x: Tensor[f32, "V, D"], idx: Tensor[i64, "N, D"], src: Tensor[f32, "N, D"], y: Tensor[f32, "V, D"]):
    for blk in split(V, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], {call}(load(x[r, :]), idx, src))
''')
    d = e.diagnostics[0]
    assert d.code == "UNSUPPORTED" and f"{call} along dim 0 of single elements" in d.message
    assert (d.span.line, d.span.col) == (5, len(f"            store(y[r, :], {call}(load(x[r, :]), ") + 1)
    assert "index_add / index_copy / index_put" in d.hint and f"{call}(load(x[r, :]), load(idx[r, :])" in d.hint


def test_gather_along_a_middle_dim_names_the_last_dim_form():
    e = _error('''@kernel
def k(x: Tensor[f32, "A, R, C"], idx: Tensor[i64, "A, K, C"], y: Tensor[f32, "A, K, C"]):
    for blk in split(A * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], gather(load(x[t]), load(idx[t])))
''')
    d = e.diagnostics[0]
    assert d.code == "INDEX" and "must share the reduced axis" in d.message and d.span.line == 4
    assert "gather along a non-last dim" in d.hint and "gather(rows, load(idx[r, :]))" in d.hint


def test_index_select_with_fewer_indices_than_columns_names_the_equal_length_form():
    e = _error('''@kernel
def k(x: Tensor[f32, "B, D"], idx: Tensor[i64, "K"], y: Tensor[f32, "B, K"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], gather(load(x[r, :]), load(idx[:])))
''')
    d = e.diagnostics[0]
    assert d.code == "INDEX" and "need one row shape" in d.message and d.span.line == 4
    assert "gather(load(x[r, :]), load(idx[:]))" in d.hint
