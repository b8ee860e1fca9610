"""The providers of `ascend-gen` (OpenAI-compatible endpoint, local transformers with grammar-constrained
decoding, replay) as models of assisted lowering (lowering.assist.Model)."""

from __future__ import annotations

from pathlib import Path

from ascend_dsl.diagnostics import DslError
from lowering.assist import AnswerKey, AssistUnavailable

from .providers import ProviderConfig, ProviderError, Request, make_provider, model_id

SYSTEM = ("You are an expert on Huawei Ascend NPU kernels (AscendC). You answer with one JSON object of the "
          "schema in the prompt and nothing else.")
#: for the compute stages of extern ops (decision "construct_<dtype>", lowering/assist/construct.py)
SYSTEM_CODE = ("You are an expert on Huawei Ascend NPU kernels (AscendC). You answer with the body of the C++ "
               "function in the prompt, in one ```cpp fenced block, and nothing else.")


class ProviderModel:
    """Each prompt is one chat completion; replay records are looked up as task "<kernel>/<decision>" (or
    "<decision>" for every kernel) and round. The provider is made on the first prompt, so a rebuild from the
    decision cache never loads a model (nor needs its replay file)."""

    def __init__(self, cfg: ProviderConfig, *, max_tokens: int = 512, temperature: float = 0.0, seed: int = 0):
        self.cfg = cfg
        self.name = f"replay:{Path(cfg.replay).name}" if cfg.name == "replay" and cfg.replay else \
            f"{cfg.name}:{model_id(cfg) or 'default'}"
        self.max_tokens, self.temperature, self.seed = max_tokens, temperature, seed
        self._provider = None

    def _get(self):
        if self._provider is None:
            try:
                self._provider = make_provider(self.cfg)
            except ProviderError as e:  # the options name no usable model: the user's mistake
                raise DslError.at("ARGS", f"--assist {self.cfg.name}: {e.message}", None) from None
        return self._provider

    def answer(self, prompt: str, key: AnswerKey, grammar: str | None) -> str | None:
        provider = self._get()
        request = Request(task=f"{key.kernel}/{key.decision}", round=key.round,
                          grammar=grammar if provider.supports_grammar else None, seed=self.seed,
                          max_tokens=self.max_tokens, temperature=self.temperature)
        system = SYSTEM_CODE if key.decision.startswith("construct") else SYSTEM
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        try:
            return provider.complete(messages, request).text
        except ProviderError as e:
            raise AssistUnavailable(e.render()) from None
