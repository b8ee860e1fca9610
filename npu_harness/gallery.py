"""The example gallery: discovery, validation, and the generated index `examples/README.md`.

    python -m npu_harness.gallery [--validate] [--write examples/README.md]

Each example is `examples/<category>/<name>.adsl` with its task file `<name>.py`. The shapes an
example is validated on come from EXAMPLE_SHAPES, CATEGORY_SHAPES, ROW_SHAPES or FLAT_SHAPES (see
`Example.shapes`).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ascend_dsl import load_file
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import DType

ROOT = Path(__file__).resolve().parent.parent / "examples"

#: Flat kernels per category: the shapes (overrides of the task file's module-level size constants;
#: {} = the task's own sizes) they are validated on. The activation tasks take 16 x 16384 by default
#: (aligned); 1 x 1000003 is not a multiple of the tile or of 32 bytes. Row kernels of these
#: categories use ROW_SHAPES.
FLAT_SHAPES: dict[str, list[dict[str, int]]] = {
    "activation": [{}, {"batch_size": 1, "dim": 1000003}],
    "broadcast": [{}, {"batch_size": 33, "dim": 1001}],
    "math": [{}, {"batch_size": 33, "dim": 1001}],
}
#: Row kernels (2-D tensors, reductions per row): 33 rows of 1001 are neither a multiple of the
#: core count nor of 32 bytes per row.
ROW_SHAPES: list[dict[str, int]] = [{}, {"batch_size": 33, "dim": 1001}]
#: Categories whose kernels, flat or rows, all take the same shapes.
CATEGORY_SHAPES: dict[str, list[dict[str, int]]] = {
    # optimizer steps: the task default is 4M parameters; the emulator runs 256K (aligned) and 100003 (not a
    # multiple of the tile or of 32 bytes)
    "optimizer": [{"num_params": 262144}, {"num_params": 100003}],
    # losses: flat (mse, huber, hinge) and row (kl_div, cosine, triplet) kernels over [batch_size, dim]
    "loss": [{}, {"batch_size": 33, "dim": 1001}],
    # reductions over the last dimension of a 3-D tensor (the kernel views it as rows)
    "reduce": [{}, {"batch_size": 3, "dim1": 11, "dim2": 1001}],
    # Matmul and fused-epilogue kernels (MIX): the task's sizes, then M, N, K that are not multiples of any
    # base block (16 x 16 fractals; 300 rows = 2 full base blocks of 128 + a tail of 44).
    "matmul": [{}, {"M": 300, "N": 75, "K": 70}],
    "fuse": [{}, {"M": 300, "N": 75, "K": 70}],
    # convolutions (implicit GEMM on the cube): the task's small odd sizes, then 150 output channels (a tile of
    # 128 + a tail of 22), 19 input channels (two reduction steps of 3x3 taps) and rows of 38-40 pixels (not a
    # multiple of 16: padded fractal columns; several row tiles)
    "convolution": [{}, {"batch_size": 1, "in_channels": 19, "out_channels": 150, "height": 35, "width": 40}],
}
#: Attention (multi-stage kernels): the task's sizes, then odd query/key lengths and head dims.
EXAMPLE_SHAPES: dict[str, list[dict[str, int]]] = {
    "attention/sdpa": [{}, {"Bt": 3, "M": 37, "N": 53, "Dk": 24, "Dv": 40}],
    "attention/linear_attention": [{}, {"Bt": 3, "M": 37, "N": 53, "Dk": 24, "Dv": 40}],
    # an odd length in chunks of an odd length (the task's chunk: S must be a multiple of it)
    "attention/causal_linear_attention": [{}, {"Bt": 3, "S": 333, "D": 40, "chunk": 37}],
    "attention/gqa": [{}, {"B": 1, "H": 6, "Hkv": 3, "M": 37, "N": 53, "Dk": 24, "Dv": 40}],
    "attention/mqa": [{}, {"B": 1, "H": 3, "M": 37, "N": 53, "Dk": 24, "Dv": 40}],
    "attention/causal_attention": [{}, {"B": 1, "H": 3, "S": 37, "D": 24}],
    "attention/cross_attention": [{}, {"B": 1, "H": 3, "Sq": 45, "Skv": 13, "D": 24}],
    "attention/sdpa_dropout": [{}, {"B": 1, "H": 3, "S": 29, "D": 40}],
    "attention/causal_sdpa": [{}, {"B": 1, "H": 3, "S": 37, "D": 24}],
    "attention/sliding_window": [{}, {"B": 1, "H": 2, "S": 1001, "D": 40}],  # window 64: most key blocks skipped
    "attention/decode_gqa": [{}, {"B": 1, "H": 6, "Hkv": 3, "L": 4099, "D": 40}],
    # 8K keys (the task's size) is validated by the host tiling (tests/test_flash.py) and was emulated once (15 s)
    "attention/long_context": [{"B": 1, "H": 2, "S": 1000}, {"B": 1, "H": 1, "S": 301, "D": 40}],
}
#: Per example ("category/name"), replacing the shapes above. Pooling runs its windows on the scalar
#: unit, so the emulator validates small planes (the benchmark-scale defaults are lowered and
#: checked in tests/test_windows.py): odd sizes (planes not a multiple of 32 bytes, more planes than
#: cores for some), and planes too large for UB in f32 (tiles are then bands of output rows).
_POOL_SHAPES = {
    1: [{"batch_size": 3, "channels": 7, "length": 101}, {"batch_size": 1, "channels": 2, "length": 30001}],
    2: [{"batch_size": 3, "channels": 5, "height": 17, "width": 23},
        {"batch_size": 1, "channels": 2, "height": 161, "width": 163}],
    3: [{"batch_size": 1, "channels": 3, "depth": 7, "height": 9, "width": 11},
        {"batch_size": 1, "channels": 2, "depth": 26, "height": 41, "width": 43}],
}
EXAMPLE_SHAPES.update({
    f"pooling/{kind}_pool{rank}d": shapes for kind in ("max", "avg") for rank, shapes in _POOL_SHAPES.items()
})
#: conv1d / conv3d tasks name their sizes length / depth: 150 output channels (a tile of 128 + 22), 19 input
#: channels, a row of 1500 (tiles of 1024 columns: a long signal), odd planes.
EXAMPLE_SHAPES.update({f"convolution/{name}": [{}, {"batch_size": 1, "in_channels": 19, "out_channels": 150, **sizes}]
                       for name, sizes in (("conv1d", {"length": 1500}), ("conv1d_dilated_bias", {"length": 1501}),
                                           ("conv3d_padded", {"depth": 4, "height": 9, "width": 11}),
                                           ("conv3d_strided_bias", {"depth": 5, "height": 9, "width": 11}))})
#: depthwise tasks have one channel count (37: more tiles than cores, one channel each); 4 groups of 5 -> 37
#: channels (a group's tile ends mid-fractal)
EXAMPLE_SHAPES.update({f"convolution/{name}": [{}, {"batch_size": 1, "channels": 37, "height": 23, "width": 40}]
                       for name in ("conv2d_depthwise", "conv2d_separable_depthwise", "conv2d_depthwise_multiplier")})
EXAMPLE_SHAPES.update({f"convolution/{name}": [{}, {"batch_size": 1, "in_channels": 19, "out_channels": 150, **sizes}]
                       for name, sizes in (("conv_transpose1d", {"length": 1001}),
                                           ("conv_transpose3d", {"depth": 4, "height": 7, "width": 9}))})
EXAMPLE_SHAPES["convolution/conv_transpose2d_grouped_dilated"] = [{}, {"batch_size": 1, "in_channels": 20,
                                                                      "out_channels": 148, "height": 13, "width": 17}]
#: Kernels of several launches (examples/fuse/conv_*, *_norm, *_softmax_long: a cube launch, then a vector one
#: reading its workspace tensor): the task's sizes, then 150 output channels (a tile of 128 + 22), odd planes.
EXAMPLE_SHAPES.update({f"fuse/{name}": [{}, {"batch_size": 1, "in_channels": 19, "out_channels": 150, "height": 35,
                                             "width": 41}]
                       for name in ("conv_batch_norm_relu", "conv_max_pool", "conv_global_avg_pool",
                                    "conv_softmax_channels", "conv_mean_channels", "conv_hardswish_residual",
                                    "conv_instance_norm", "conv_hardswish_max_pool_mish", "conv_avg_pool_sigmoid_sum")})
EXAMPLE_SHAPES["fuse/conv3d_group_norm"] = [{}, {"batch_size": 1, "in_channels": 7, "out_channels": 36, "num_groups": 6,
                                                 "depth": 4, "height": 9, "width": 11}]
#: GEMM + group norm (a view of the GEMM's workspace as rows of N / num_groups): odd rows, groups of 15 columns.
EXAMPLE_SHAPES.update({f"fuse/{name}": [{}, {"M": 37, "N": 75, "K": 70, "num_groups": 5}]
                       for name in ("gemm_group_norm", "gemm_group_norm_swish")})
EXAMPLE_SHAPES["fuse/gemm_softmax_long"] = [{}, {"M": 33, "K": 70, "N": 4099}]
EXAMPLE_SHAPES["fuse/gemm_cumsum"] = [{}, {"M": 33, "K": 70, "N": 4099}]  # cut into launches: rows longer than UB
EXAMPLE_SHAPES["convolution/conv1d_depthwise"] = [{}, {"batch_size": 1, "channels": 37, "length": 701}]
EXAMPLE_SHAPES["convolution/conv2d_grouped"] = [{}, {"batch_size": 1, "in_channels": 20, "out_channels": 148,
                                                     "height": 35, "width": 40}]
#: Scatters (examples/index/): along the last dim, rows not a multiple of 32 bytes (and of the i64 indices' 4);
#: along dim 0, more and fewer source rows than destination rows, rows shorter and longer than 1 KB.
EXAMPLE_SHAPES.update({f"index/{name}": [{"batch_size": 7, "dim": 33}, {"batch_size": 33, "dim": 1001}]
                       for name in ("scatter_add", "scatter_value", "index_add", "index_copy", "index_put_accumulate")})
EXAMPLE_SHAPES.update({f"index/{name}": [{"num_rows": 101, "num_updates": 53, "dim": 19},
                                         {"num_rows": 300, "num_updates": 101, "dim": 1001}]
                       for name in ("index_add_rows", "index_put_rows", "index_copy_rows", "scatter_add_dim0",
                                    "scatter_dim0", "scatter_value_dim0")})
#: Two-sided broadcasts (rows of a [B, D] / [S, D] tensor per row of [B, S, D]): rows shorter than 32 bytes and odd
#: counts, then rows longer than UB (column chunks of the broadcast rows).
EXAMPLE_SHAPES.update({f"broadcast/{name}": [{"batch_size": 3, "seq_len": 37, "hidden": 33},
                                             {"batch_size": 5, "seq_len": 7, "hidden": 1001},
                                             {"batch_size": 2, "seq_len": 3, "hidden": 100003}]
                       for name in ("outer_mul", "outer_add_bias", "scale_per_batch")})
EXAMPLE_SHAPES["index/index_select_last"] = [{"batch_size": 3, "dim1": 5, "dim2": 77}, {"batch_size": 2, "dim1": 50,
                                                                                       "dim2": 1001}]
EXAMPLE_SHAPES["broadcast/where_row_mask"] = [{"batch_size": 7, "dim": 33}, *ROW_SHAPES[1:], {"batch_size": 3, "dim": 100003}]
#: max_pool3d (dilation 3: windows span 7 input slices): bands of output depth; 3-D pooling at 40 x 300 / 61 x 300
#: planes: one output depth slice's windows do not fit UB, so tiles are bands of its output rows (dim 1).
EXAMPLE_SHAPES["pooling/max_pool3d"] = [*_POOL_SHAPES[3], {"batch_size": 1, "channels": 1, "depth": 9, "height": 60,
                                                            "width": 60},
                                        {"batch_size": 1, "channels": 2, "depth": 9, "height": 40, "width": 300}]
EXAMPLE_SHAPES["pooling/avg_pool3d"] = [*_POOL_SHAPES[3], {"batch_size": 1, "channels": 2, "depth": 7, "height": 61,
                                                            "width": 300}]
#: Scans per row also run on the scalar unit: the benchmark's 4000-long rows, but 8 of them.
EXAMPLE_SHAPES.update({f"math/{name}": [{"batch_size": 8, "dim": 4000}, {"batch_size": 33, "dim": 1001}]
                       for name in ("cumsum", "cumprod", "reverse_cumsum", "exclusive_cumsum", "masked_cumsum")})
#: Rows longer than UB (100003 elements: 391 KB in f32, not a multiple of 32 bytes): the row kernels run in
#: chunked passes over column chunks of each row (lowering/passes/plan_chunks.py).
LONG_ROW = {"batch_size": 3, "dim": 100003}
EXAMPLE_SHAPES.update({name: [*ROW_SHAPES, LONG_ROW] for name in (
    "activation/softmax", "activation/log_softmax", "normalization/layer_norm", "normalization/rms_norm",
    "normalization/l1_norm", "normalization/l2_norm", "loss/kl_div", "broadcast/add_row", "broadcast/mul_row",
    "broadcast/max_row", "broadcast/sub_col", "broadcast/div_col", "broadcast/scale_shift")})
EXAMPLE_SHAPES["loss/cosine_similarity_loss"] = [{}, {"batch_size": 33, "dim": 1001}, LONG_ROW]  # + accumulator
EXAMPLE_SHAPES["reduce/mean_dim"] = [{}, {"batch_size": 3, "dim1": 11, "dim2": 1001},
                                     {"batch_size": 2, "dim1": 3, "dim2": 70001}]  # per-row stores
EXAMPLE_SHAPES.update({
    # prod over the last dim of [batch_size, dim1, dim2] (scalar loop): 8 and 33 rows
    "reduce/prod_dim": [{"batch_size": 2, "dim1": 4, "dim2": 4000}, {"batch_size": 3, "dim1": 11, "dim2": 1001},
                        {"batch_size": 2, "dim1": 3, "dim2": 70001}],  # rows longer than UB: chunked
    # reductions over dim 1 / dim 0 (box loops): the task's 16 x 256 x 256, and 3 x 37 x 1001 (positions per
    # row of the reduced axis not a multiple of 32 bytes, nor of the tile; the reduced axis not of the chunk)
    **{f"reduce/{name}": [{}, {"batch_size": 3, "dim1": 37, "dim2": 1001}]
       for name in ("sum_dim1", "mean_dim1", "max_dim1", "min_dim1", "prod_dim1", "sum_dim0")},
    # tasks that name their sizes differently (matrix-vector: N = 1; batched: Bt)
    "matmul/matvec": [{}, {"M": 300, "K": 70}],
    "matmul/matmul_batched": [{}, {"Bt": 3, "M": 50, "N": 75, "K": 70}],
    "fuse/batched_matmul_scale_relu": [{}, {"Bt": 3, "M": 50, "N": 75, "K": 70}],
    "fuse/attention_scores": [{}, {"Bt": 3, "M": 50, "N": 75, "K": 70}],
    "loss/cross_entropy": [{}, {"batch_size": 33, "num_classes": 1001}],
    # planes of H*W as rows; the 16x64x256x256 benchmark shape lowers (its 256 KB planes need long-row support)
    # planes of 300x300 (360 KB in f32, 180 KB in f16) do not fit UB: chunked passes over each plane
    "normalization/batch_norm": [{"batch_size": 2, "features": 4, "dim1": 32, "dim2": 64},
                                 {"batch_size": 3, "features": 5, "dim1": 33, "dim2": 57},
                                 {"batch_size": 1, "features": 2, "dim1": 300, "dim2": 300}],
    "normalization/instance_norm": [{"batch_size": 2, "features": 4, "dim1": 32, "dim2": 64},
                                    {"batch_size": 3, "features": 5, "dim1": 33, "dim2": 57},
                                    {"batch_size": 1, "features": 2, "dim1": 300, "dim2": 300}],
    # training-mode statistics (slot accumulators): a ragged shape with more planes than cores; planes of
    # 300x300 do not fit UB: each of the three split loops runs its own chunked passes
    "normalization/batch_norm_train": [{"batch_size": 2, "features": 4, "dim1": 32, "dim2": 64},
                                       {"batch_size": 3, "features": 6, "dim1": 33, "dim2": 57},
                                       {"batch_size": 1, "features": 2, "dim1": 300, "dim2": 300}],
    "normalization/group_norm": [{"batch_size": 2, "features": 4, "num_groups": 2, "dim1": 32, "dim2": 64},
                                 {"batch_size": 3, "features": 6, "num_groups": 3, "dim1": 33, "dim2": 57},
                                 {"batch_size": 1, "features": 2, "num_groups": 2, "dim1": 300, "dim2": 300}],
    # boxes stored whole (the reduced axis in UB per tile): positions per row of the reduced axis not a multiple of
    # 32 bytes, odd channel counts, more positions than one tile
    "activation/softmax_dim1": [{"batch_size": 4, "dim1": 64, "dim2": 256}, {"batch_size": 3, "dim1": 37, "dim2": 1001}],
    "normalization/l2_norm_dim1": [{"batch_size": 4, "dim1": 64, "dim2": 256},
                                   {"batch_size": 3, "dim1": 37, "dim2": 1001}],
    "normalization/rms_norm_channels": [{"batch_size": 2, "features": 16, "dim1": 32, "dim2": 32},
                                        {"batch_size": 3, "features": 37, "dim1": 11, "dim2": 13}],
    "normalization/frobenius_norm": [{"batch_size": 4, "features": 16, "dim1": 64, "dim2": 64},
                                     {"batch_size": 3, "features": 5, "dim1": 33, "dim2": 57}],
})
#: Rows read through an index tensor (examples/index/): rows not a multiple of 32 bytes, more and fewer indices than
#: cores, tables with few rows (indices repeat), negative indices (take_rows).
EXAMPLE_SHAPES.update({
    "index/embedding": [{"batch_size": 3, "seq_len": 7, "num_embeddings": 11, "embedding_dim": 33},
                        {"batch_size": 2, "seq_len": 100, "num_embeddings": 1000, "embedding_dim": 1001}],
    "index/take_rows": [{"num_rows": 37, "dim": 19, "num_indices": 23}, {"num_rows": 5, "dim": 1000, "num_indices": 301},
                        {"num_rows": 5, "dim": 100003, "num_indices": 3}],  # rows longer than UB: chunked, row groups
    **{f"index/{name}": [{"batch_size": 3, "dim1": 5, "dim2": 77}, {"batch_size": 2, "dim1": 50, "dim2": 1001}]
       for name in ("argmax_dim", "argmin_dim")},
    "index/embedding_layer_norm": [{"batch_size": 3, "seq_len": 7, "vocab_size": 50, "hidden": 33},
                                   {"batch_size": 2, "seq_len": 30, "vocab_size": 1000, "hidden": 1001},
                                   {"batch_size": 1, "seq_len": 3, "vocab_size": 7, "hidden": 100003}],  # chunked
    "index/masked_fill": [{}, {"batch_size": 1, "dim": 1000003}],
    # positions (col_index / row_index): matrices of odd sizes, wider and taller than square, several per tile
    # (rows of 100003 do not fit UB: chunked, 3 rows over groups of cores)
    **{f"index/{name}": [{"batch_size": 3, "dim1": 5, "dim2": 77}, {"batch_size": 2, "dim1": 50, "dim2": 1001},
                         {"batch_size": 1, "dim1": 3, "dim2": 100003}] for name in ("tril", "triu")},
    "index/causal_softmax": [{"batch_size": 3, "seq_len": 37}, {"batch_size": 2, "seq_len": 1001}],
    # gathers along the middle dim: more and fewer indices than rows of that dim, rows shorter and longer than 1 KB
    **{f"index/{name}": [{"batch_size": 3, "dim1": 7, "dim2": 33, "num_indices": 11},
                         {"batch_size": 2, "dim1": 50, "dim2": 1001, "num_indices": 37}]
       for name in ("index_select_dim1", "take_along_dim1", "gather_middle")},
    # index_select on the last dim with K != D indices: fewer and more indices than columns
    "index/index_select_cols": [{"batch_size": 3, "dim1": 5, "dim2": 77, "num_indices": 13},
                                {"batch_size": 2, "dim1": 50, "dim2": 1001, "num_indices": 1500}],
    # gather along the last dim by K index columns per row: fewer and more than the D columns
    "index/gather_narrow": [{"batch_size": 5, "dim": 77, "num_picks": 13},
                            {"batch_size": 3, "dim": 1001, "num_picks": 1500}],
    "index/embedding_scaled": [{"batch_size": 2, "seq_len": 5, "vocab_size": 9, "d_model": 20},
                               {"batch_size": 3, "seq_len": 67, "vocab_size": 1000, "d_model": 1001}],
})
#: Resampling (examples/resize/): odd sizes, up and down, more planes than cores, an output width of 1 (align_corners:
#: scale 0), and planes too large for UB (upsampled to 300 x 302: tiles are bands of output rows).
_RESIZE_2D = [{"batch_size": 2, "channels": 3, "height": 7, "width": 9},
              {"batch_size": 1, "channels": 2, "height": 150, "width": 151}]
_RESIZE_3D = [{"batch_size": 2, "channels": 3, "depth": 5, "height": 7, "width": 9},
              {"batch_size": 1, "channels": 2, "depth": 3, "height": 61, "width": 67}]
EXAMPLE_SHAPES.update({
    "resize/upsample_nearest2d": _RESIZE_2D,
    "resize/upsample_bilinear2d": _RESIZE_2D,
    "resize/resize_nearest_exact2d": [
        {"batch_size": 3, "channels": 5, "height": 13, "width": 17, "out_height": 7, "out_width": 23},
        {"batch_size": 1, "channels": 2, "height": 301, "width": 37, "out_height": 150, "out_width": 41}],
    "resize/upsample_bilinear2d_align_corners": [
        {"batch_size": 2, "channels": 3, "height": 7, "width": 9, "out_height": 13, "out_width": 1},
        {"batch_size": 1, "channels": 3, "height": 33, "width": 31, "out_height": 65, "out_width": 61}],
    "resize/interpolate_linear1d": [{"batch_size": 3, "channels": 5, "length": 101, "out_length": 37},
                                    {"batch_size": 2, "channels": 2, "length": 1000, "out_length": 1601}],
    "resize/downsample_nearest1d": [{"batch_size": 3, "channels": 5, "length": 101, "out_length": 37},
                                    {"batch_size": 2, "channels": 70, "length": 4001, "out_length": 3}],
    # antialiased downsampling: odd sizes, one axis up and the other down, bands of output rows (301 rows of 257)
    "resize/downsample_bilinear2d_antialias": [
        {"batch_size": 2, "channels": 3, "height": 17, "width": 23, "out_height": 5, "out_width": 7},
        {"batch_size": 1, "channels": 2, "height": 301, "width": 257, "out_height": 37, "out_width": 200}],
    "resize/downsample_bicubic2d_antialias": [{"batch_size": 2, "channels": 3, "height": 17, "width": 23},
                                              {"batch_size": 1, "channels": 2, "height": 301, "width": 257}],
    # grid_sample: odd sizes, more planes than cores, a tile ending at a batch boundary, chunks of grid points
    **{f"resize/{name}": [{"batch_size": 2, "channels": 3, "height": 7, "width": 9, "out_height": 5, "out_width": 13},
                          {"batch_size": 3, "channels": 17, "height": 61, "width": 45, "out_height": 47,
                           "out_width": 51}]
       for name in ("grid_sample_bilinear", "spatial_transformer_sampler")},
    # bicubic: taps clamped at both edges, downsampling, an output width of 1, bands of output rows
    "resize/upsample_bicubic2d": _RESIZE_2D,
    "resize/resize_bicubic2d_align_corners": [
        {"batch_size": 2, "channels": 3, "height": 7, "width": 9, "out_height": 13, "out_width": 1},
        {"batch_size": 1, "channels": 3, "height": 301, "width": 37, "out_height": 150, "out_width": 413}],
    # volumes: whole volumes per tile, then volumes too large for UB (per output depth slice, bands of rows)
    "resize/upsample_trilinear3d": _RESIZE_3D,
    "resize/upsample_nearest3d": _RESIZE_3D,
    "resize/resize_trilinear3d_align_corners": [  # an output width of 1 (scale 0); an unchanged depth
        {"batch_size": 2, "channels": 3, "depth": 5, "height": 7, "width": 9, "out_depth": 11, "out_height": 13,
         "out_width": 1},
        {"batch_size": 1, "channels": 2, "depth": 4, "height": 40, "width": 33, "out_depth": 4, "out_height": 97,
         "out_width": 150}],
})
#: GEMM epilogue chains written as models are (weights in nn.Linear): the task's sizes, then 300 rows (2 base blocks of
#: 128 + 44), 70 input and 75 output features (not multiples of the 16 x 16 fractal).
_LINEAR_ODD = {"batch_size": 300, "in_features": 70, "out_features": 75}
EXAMPLE_SHAPES.update({f"fuse/{name}": [{}, _LINEAR_ODD] for name in (
    "linear_mish_mish", "linear_hardswish", "linear_swish_scaling", "linear_dropout_tanh", "linear_elu", "linear_selu",
    "linear_gelu_tanh_f16", "linear_softplus", "linear_scale_hardtanh_gelu", "linear_min_subtract",
    "linear_scale_residual_add", "linear_bias_leaky_relu_gelu", "linear_sum_max_logsumexp", "linear_logsumexp",
    "linear_relu_mean", "linear_add_swish_tanh_gelu_hardtanh", "linear_sigmoid_scale_residual", "linear_log_softmax")})
EXAMPLE_SHAPES.update({
    "fuse/mlp_up_proj_gelu": [{}, {"Bt": 3, "M": 50, "N": 75, "K": 70}],
    "fuse/batched_matmul_residual_clamp_min": [{}, {"Bt": 3, "M": 50, "N": 75, "K": 70}],
    "fuse/batched_matmul_row_max": [{}, {"Bt": 3, "M": 50, "N": 75, "K": 70}],
})
#: Tasks written the way models are (weights in nn.Linear / norm layers / nn.Parameter / buffers, pooling modules,
#: number arguments): one small, odd shape each ({"cap": N}: the task writes its sizes as literals, --cap scales
#: them); the groups tasks run every case of their JSON, the largest scaled by --cap.
EXAMPLE_SHAPES.update({
    "fuse/linear_relu_module": [{"batch_size": 300, "in_features": 70, "out_features": 75}],
    "fuse/linear_scale_arg": [{"cap": 40000}],
    "fuse/linear_gelu_param": [{"M": 300, "K": 70, "N": 75}],
    "normalization/layer_norm_module": [{"B": 33, "D": 1001}],
    "normalization/rms_norm_param": [{"batch_size": 3, "seq_len": 11, "hidden": 1001}],
    "normalization/group_norm_module": [{"batch_size": 3, "channels": 8, "groups": 4, "height": 9, "width": 13}],
    "normalization/batch_norm_module": [{"batch_size": 3, "features": 5, "height": 9, "width": 13}],
    "pooling/avg_pool1d_module": [{"batch_size": 3, "channels": 7, "length": 101}],
    "pooling/max_pool2d_module": [{"cap": 20000}],
    "activation/leaky_relu_arg": [{"cap": 100000}],
    "activation/swish_beta_param": [{"batch_size": 1, "dim": 100003}],
    "broadcast/bias_add_buffer": [{"batch_size": 33, "dim": 1001}],
    "math/add_groups": [{"cap": 100000}],
    "normalization/rms_norm_groups": [{"cap": 100000}],
})


#: Benchmark-scale sizes, checked without data by the host tiling probe (`ascend-lower --validate
#: tiling`, tests/test_benchmark_shapes.py): every entry whose names are all size constants of a task
#: applies to it. Rows of 393,216 floats and 64 x 64 x 256 x 256 tensors are the issue's examples;
#: the others are KernelBench-sized (benchmarks.md).
SCALE_SHAPES = [
    {"batch_size": 4096, "dim": 393216},
    {"batch_size": 64, "features": 64, "dim1": 256, "dim2": 256},
    {"batch_size": 128, "dim1": 4096, "dim2": 4095},
    {"batch_size": 32768, "num_classes": 4096},
    {"num_params": 1 << 28},
    {"M": 4096, "K": 4096, "N": 4096},
    {"Bt": 128, "M": 512, "K": 512, "N": 512},
    {"batch_size": 32, "channels": 64, "height": 512, "width": 512},
    {"batch_size": 16, "channels": 32, "depth": 64, "height": 64, "width": 64},
    {"batch_size": 64, "channels": 128, "length": 65536},
    {"M": 8192, "K": 8192},
    {"B": 4096, "D": 393216},
    {"batch_size": 8192, "in_features": 4096, "out_features": 4096},
    {"batch_size": 16, "seq_len": 4096, "hidden": 4096},
    {"batch_size": 64, "features": 64, "height": 256, "width": 256},
    {"num_rows": 4096, "dim": 4096, "num_indices": 4096},  # 4096 rows of 4096 picked from a 4096 x 4096 table
    {"batch_size": 4096, "seq_len": 4096, "num_embeddings": 50000, "embedding_dim": 512},  # 4096 x 4096 indices
    {"batch_size": 4096, "seq_len": 4096, "vocab_size": 32000, "d_model": 1024},
    {"batch_size": 16, "in_channels": 64, "out_channels": 128, "height": 256, "width": 256},  # issue 14's conv
    {"batch_size": 16, "in_channels": 64, "out_channels": 128, "length": 65536},
    {"batch_size": 4, "in_channels": 32, "out_channels": 64, "depth": 16, "height": 64, "width": 64},
    {"num_rows": 4096, "num_updates": 4096, "dim": 4096},  # 4096 rows of 4096 scattered into a 4096 x 4096 tensor
    {"batch_size": 64, "seq_len": 4096},  # attention-score rows: 64 batches x heads of 4096 x 4096 (causal softmax)
    # attention (flash attention: the key length is not bounded by UB): issue 15's B=4, H=32, S=4096, D=128
    {"Bt": 128, "M": 4096, "N": 4096, "Dk": 128, "Dv": 128},
    {"B": 4, "H": 32, "M": 4096, "N": 4096, "Dk": 128, "Dv": 128},
    {"B": 4, "H": 32, "Hkv": 8, "M": 4096, "N": 4096, "Dk": 128, "Dv": 128},
    {"B": 4, "H": 32, "S": 4096, "D": 128},
    {"Bt": 128, "S": 4096, "D": 128},  # causal linear attention: issue 15's B * H = 128 (chunks of 64)
    {"B": 4, "H": 32, "Sq": 4096, "Skv": 77, "D": 128},
    {"B": 4, "H": 32, "Hkv": 8, "Q": 1, "L": 32768, "D": 128},  # one decoding step against a 32K-token KV cache
]
#: Kernels with a documented size limit that an entry of SCALE_SHAPES would exceed: (the benchmark-scale
#: shapes used instead, the limit). At the exceeding shape the launch reports TILING (tested).
SCALE_LIMITED = {
    **{f"resize/{name}": ([{"batch_size": 64, "channels": 128, "length": 8192}],
                          "a 1-D plane is one row: it must fit UB with its output row (no column bands yet)")
       for name in ("interpolate_linear1d", "downsample_nearest1d")},
    **{f"resize/{name}": ([{"batch_size": 32, "channels": 64, "height": 128, "width": 128, "out_height": 128,
                            "out_width": 128}],
                          "grid_sample holds a whole input plane in UB (f32: about 46,000 elements, 214 x 214)")
       for name in ("grid_sample_bilinear", "spatial_transformer_sampler")},
    "index/gather_narrow": ([{"batch_size": 4096, "dim": 16384, "num_picks": 64}],
                            "a vector gather copies the tile's x rows into UB beside its indices and output (f32: about "
                            "30,000 per row; session 33, before which x was read per element from GM at 1-6 % of the ideal)"),
    "index/gather_dim1": ([{"batch_size": 4096, "dim": 4096}],
                          "a per-element gather holds whole rows of x, the i64 indices and y in UB (f32: about 4,500)"),
    **{f"index/{name}": ([{"batch_size": 4096, "dim": 4096}],
                         "a scatter holds whole rows of x, the indices, the source and y in UB (f32: about 4,500)")
       for name in ("scatter_add", "scatter_value", "index_add", "index_copy", "index_put_accumulate")},
    **{name: ([{"batch_size": 128, "dim1": 512, "dim2": 4095}],
              "a box stored whole holds the whole reduced axis (dim1) in UB with its temporaries (about 1000 in f32)")
       for name in ("activation/softmax_dim1", "normalization/l2_norm_dim1")},
}


def scale_shapes(key: str, constants: dict[str, int]) -> list[dict[str, int]]:
    """Benchmark-scale shapes of a gallery kernel whose task has these size constants: the largest
    SCALE_SHAPES entries made of its constants (an entry inside a larger one that also applies is
    skipped: 3-D pooling takes the depth entry, not the 2-D one), or its SCALE_LIMITED shapes."""
    if key in SCALE_LIMITED:
        return SCALE_LIMITED[key][0]
    if not constants:  # sizes written as literals: the task's own sizes are the benchmark's
        return [{}]
    fits = [s for s in SCALE_SHAPES if set(s) <= set(constants)]
    return [s for s in fits if not any(set(s) < set(t) for t in fits)]


@dataclass(frozen=True)
class Example:
    category: str
    name: str
    adsl: Path
    task: Path

    @cached_property
    def source(self):
        return load_file(self.adsl)[0]

    @property
    def is_rows(self) -> bool:
        """A row kernel (2-D tensors split by rows) rather than a flat one."""
        return any(len(p.shape) == 2 for p in self.source.instantiate().tensors)

    @cached_property
    def is_groups(self) -> bool:
        """A get_input_groups() task: its cases (shapes, dtypes, attributes) come from its sibling JSON, and each
        case runs on the dtype variant its data picks."""
        import ast

        tree = ast.parse(self.task.read_text())
        return any(isinstance(n, ast.FunctionDef) and n.name == "get_input_groups" for n in tree.body)

    @property
    def doc(self) -> str:
        tree = self.source.tree
        for node in tree.find_data("doc_stmt"):
            return str(node.children[0]).strip("\"' \n").splitlines()[0]
        return ""

    @property
    def dtypes(self) -> list[dict[str, DType]]:
        return self.source.dtype_variants

    def validation_dtypes(self) -> list[dict[str, DType]]:
        """The variants validated one by one; a groups task validates once, each case on its data's variant."""
        return self.dtypes[:1] if self.is_groups else self.dtypes

    def shapes(self) -> list[dict[str, int]]:
        """Overrides of the task's size constants; the key "cap" instead runs the task under --cap (sizes written
        as literals); a groups task runs its own cases."""
        key = f"{self.category}/{self.name}"
        if key in EXAMPLE_SHAPES:
            return EXAMPLE_SHAPES[key]
        if self.is_groups:
            return [{}]
        if self.category in CATEGORY_SHAPES:
            return CATEGORY_SHAPES[self.category]
        if self.is_rows:
            return ROW_SHAPES
        return FLAT_SHAPES.get(self.category, [{}])


