"""The providers of `ascend-gen` (OpenAI-compatible endpoint, local transformers with grammar-constrained
decoding, replay) as models of assisted lowering (lowering.assist.Model)."""

from __future__ import annotations

from lowering.assist import AnswerKey, AssistUnavailable

from .providers import ProviderConfig, ProviderError, Request, make_provider

SYSTEM = ("You are an expert on Huawei Ascend NPU kernels (AscendC). You answer with one JSON object of the "
          "schema in the prompt and nothing else.")


class ProviderModel:
    """Each prompt is one chat completion; replay records are looked up as task "<kernel>/<decision>" (or
    "<decision>" for every kernel) and round."""

    def __init__(self, cfg: ProviderConfig, *, max_tokens: int = 512, temperature: float = 0.0, seed: int = 0):
        try:
            self.provider = make_provider(cfg)
        except ProviderError as e:
            raise AssistUnavailable(e.render()) from None
        model = self.provider.model
        self.name = model if model.startswith(f"{self.provider.name}:") else f"{self.provider.name}:{model}"
        self.max_tokens, self.temperature, self.seed = max_tokens, temperature, seed

    def answer(self, prompt: str, key: AnswerKey, grammar: str | None) -> str | None:
        request = Request(task=f"{key.kernel}/{key.decision}", round=key.round,
                          grammar=grammar if self.provider.supports_grammar else None, seed=self.seed,
                          max_tokens=self.max_tokens, temperature=self.temperature)
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        try:
            return self.provider.complete(messages, request).text
        except ProviderError as e:
            raise AssistUnavailable(e.render()) from None
