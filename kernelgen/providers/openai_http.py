"""OpenAI-compatible chat-completions endpoint (hosted APIs, vLLM, SGLang, Ollama) via `openai`.

Base URL, model and key come from flags or the environment (OPENAI_BASE_URL, OPENAI_MODEL,
OPENAI_API_KEY). Each call has a timeout; connection errors, timeouts, 429 and 5xx are retried with
exponential backoff (the client's own retries are off, so every attempt is ours and counted).
With `grammar_mode` the generation grammar goes in `extra_body`: "structured_outputs" (vLLM >= 0.10:
{"structured_outputs": {"grammar": G}}), "guided_grammar" (older vLLM: {"guided_grammar": G}); "none"
sends no grammar and the loop falls back to its parse check.
"""

from __future__ import annotations

import os
import time

from .base import Completion, Messages, ProviderError, Request

GRAMMAR_MODES = ("none", "structured_outputs", "guided_grammar")
RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class OpenAIProvider:
    name = "openai"

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 120.0, retries: int = 4, backoff: float = 1.0, grammar_mode: str = "none"):
        try:
            import openai
        except ImportError:
            raise ProviderError("PROVIDER-MISSING", "the openai provider needs the 'openai' package: "
                                "pip install openai") from None
        if grammar_mode not in GRAMMAR_MODES:
            raise ProviderError("PROVIDER-ARGS", f"grammar mode must be one of {', '.join(GRAMMAR_MODES)}")
        self._openai = openai
        self.model = model or os.environ.get("OPENAI_MODEL") or ""
        if not self.model:
            raise ProviderError("PROVIDER-ARGS", "no model: pass --model or set OPENAI_MODEL")
        base = base_url or os.environ.get("OPENAI_BASE_URL")
        key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"  # local servers accept any key
        self.client = openai.OpenAI(base_url=base, api_key=key, timeout=timeout, max_retries=0)
        self.retries, self.backoff, self.grammar_mode = retries, backoff, grammar_mode
        self.supports_grammar = grammar_mode != "none"

    def _extra_body(self, request: Request) -> dict:
        if not request.grammar or self.grammar_mode == "none":
            return {}
        if self.grammar_mode == "guided_grammar":
            return {"guided_grammar": request.grammar}
        return {"structured_outputs": {"grammar": request.grammar}}

    def complete(self, messages: Messages, request: Request) -> Completion:
        o = self._openai
        start = time.perf_counter()
        extra = self._extra_body(request)
        last = ""
        for attempt in range(self.retries + 1):
            try:
                resp = self.client.chat.completions.create(
                    model=self.model, messages=messages, max_tokens=request.max_tokens,
                    temperature=request.temperature, top_p=request.top_p, seed=request.seed,
                    extra_body=extra or None)
                choice = resp.choices[0]
                usage = resp.usage
                return Completion(choice.message.content or "", getattr(usage, "prompt_tokens", 0) or 0,
                                  getattr(usage, "completion_tokens", 0) or 0, choice.finish_reason or "",
                                  bool(extra), time.perf_counter() - start, {"attempts": attempt + 1})
            except o.APIStatusError as e:
                last = f"HTTP {e.status_code}: {str(e)[:300]}"
                if e.status_code not in RETRY_STATUS:
                    raise ProviderError("PROVIDER-HTTP", f"{self.client.base_url} answered {last}") from None
            except o.APITimeoutError:
                last = "timed out"
            except o.APIConnectionError as e:
                last = f"connection failed: {e}"
            if attempt < self.retries:
                time.sleep(self.backoff * (2 ** attempt))
        raise ProviderError("PROVIDER-HTTP", f"{self.client.base_url}: giving up after {self.retries + 1} attempts "
                            f"({last})")