def discover(root: Path = ROOT) -> list[Example]:
    out = []
    for adsl in sorted(root.glob("*/*.adsl")):
        out.append(Example(adsl.parent.name, adsl.stem, adsl, adsl.with_suffix(".py")))
    return out


def validate(example: Example, dtypes: dict[str, DType], overrides: dict[str, int], target: str = "ascend910b1",
             level: str = "sim", task_timeout: float | None = None):
    """Lower and validate one (example, dtype, shape) combination; returns a ValidationResult (a CasesReport for
    a groups task: every case, each on the variant its data picks). task_timeout: the task file's time limit
    in seconds (default npu_harness.task.TASK_TIMEOUT_S)."""
    from lowering import lower

    from .task import TASK_TIMEOUT_S
    from .validate import load_cases_for, load_task_for, validate_interp, validate_sim

    timeout = TASK_TIMEOUT_S if task_timeout is None else task_timeout

    overrides = dict(overrides)
    cap = overrides.pop("cap", None)
    if example.is_groups:
        from .validate_cases import KernelVariants, validate_cases

        variants = KernelVariants(example.source, {}, target, example.adsl.name)
        cases = load_cases_for(variants.kernels, example.task, overrides=overrides, cap=cap, timeout=timeout)
        return validate_cases(variants, cases, level)
    kernel = example.source.instantiate(dtypes)
    run = load_task_for(kernel, example.task, overrides=overrides, cap=cap, timeout=timeout)
    if level == "interp":
        return validate_interp(kernel, run)
    project, ctx = lower(kernel, target, example.adsl.name)
    return validate_sim(kernel, ctx.lowered, project, ctx, run)


