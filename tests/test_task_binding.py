"""The binding rules (npu_harness/task_binding.py) and --cap's size maps (npu_harness/task_scale.py): pure
functions, no subprocess."""

from __future__ import annotations

import ast
import json
import math

import pytest

from npu_harness.task_binding import (
    ScalarLookup,
    ScalarSource,
    as_number,
    conversion,
    match_inputs,
    param_key,
    pick_variant,
)
from npu_harness.task_scale import LONG_ROW_MIN, CannotScale, choose_scaling, int_literals, scale_json, scale_source


def test_parameter_names_are_state_dict_names_with_underscores():
    assert param_key("fc.weight") == "fc_weight" and param_key("bias") == "bias"
    assert param_key("blocks.0.norm.running_var") == "blocks_0_norm_running_var"


def test_inputs_take_forward_tensors_then_parameters_by_name():
    m = match_inputs(["x", "fc_bias", "fc_weight"], 1, {"fc_weight": True, "fc_bias": True})
    assert m.ok and m.sources == (("arg", 0), ("param", "fc_bias"), ("param", "fc_weight"))


def test_missing_and_extra_parameters_are_named():
    m = match_inputs(["x", "fc_w"], 1, {"fc_weight": True, "fc_bias": True, "bn_num_batches_tracked": False})
    assert not m.ok and m.missing == ("fc_w",) and m.extra == ("fc_weight", "fc_bias")  # integer buffer: optional
    short = match_inputs(["x"], 2, {})
    assert not short.ok and short.untaken_args == 1


def test_variant_follows_the_data():
    variants = [["float32", "float32"], ["float16", "float16"], ["bfloat16", "bfloat16"]]
    assert pick_variant(["float16", "float16"], variants) == 1
    assert pick_variant(["bfloat16", "bfloat16"], variants) == 2
    assert pick_variant(["float32"], [["float16"], ["bfloat16"]]) == 0  # none matches: the first listed
    assert pick_variant(["float32", "bool"], [["float32", "int8"], ["float32", "uint8"]]) == 1  # bool -> u8 exact


def test_conversions():
    assert conversion("x", "float32", "float16").kind == "convert"
    assert conversion("m", "bool", "uint8").kind == "exact"
    assert conversion("t", "int64", "int32").kind == "convert"
    assert conversion("x", "int8", "float16").kind == "error"
    assert conversion("x", "bool", "float32").kind == "error"
    assert conversion("x", "float32", "int32").kind == "error"


def test_scalar_sources_in_order():
    look = ScalarLookup(args={"s": 3.5}, attrs={"eps": 1e-5, "s": 1.0},
                        sub_attrs={"avg_pool.stride": [2], "avg_pool.kernel_size": [4], "gn.eps": 1e-6},
                        case_attrs={"alpha": 0.5})
    assert look.find("s") == ScalarSource(3.5, "forward() argument s")  # forward() wins over the Model
    assert look.find("eps").origin == "Model.eps"
    assert look.find("avg_pool_stride").origin == "avg_pool.stride" and as_number(look.find("stride").value) == 2
    assert look.find("alpha").origin == "case attribute alpha"
    assert look.find("beta") is None


def test_ambiguous_leaf_name_lists_the_candidates():
    look = ScalarLookup(sub_attrs={"ln1.eps": 1e-5, "ln2.eps": 1e-6, "a.p": [1], "b.p": 1})
    found = look.find("eps")
    assert isinstance(found, list) and {s.origin for s in found} == {"ln1.eps", "ln2.eps"}
    assert isinstance(look.find("p"), ScalarSource)  # (1,) and 1 are the same value


def test_as_number():
    assert as_number((4,)) == 4 and as_number([2, 2]) == 2 and as_number(0.5) == 0.5
    assert as_number((2, 3)) is None and as_number(True) is None


# ---- --cap -------------------------------------------------------------------------------------------------

def _apply(shape, sizes):
    return [sizes.get(d, d) for d in shape]


def test_uniform_scaling_keeps_every_relation():
    # predictions [B, D], targets [B], with D = B (a broadcast that needs them equal), and a 2*B size
    shapes = [([(32768, 32768), (32768,), (65536, 16)], [])]
    s = choose_scaling(shapes, {32768, 16}, 1_000_000, set())
    assert s.method.startswith("uniform")
    assert s.sizes[65536] == 2 * s.sizes[32768]
    assert math.prod(_apply((32768, 32768), s.sizes)) <= 1_000_000


def test_rounded_scaling_keeps_equal_and_multiples():
    shapes = [([(4095, 4096), (4096,), (12288,)], [])]
    s = choose_scaling(shapes, {4096}, 100_000, set())
    assert s.method.startswith("rounded")
    assert s.sizes[12288] % s.sizes[4096] == 0
    assert math.prod(_apply((4095, 4096), s.sizes)) <= 100_000


def test_small_integer_divisors_stay_divisors():
    shapes = [([(16, 64, 256, 256), (64,)], [])]
    s = choose_scaling(shapes, {256}, 200_000, {8})  # num_groups = 8 divides the 64 channels
    assert s.sizes[64] % 8 == 0 and s.sizes[256] % 8 == 0


def test_rows_longer_than_ub_stay_longer():
    shapes = [([(4096, 393216)], [(4096, 393216)])]
    s = choose_scaling(shapes, {393216}, 1_000_000, set())
    assert _apply((393216,), s.sizes)[0] >= LONG_ROW_MIN
    assert math.prod(_apply((4096, 393216), s.sizes)) <= 1_000_000 and not s.notes


def test_a_cap_below_one_long_row_says_so():
    s = choose_scaling([([(8, 393216)], [])], {393216}, 10_000, set())
    assert s.notes and "chunked row path is not exercised" in s.notes[0]


def test_within_the_cap_nothing_changes_and_tiny_sizes_cannot_scale():
    assert choose_scaling([([(16, 1024)], [])], {1024}, 1_000_000, set()) is None
    with pytest.raises(CannotScale):
        choose_scaling([([(16, 16, 16, 16, 16)], [])], {16}, 1000, set())


def test_literals_and_constant_expressions_are_rewritten_once():
    src = "N = 4096\nK = 4 * 1024\nB = 2 ** 12\ndef f():\n    n = N\n    return n * 4, 1024, 4096, 7\n"
    tree = scale_source(ast.parse(src), {4096: 1024, 1024: 256})
    ns = {}
    exec(compile(tree, "t", "exec"), ns)  # noqa: S102
    assert ns["N"] == 1024 and ns["K"] == 1024 and ns["B"] == 1024
    assert ns["f"]() == (4096, 256, 1024, 7)  # N * 4 is computed from the scaled N: not mapped again
    assert {4096, 1024, 7} <= int_literals(ast.parse(src))


def test_json_shapes_are_scaled_and_attributes_kept():
    line = {"inputs": [{"name": "x", "type": "tensor", "dtype": "float16", "shape": [4096, 17]},
                       {"name": "eps", "type": "attr", "value": 4096}]}
    out = json.loads(scale_json(json.dumps(line) + "\n", {4096: 512}))
    assert out["inputs"][0]["shape"] == [512, 17] and out["inputs"][1]["value"] == 4096
