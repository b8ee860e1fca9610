"""Every Cast the compiler emits is in the documented per-product table of the vector Cast (CANN "Cast",
atlasascendc_api_07_0073, tables 5 and 6; docs/design.md "Cast pairs"), and none converts a dtype to itself.
The emulator enforces the same table at run time (error[CAST-UNSUPPORTED], tests/sim/test_emulator.py)."""

from __future__ import annotations

import re

import pytest

import ascend_dsl
from lowering import lower

R5 = {"CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC"}
NONE = {"CAST_NONE"}
ANY = R5 | NONE | {"CAST_ODD"}
DOCUMENTED = {
    "ascend910b1": {
        ("half", "int32_t"): R5, ("half", "int16_t"): R5, ("half", "float"): NONE, ("half", "int8_t"): R5 | NONE,
        ("half", "uint8_t"): R5 | NONE, ("float", "float"): R5, ("float", "int32_t"): R5, ("float", "half"): ANY,
        ("float", "int64_t"): R5, ("float", "int16_t"): R5, ("float", "bfloat16_t"): R5,
        ("bfloat16_t", "float"): NONE, ("bfloat16_t", "int32_t"): R5, ("uint8_t", "half"): NONE,
        ("int8_t", "half"): NONE, ("int16_t", "half"): R5 | NONE, ("int16_t", "float"): NONE,
        ("int32_t", "float"): R5 | NONE, ("int32_t", "int16_t"): NONE, ("int32_t", "int64_t"): NONE,
        ("int64_t", "int32_t"): NONE, ("int64_t", "float"): R5,
    },  # int32 -> half (the SetDeqScale form) left out: the compiler must not use it as a plain conversion
    "ascend310p": {
        ("half", "int32_t"): R5, ("half", "int16_t"): {"CAST_RINT"}, ("half", "float"): NONE,
        ("half", "int8_t"): (R5 - {"CAST_RINT"}) | NONE, ("half", "uint8_t"): (R5 - {"CAST_RINT"}) | NONE,
        ("float", "int32_t"): R5, ("float", "half"): NONE | {"CAST_ODD"}, ("uint8_t", "half"): NONE,
        ("int8_t", "half"): NONE, ("int16_t", "half"): NONE, ("int32_t", "float"): NONE, ("int32_t", "int16_t"): NONE,
    },
}
_DECL = re.compile(r"LocalTensor<([\w:]+)>\s+(\w+)\s*=")
_CAST = re.compile(r"\bCast\((\w+)(?:\[[^\]]*\])?,\s*(\w+)(?:\[[^\]]*\])?,\s*RoundMode::(\w+)")


def emitted_casts(text: str) -> list[tuple[str, str, str]]:
    """(src type, dst type, RoundMode) of each Cast in emitted AscendC (local declarations precede uses)."""
    types: dict[str, str] = {}
    out = []
    for line in text.splitlines():
        types.update({n: t for t, n in _DECL.findall(line)})
        out += [(types[s], types[d], m) for d, s, m in _CAST.findall(line)]
    return out


def _casts(text: str, target: str, **dtypes) -> list[tuple[str, str, str]]:
    kernel = ascend_dsl.parse_text(text, file="cast_pairs.adsl")[0].instantiate(dtypes)
    project, _ = lower(kernel, target)
    return [c for name, body in project.files.items() if name.endswith("_kernel.cpp") for c in emitted_casts(body)]


ROW_DIV = '''@kernel(T=[f16])
def rowdiv(x: Tensor[T, "B, D"], y: Tensor[T, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            v11 = load(x[r, :])
            v12 = v11 + 2.0
            store(y[r, :], cast(v11 / v12, T))
'''


def test_no_same_type_cast_for_an_identity_cast():
    # was Cast(y4Local, tmp0, RoundMode::CAST_NONE, count) with both tensors half
    assert _casts(ROW_DIV, "ascend910b1") == []


COPY_TWICE = '''@kernel(T=[f16])
def k(x: Tensor[T, "N"], y: Tensor[T, "N"], z: Tensor[T, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            v = cast(load(x[t]), T)
            store(y[t], v)
            store(z[t], cast(v, T) + v)
'''


def test_an_identity_cast_that_must_land_in_another_buffer_is_a_datacopy():
    kernel = ascend_dsl.parse_text(COPY_TWICE, file="cast_pairs.adsl")[0].instantiate({})
    text = next(b for n, b in lower(kernel, "ascend910b1")[0].files.items() if n.endswith("_kernel.cpp"))
    assert "Cast(" not in text and "Muls(" not in text
    assert re.search(r"DataCopy\(yLocal, xLocal, ", text), text


DTYPES = ["f16", "bf16", "f32", "i32", "i16", "i8", "u8"]
CAST_ONE = '''@kernel
def k(x: Tensor[{src}, "N"], y: Tensor[{dst}, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], cast(load(x[t]), {dst}))
'''


@pytest.mark.parametrize("target", sorted(DOCUMENTED))
def test_every_cast_between_dtypes_uses_documented_instructions(target):
    """cast(x, D) for every pair of DSL dtypes: lowered to documented Casts only, or a located error."""
    bad, lowered = [], 0
    for src in DTYPES:
        for dst in DTYPES:
            if "bf16" in (src, dst) and target == "ascend310p":
                continue  # no bf16 on 310P
            try:
                casts = _casts(CAST_ONE.format(src=src, dst=dst), target)
            except ascend_dsl.DslError:
                continue
            lowered += 1
            bad += [(src, dst, c) for c in casts if c[2] not in DOCUMENTED[target].get(c[:2], set())]
    assert not bad, bad
    assert lowered >= 25  # pairs rejected with a located error are left out (test below)


def test_float_to_int8_truncates_before_rounding_to_half():
    # f32 -> i8 has no Cast pair; rounding to half first would turn 2.9999 into 3: truncate to i32 first
    casts = _casts(CAST_ONE.format(src="f32", dst="i8"), "ascend910b1")
    assert casts == [("float", "int32_t", "CAST_TRUNC"), ("int32_t", "float", "CAST_NONE"),
                     ("float", "half", "CAST_NONE"), ("half", "int8_t", "CAST_TRUNC")]


def test_integer_narrowing_cast_is_a_located_error():
    # torch wraps i32 -> i8; the vector Cast has no such pair (and i32 -> i16 saturates)
    with pytest.raises(ascend_dsl.DslError) as err:
        _casts(CAST_ONE.format(src="i32", dst="i16"), "ascend910b1")
    text = err.value.render()
    assert "error[UNSUPPORTED]" in text and "cast from i32 to i16" in text and "cast_pairs.adsl:5:" in text


def test_a_cast_to_a_dtype_the_target_lacks_is_a_located_error():
    # 310P has no bf16: an f32 kernel that rounds through bf16 has no Cast to do it (found by the fuzzer, seed 28000)
    with pytest.raises(ascend_dsl.DslError) as err:
        _casts(CAST_ONE.format(src="f32", dst="f32").replace("cast(load(x[t]), f32)",
                                                              "cast(cast(load(x[t]), bf16), f32)"), "ascend310p")
    text = err.value.render()
    assert "error[DTYPE-UNSUPPORTED]" in text and "cast to bf16: ascend310p has no bf16" in text
    assert _casts(CAST_ONE.format(src="f32", dst="f16"), "ascend310p")  # a dtype it has lowers
