"""Index forms of issue 16 item 1 written the way that does not work: each is a located error naming what works instead."""

from __future__ import annotations

import pytest

from ascend_dsl import DslError, parse_text


def _error(text: str) -> DslError:
    with pytest.raises(DslError) as e:
        parse_text(text, "k.adsl")[0].instantiate()
    return e.value


def test_gather_along_a_middle_dim_over_the_input_positions_names_the_forms_that_work():
    e = _error('''@kernel
def k(x: Tensor[f32, "A, R, C"], idx: Tensor[i64, "A, K, C"], y: Tensor[f32, "A, K, C"]):
    for blk in split(A * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], gather(load(x[t]), load(idx[t])))
''')
    d = e.diagnostics[0]
    assert d.code == "INDEX" and "must share the reduced axis" in d.message and d.span.line == 4
    assert "gather(x, load(idx[r, :])) with x named" in d.hint and "split(A * K)" in d.hint
    assert "load(x[idx[r], :])" in d.hint and "gather(rows, load(idx[r, :]))" in d.hint
