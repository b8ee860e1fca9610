"""Arguments shared by ascend-gen and ascend-eval."""

from __future__ import annotations

import argparse
import os

from .candidate import LEVELS
from .gen_grammar import GrammarSpec
from .loop import LoopConfig
from .providers import NAMES, ProviderConfig
from .providers.openai_http import GRAMMAR_MODES

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def add_provider_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("provider")
    g.add_argument("--provider", choices=NAMES, default="openai", help="where responses come from (default: openai)")
    g.add_argument("--model", help="openai: model name (env OPENAI_MODEL); transformers: a model directory or "
                   ".gguf file (default: the embedded SmolLM2-135M-Instruct)")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (env OPENAI_BASE_URL)")
    g.add_argument("--api-key", help="API key (env OPENAI_API_KEY; local servers accept any)")
    g.add_argument("--replay", help="replay provider: recorded responses (JSONL)")
    g.add_argument("--no-grammar", action="store_true", help="never constrain decoding (parse check only)")
    g.add_argument("--grammar-mode", choices=GRAMMAR_MODES, default="none",
                   help="how the openai provider sends the grammar (vLLM: structured_outputs; older vLLM: "
                   "guided_grammar; default none: hosted APIs reject unknown fields)")
    g.add_argument("--timeout", type=float, default=120.0, help="seconds per HTTP request (default 120)")
    g.add_argument("--retries", type=int, default=4, help="HTTP retries with exponential backoff (default 4)")
    g.add_argument("--threads", type=int, help="torch CPU threads for the transformers provider")


def add_loop_args(p: argparse.ArgumentParser, *, repair_default: int) -> None:
    g = p.add_argument_group("loop")
    g.add_argument("--repair-rounds", type=int, default=repair_default,
                   help=f"feedback rounds after a failed attempt (default {repair_default})")
    g.add_argument("--level", choices=LEVELS, default="sim", help="last check a kernel must pass (default sim)")
    g.add_argument("--trials", type=int, default=2, help="reference runs with fresh inputs per attempt (default 2)")
    g.add_argument("--cap", type=int, help="scale task sizes down to at most this many elements per input")
    g.add_argument("--target", default="ascend910b1")
    g.add_argument("--max-tokens", type=int, default=1024)
    g.add_argument("--temperature", type=float, default=0.7)
    g.add_argument("--top-p", type=float, default=0.95)
    g.add_argument("--seed", type=int, default=0)


def check_level(level: str) -> str | None:
    """One line naming what is missing when --level npu cannot run here (CANN, torch_npu), else None."""
    if level != "npu":
        return None
    from npu_harness.device.env import NpuUnavailable, require_npu

    try:
        require_npu()
    except NpuUnavailable as e:
        return f"error[NPU-UNAVAILABLE]: {e}"
    return None


def provider_config(args) -> ProviderConfig:
    return ProviderConfig(args.provider, args.model, args.base_url, args.api_key, args.replay,
                          grammar=not args.no_grammar, grammar_mode=args.grammar_mode, timeout=args.timeout,
                          retries=args.retries, threads=args.threads)


def loop_config(args) -> LoopConfig:
    if args.repair_rounds < 0 or args.trials < 1:
        raise ValueError("--repair-rounds must be >= 0 and --trials >= 1")
    return LoopConfig(args.repair_rounds, args.level, args.trials, args.cap, args.target, args.max_tokens,
                      args.temperature, args.top_p, args.seed, None if args.no_grammar else GrammarSpec())


def quiet_libraries() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download at run time
