"""The `ascend-lower` command: npu_harness's CLI plus the model providers of assisted lowering
(`--assist openai|transformers|replay`), which live in this layer."""

from __future__ import annotations

import sys

from npu_harness import cli

from .providers import ProviderConfig
from .providers.openai_http import GRAMMAR_MODES


def build_parser():
    p = cli.build_parser()
    g = p.add_argument_group("assist provider (--assist openai|transformers|replay)")
    g.add_argument("--model", help="openai: model name (env OPENAI_MODEL); transformers: a model directory or .gguf "
                   "file (default: the embedded SmolLM2-135M-Instruct)")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)")
    g.add_argument("--api-key", help="API key (env OPENAI_API_KEY)")
    g.add_argument("--replay", help="replay: recorded answers (JSONL: {\"task\": \"<kernel>/schedule\", \"round\": 0, "
                   "\"text\": ...})")
    g.add_argument("--no-grammar", action="store_true", help="never constrain decoding")
    g.add_argument("--grammar-mode", choices=GRAMMAR_MODES, default="none",
                   help="how the openai provider sends the answer grammar (default none)")
    g.add_argument("--provider-timeout", type=float, default=120.0, help="seconds per HTTP request (default 120)")
    return p


def models(args):
    from .assist_models import ProviderModel
    from .cli_common import quiet_libraries

    quiet_libraries()
    cfg = ProviderConfig(args.assist, args.model, args.base_url, args.api_key, args.replay,
                         grammar=not args.no_grammar, grammar_mode=args.grammar_mode, timeout=args.provider_timeout)
    return ProviderModel(cfg, seed=args.seed)


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, models=models, parser=build_parser())


if __name__ == "__main__":
    sys.exit(main())
