"""Fixtures for kernelgen tests: a task tree, a tiny tokenizer and a tiny random-weight causal LM."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kg_helpers import GALLERY, REPO


@pytest.fixture
def task_tree(tmp_path: Path) -> Path:
    """A task folder with one category (activation) holding relu and elu."""
    root = tmp_path / "tasks"
    (root / "activation").mkdir(parents=True)
    for name in ("relu", "elu"):
        shutil.copy(GALLERY / f"{name}.py", root / "activation" / f"{name}.py")
    return root


@pytest.fixture(scope="session")
def tiny_tokenizer_dir(tmp_path_factory) -> Path:
    """A byte-level BPE tokenizer (384 tokens) trained here on the gallery and the language reference;
    tokenizer.json only (no transformers import, so grammar tests stay fast)."""
    tokenizers = pytest.importorskip("tokenizers")
    out = tmp_path_factory.mktemp("tiny-tok")
    texts = [p.read_text() for p in sorted(GALLERY.glob("*.adsl"))] + [(REPO / "docs" / "language.md").read_text()]
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=384, special_tokens=["<|endoftext|>"],
                                             initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.save(str(out / "tokenizer.json"))
    return out


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tiny_tokenizer_dir) -> Path:
    """A tiny Llama (2 layers, width 32) with random weights plus the tiny tokenizer, saved in the
    from_pretrained layout (a few hundred KB; no download)."""
    pytest.importorskip("transformers")
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("tiny-llm")
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tiny_tokenizer_dir / "tokenizer.json"),
                                   eos_token="<|endoftext|>")
    fast.save_pretrained(out)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                      eos_token_id=fast.eos_token_id, bos_token_id=fast.eos_token_id, pad_token_id=fast.eos_token_id)
    LlamaForCausalLM(cfg).save_pretrained(out)
    return out
