"""The generation grammar: valid for llguidance, and every string it produces parses with the real
(Indenter-based) parser. Random walks through the grammar stand in for a model."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ascend_dsl import parse_text
from kernelgen.gen_grammar import GrammarSpec

llguidance = pytest.importorskip("llguidance")


def _walk(tok, grammar: str, rng: random.Random, max_tokens: int) -> tuple[str, bool]:
    m = llguidance.LLMatcher(tok, llguidance.LLMatcher.grammar_from_lark(grammar), log_level=0)
    assert not m.is_error(), m.get_error()
    out: list[int] = []
    for _ in range(max_tokens):
        bits = np.unpackbits(np.frombuffer(m.compute_bitmask(), dtype=np.uint8), bitorder="little")
        allowed = [i for i in np.flatnonzero(bits[: tok.vocab_size]) if i != tok.eos_token]
        if m.is_accepting() and (not allowed or rng.random() < 0.02):
            return tok.decode_str(out), True
        t = rng.choice(allowed)
        assert m.consume_token(t)
        out.append(t)
        if m.is_stopped():
            return tok.decode_str(out), True
    return tok.decode_str(out), False


@pytest.fixture(scope="module")
def lltok(tiny_tokenizer_dir):
    return llguidance.LLTokenizer((tiny_tokenizer_dir / "tokenizer.json").read_text())


def test_grammar_is_valid_for_llguidance():
    for spec in (GrammarSpec(), GrammarSpec(depth=0), GrammarSpec(depth=3)):
        err, msgs = llguidance.LLMatcher.validate_grammar_with_warnings(
            llguidance.LLMatcher.grammar_from_lark(spec.text()))
        assert not err, msgs


@pytest.mark.parametrize("spec", [GrammarSpec(name_max=8, doc_max=20), GrammarSpec(depth=1, max_assigns=2)])
def test_random_walks_parse_with_the_real_parser(lltok, spec):
    rng = random.Random(0)
    grammar = spec.text()
    done = 0
    for i in range(12):
        text, complete = _walk(lltok, grammar, rng, 1500)
        if not complete:
            continue
        done += 1
        kernels = parse_text(text, f"walk{i}.adsl")
        assert len(kernels) == 1, text
        assert text.startswith("from ascend_dsl import") and "\n    for " in text and "\n        for " in text
    assert done >= 6


def test_keywords_are_not_names(lltok):
    m = llguidance.LLMatcher(lltok, llguidance.LLMatcher.grammar_from_lark(GrammarSpec().text()), log_level=0)
    prefix = "from ascend_dsl import kernel, Tensor, f32, f16\n\n\n@kernel\ndef "
    assert m.consume_tokens(lltok.tokenize_str(prefix))
    assert m.validate_tokens(lltok.tokenize_str("for(")) < len(lltok.tokenize_str("for("))


def test_max_bytes_bounds_the_language():
    small = GrammarSpec(depth=0, max_assigns=1, max_stores=1, max_params=2, name_max=4, doc_max=8)
    assert 0 < small.max_bytes() < GrammarSpec().max_bytes()


def test_box_reductions_over_dim_0_and_1_are_in_the_language(lltok):
    grammar = llguidance.LLMatcher.grammar_from_lark(GrammarSpec().text())
    for axis, extent, out in ((1, "A * C", "A, C"), (0, "R * C", "R, C")):
        text = ("from ascend_dsl import kernel, Tensor, f32, f16\n\n\n@kernel\n"
                f'def k(x: Tensor[f32, "A, R, C"], y: Tensor[f32, "{out}"]):\n'
                f"    for blk in split({extent}, cores=AIV):\n"
                "        for t in tile(blk, size=auto, buffers=2):\n"
                f"            store(y[t], sum(load(x[t]), axis={axis}))\n")
        m = llguidance.LLMatcher(lltok, grammar, log_level=0)
        tokens = lltok.tokenize_str(text)
        assert m.validate_tokens(tokens) == len(tokens), text
        assert parse_text(text, "box.adsl")[0].instantiate().body[0].body[0].shape.axis == axis
