"""The answer format of a schedule proposal: its JSON schema (in the prompt), its grammar (constrained
decoding for local models: every answer it admits is JSON of the schema's shape) and the parser that
turns an answer text into knob settings or says, for the model to read, why it cannot.

    {"knobs": {"loop0.size": 4096, "loop0.buffers": 2}, "why": "one line"}

Values are absolute; a knob left out keeps its current value (the best schedule so far); `{"knobs": {}}`
means "no further change".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .knobs import Knob


@dataclass(frozen=True)
class Proposal:
    settings: dict
    why: str = ""


class ProposalError(Exception):
    """An answer that is not a proposal on the menu. `check` names the check it failed: "json" (no JSON
    object) or "menu" (not the schema: unknown knob, illegal value)."""

    def __init__(self, check: str, reason: str):
        super().__init__(reason)
        self.check = check
        self.reason = reason


def schema(knobs: tuple[Knob, ...]) -> dict:
    return {
        "type": "object",
        "properties": {
            "knobs": {"type": "object", "properties": {k.key: k.schema() for k in knobs},
                      "additionalProperties": False},
            "why": {"type": "string", "maxLength": 300},
        },
        "required": ["knobs"],
        "additionalProperties": False,
    }


_STRING = r'/"([^"\\\n]|\\["\\\/bfnrt])*"/'


def grammar(knobs: tuple[Knob, ...]) -> str:
    """A lark grammar (llguidance's dialect) for the answers of `knobs`: every size, rows, chunk, buffers, cores
    and base knob in menu order, the rewrites optional, then `why`. Ranges are checked after decoding (`parse`)."""
    rules = []
    parts = []
    for i, k in enumerate(knobs):
        name = f"k{i}"
        if k.kind in ("size", "chunk", "base"):
            rules.append(f'{name}: "\\"{k.key}\\": " ("\\"auto\\"" | /[1-9][0-9]{{0,6}}/)')
        elif k.kind == "buffers":
            rules.append(f'{name}: "\\"{k.key}\\": " ("1" | "2")')
        elif k.kind == "rows":
            rules.append(f'{name}: "\\"{k.key}\\": " ("\\"auto\\"" | /[1-9][0-9]{{0,3}}/)')
        elif k.kind == "fuse":
            rules.append(f'{name}: "\\"{k.key}\\": " ("true" | "false")')
        elif k.kind == "cores":
            rules.append(f'{name}: "\\"{k.key}\\": " ("\\"all\\"" | /[1-9][0-9]{{0,2}}/)')
        else:
            rules.append(f'{name}: "\\"{k.key}\\": " {_STRING}')
        parts.append((name, k.kind == "expr"))
    required = [n for n, optional in parts if not optional]
    optional = "".join(f' (", " {n})?' for n, opt in parts if opt)
    # every kernel has a tile loop, hence a buffers knob: the rewrites follow the required knobs
    sep = ' ", " '
    knob_obj = f'"{{" ({sep.join(required)}{optional})? "}}"' if required else '"{}"'
    start = f'start: "{{\\"knobs\\": " {knob_obj} ", \\"why\\": " {_STRING} "}}"'
    return "\n".join([start, *rules]) + "\n"


def _json_text(text: str) -> str:
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    if fenced:
        return fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start:end + 1] if 0 <= start < end else text


def parse(text: str, knobs: tuple[Knob, ...]) -> Proposal:
    """The proposal in a model's answer (a JSON object, alone or in a ```json fence)."""
    try:
        data = json.loads(_json_text(text))
    except json.JSONDecodeError as e:
        raise ProposalError("json", f"the answer is not a JSON object ({e.msg} at character {e.pos})") from None
    if not isinstance(data, dict):
        raise ProposalError("json", "the answer is JSON but not an object")
    extra = sorted(set(data) - {"knobs", "why"})
    if extra or not isinstance(data.get("knobs"), dict):
        raise ProposalError("menu", "the answer must be {\"knobs\": {...}, \"why\": \"...\"}"
                            + (f"; unknown fields: {', '.join(extra)}" if extra else "; \"knobs\" is missing"))
    by_key = {k.key: k for k in knobs}
    settings = {}
    for key, value in data["knobs"].items():
        if key not in by_key:
            raise ProposalError("menu", f"unknown knob {key!r}; the knobs are {', '.join(by_key)}")
        problem = by_key[key].check(value)
        if problem:
            raise ProposalError("menu", problem)
        settings[key] = value
    why = data.get("why", "")
    return Proposal(settings, why if isinstance(why, str) else "")
