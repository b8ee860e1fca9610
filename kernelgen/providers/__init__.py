"""LLM providers: one interface (`Provider.complete`), three implementations."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Completion, Messages, Provider, ProviderError, Request

NAMES = ("openai", "transformers", "replay")


@dataclass(frozen=True)
class ProviderConfig:
    """Picklable description of a provider (workers rebuild the provider from it)."""

    name: str
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    replay: str | None = None
    grammar: bool = True  # constrain decoding where the provider can
    grammar_mode: str = "structured_outputs"  # how an OpenAI-compatible endpoint receives the grammar
    timeout: float = 120.0
    retries: int = 4
    threads: int | None = None


def make_provider(cfg: ProviderConfig) -> Provider:
    if cfg.name == "replay":
        from .replay import ReplayProvider

        if not cfg.replay:
            raise ProviderError("PROVIDER-ARGS", "the replay provider needs --replay FILE.jsonl")
        return ReplayProvider(cfg.replay)
    if cfg.name == "openai":
        from .openai_http import OpenAIProvider

        return OpenAIProvider(cfg.model, cfg.base_url, cfg.api_key, timeout=cfg.timeout, retries=cfg.retries,
                              grammar_mode=cfg.grammar_mode if cfg.grammar else "none")
    if cfg.name == "transformers":
        from .local_hf import TransformersProvider

        return TransformersProvider(cfg.model, constrained=cfg.grammar, threads=cfg.threads)
    raise ProviderError("PROVIDER-ARGS", f"unknown provider '{cfg.name}'; one of {', '.join(NAMES)}")


def model_id(cfg: ProviderConfig) -> str:
    """The model's name for cache keys, without loading it."""
    if cfg.name == "replay":
        return f"replay:{cfg.replay}"
    if cfg.name == "transformers" and not cfg.model:
        return "SmolLM2-135M-Instruct.Q4_1.gguf"
    return cfg.model or ""


__all__ = ["NAMES", "Completion", "Messages", "Provider", "ProviderConfig", "ProviderError", "Request",
           "make_provider", "model_id"]