def launch_at(example: Example, dtypes: dict[str, DType], overrides: dict[str, int],
              target: str = "ascend910b1") -> tuple[int, dict[str, int]]:
    """Blocks the kernel's host tiling launches at its task's shapes with these size overrides (shapes
    from the meta device, no data; tiling_probe), and the shape symbols bound there. A groups task: the case
    that launches the fewest blocks, each case on the variant its data picks."""
    from lowering import lower
    from lowering.targets import get_target

    from .binding import bind
    from .row_fallback import form_blocks
    from .task import cases_from
    from .task_worker import task_shapes
    from .tiling_probe import launch_blocks
    from .validate import kernel_spec

    kernels = ([example.source.instantiate(d) for d in example.dtypes] if example.is_groups
               else [example.source.instantiate(dtypes)])
    cases = cases_from(task_shapes(example.task, overrides, kernel_spec(kernels)))
    worst: tuple[int, dict[str, int]] | None = None
    for run in cases.cases:
        kernel = kernels[run.variant or 0]
        project, ctx = lower(kernel, target, example.adsl.name)
        b = bind(kernel, run)
        if project.fallback is not None:  # the form the host runs there (a row fallback: npu_harness/row_fallback.py)
            found = (form_blocks(kernel, project, ctx, b.symbols, b.scalars)[1], b.symbols)
        else:
            found = (launch_blocks(project, target, b.symbols, b.scalars, get_target(target).aiv), b.symbols)
        worst = found if worst is None or found[0] < worst[0] else worst
    return worst


