"""Row products on the vector unit (row_prod snippet; chunk_fold for rows longer than UB): the row's whole f32 blocks multiplied pairwise by Mul,
halving the count, the last block and the 0-7 elements past it on the scalar unit. Checked in the emulator
against the task's PyTorch reference (torch.prod) at row lengths that hit every case: no whole block, an odd
number of blocks at some halving step, a tail past the last block; f16 rows multiply in f32."""

from __future__ import annotations

import pytest

from ascend_dsl.dtypes import DType
from npu_harness import gallery

#: (dtype, row length): rows longer than UB (70001 f32, 100003 f16) run chunked passes, each chunk's product folded
#: into the row's running product (emit/chunk.py, chunk_fold snippet).
CASES = [("f32", 9), ("f32", 1001), ("f32", 70001), ("f16", 7), ("f16", 136), ("f16", 100003)]


@pytest.fixture(scope="module")
def prod_dim():
    return next(e for e in gallery.discover() if e.name == "prod_dim")


@pytest.mark.slow
@pytest.mark.parametrize("dtype,length", CASES, ids=lambda c: str(c))
def test_row_product_matches_torch(prod_dim, dtype, length):
    r = gallery.validate(prod_dim, {"T": DType(dtype)}, {"batch_size": 1, "dim1": 2 if length > 50000 else 3,
                                                         "dim2": length})
    assert r.ok, r


def test_row_product_runs_on_the_vector_unit(prod_dim):
    """The emitted loop multiplies halves with Mul; no scalar pass over the whole row is left."""
    from lowering import lower

    kernel = prod_dim.source.instantiate({"T": DType.F16})
    project, _ = lower(kernel, "ascend910b1", "prod_dim.adsl")
    code = project.files["prod_dim_kernel.cpp"]
    assert "Mul(reduceTmp_f32, reduceTmp_f32, reduceTmp_f32[(nb - h) * 8]" in code
    assert "Cast(reduceTmp_f32, " in code
    assert "j < rowLen_; ++j" in code and "j = prodBlocks * 8" in code  # only the tail past the last whole block
    assert "Mul(prodTmp_f32, prodTmp_f32, prodTmp_f32[(nb - h) * 8]" in code  # the chunks of rows longer than UB
    assert "j = count / 8 * 8; j < count" in code
