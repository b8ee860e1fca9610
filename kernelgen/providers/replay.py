"""Replay of recorded responses (JSONL), for tests and reproducible runs.

One record per line: {"task": "relu", "sample": 0, "round": 0, "text": "..."}. "task" (the task
name or category/name), "sample" and "round" are optional: a record without a key matches every
value of it; the most specific matching record wins, and among equals the first in the file.
"response" is accepted for "text", so an `ascend-gen` attempt log (attempts.jsonl) replays as is.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .base import Completion, Messages, ProviderError, Request


class ReplayProvider:
    name = "replay"
    supports_grammar = False

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.model = f"replay:{self.path.name}"
        try:
            lines = self.path.read_text().splitlines()
        except OSError as e:
            raise ProviderError("REPLAY-FILE", f"cannot read replay file {self.path}: {e.strerror}") from None
        self.records: list[dict] = []
        for i, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ProviderError("REPLAY-FILE", f"{self.path}:{i}: not JSON ({e.msg})") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("text", rec.get("response")), str):
                raise ProviderError("REPLAY-FILE", f"{self.path}:{i}: a record needs a string 'text'")
            self.records.append(rec)

    def _matches(self, rec: dict, request: Request) -> int | None:
        score = 0
        task = rec.get("task")
        if task is not None:
            if task != request.task and task != request.task.split("/")[-1]:
                return None
            score += 4
        for key, value, weight in (("sample", request.sample, 2), ("round", request.round, 1)):
            if key in rec:
                if rec[key] != value:
                    return None
                score += weight
        return score

    def complete(self, messages: Messages, request: Request) -> Completion:
        start = time.perf_counter()
        best, best_score = None, -1
        for rec in self.records:
            s = self._matches(rec, request)
            if s is not None and s > best_score:
                best, best_score = rec, s
        if best is None:
            raise ProviderError("REPLAY-MISSING", f"{self.path} has no record for task {request.task!r}, sample "
                                f"{request.sample}, round {request.round}")
        text = best.get("text", best.get("response"))
        usage = best.get("usage") or {}
        return Completion(text, int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)),
                          best.get("finish_reason", "stop"), False, time.perf_counter() - start)
