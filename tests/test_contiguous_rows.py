"""Whole-row tiles without padding (UB pitch == row length) move as one contiguous copy: CopyRowsGmToUb /
CopyRowsUbToGm (codegen_templates/copy_helpers_*.cpp.jinja) issue a single burst of rows * len elements instead
of one short burst per row (session 34; docs/design.md). Padded rows keep the strided DataCopyPad."""

from __future__ import annotations

import pytest

from ascend_dsl.dtypes import DType
from npu_harness import gallery


def _copies(result, key: str) -> list[dict]:
    return [b[key] for b in result.counters["blocks"] if b.get(key, {}).get("bytes")]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["ascend910b1", "ascend310p"])
@pytest.mark.parametrize("dim, contiguous", [(256, True), (200, False)])
def test_unpadded_rows_cross_in_one_burst_per_copy(target, dim, contiguous):
    ex = next(e for e in gallery.discover() if e.name == "softmax")
    rows = 960  # 20 rows per core: tiles of several rows
    r = gallery.validate(ex, {"T": DType.F32}, {"batch_size": rows, "dim": dim}, target=target)
    assert r.ok, (r.summary(), r.detail, r.sim_errors)
    for key in ("gm2ub", "ub2gm"):
        copies = _copies(r, key)
        assert copies and sum(c["bytes"] for c in copies) == rows * dim * 4
        bursts, transfers = sum(c["bursts"] for c in copies), sum(c["transfers"] for c in copies)
        if contiguous:  # rows of 256 f32 = 1 KB, pitch 256: one burst per copy, whatever the rows per tile
            assert bursts == transfers < rows
        elif target == "ascend910b1":  # rows of 200 f32 padded to 256 in UB: one burst per row
            assert bursts == rows
        else:  # 310P, no DataCopyPad: a copy per row (whole 32-byte blocks of 200 f32)
            assert transfers == rows