def scale_launches(example: Example) -> tuple[list[dict[str, int]], bool]:
    """The kernel's benchmark-scale shapes (scale_shapes; a groups task: its own cases) and whether its host
    tiling launches at every one of them for every dtype."""
    from .task_worker import task_shapes

    if example.is_groups:
        return [{}], launch_at(example, {}, {})[0] > 0
    shapes = scale_shapes(f"{example.category}/{example.name}", task_shapes(example.task)["constants"])
    return shapes, all(launch_at(example, dts, shape)[0] > 0 for dts in example.dtypes for shape in shapes)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a literal | in a Markdown table cell


def index_markdown(rows: list[tuple[Example, str, str]]) -> str:
    lines = ["# Example gallery", "",
             "Generated by `python -m npu_harness.gallery --validate --write examples/README.md`; do not edit.",
             "Each kernel is validated in the emulator (ascend910b1) against its PyTorch task file, for every",
             "dtype it declares and on the listed shapes (`make test` runs the same validations). The last",
             "column: the host tiling (no data, `ascend-lower --validate tiling`) launches the kernel at these",
             "benchmark-scale sizes for every dtype (tests/test_benchmark_shapes.py).", "",
             "| category | kernel | what it demonstrates | dtypes | shapes | emulator | benchmark scale: launches |",
             "|---|---|---|---|---|---|---|"]
    for ex, status, scale in rows:
        dts = ", ".join("/".join(str(v) for v in d.values()) or
                        "/".join(sorted({str(p.dtype) for p in ex.source.instantiate().tensors})) for d in ex.dtypes)
        shapes = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) or "task default" for s in ex.shapes())
        if ex.is_groups:
            shapes = f"every case of its JSON ({shapes})"
        lines.append(f"| {ex.category} | [{ex.name}]({ex.category}/{ex.name}.adsl) | {_cell(ex.doc)} | {dts} "
                     f"| {shapes} | {status} | {scale} |")
    counts: dict[str, int] = {}
    for ex, *_ in rows:
        counts[ex.category] = counts.get(ex.category, 0) + 1
    lines += ["", "Kernels per category: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m npu_harness.gallery")
    p.add_argument("--validate", action="store_true", help="run every validation (slow)")
    p.add_argument("--write", type=Path, help="write the Markdown index here")
    args = p.parse_args(argv)
    rows = []
    failed = 0
    for ex in discover():
        status = "not run"
        if args.validate:
            results = []
            for dts in ex.validation_dtypes():
                for shape in ex.shapes():
                    try:
                        r = validate(ex, dts, shape)
                        results.append(r.ok)
                    except DslError as e:
                        print(e.render(), file=sys.stderr)
                        results.append(False)
            status = "PASS" if all(results) else f"FAIL ({results.count(False)}/{len(results)})"
            failed += not all(results)
            print(f"{ex.category}/{ex.name}: {status}")
        scale = "not run"
        if args.validate:
            shapes, launches = scale_launches(ex)
            scale = ("its cases" if ex.is_groups else "; ".join(", ".join(f"{k}={v}" for k, v in s.items())
                                                                  or "task default" for s in shapes)) + (
                ": PASS" if launches else ": FAIL")
            failed += not launches
        rows.append((ex, status, scale))
    text = index_markdown(rows)
    if args.write:
        args.write.write_text(text)
    else:
        print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
