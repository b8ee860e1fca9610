"""The provider interface: one chat-completion call, with an optional grammar, usage recorded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

Messages = list[dict[str, str]]


class ProviderError(Exception):
    """A provider could not produce a response (network, HTTP status, missing replay record, ...).
    `code` is a stable diagnostic code (PROVIDER-HTTP, PROVIDER-TIMEOUT, REPLAY-MISSING, ...)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def render(self) -> str:
        return f"error[{self.code}]: {self.message}"


@dataclass(frozen=True)
class Request:
    """Everything a provider may use besides the messages. task/sample/round identify the call
    (replay looks records up by them); grammar is the generation grammar (lark text) or None."""

    task: str
    sample: int = 0
    round: int = 0
    grammar: str | None = None
    seed: int = 0
    max_tokens: int = 1024
    temperature: float = 0.7
    top_p: float = 0.95


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    constrained: bool = False  # decoding was grammar-constrained
    seconds: float = 0.0
    meta: dict = field(default_factory=dict)


class Provider(Protocol):
    name: str  # "openai" | "transformers" | "replay"
    model: str  # model id used in cache keys and reports

    #: whether this provider applies the grammar itself (local constrained decoding, or an
    #: endpoint told to); otherwise the loop relies on its parse check alone
    supports_grammar: bool

    def complete(self, messages: Messages, request: Request) -> Completion: ...
