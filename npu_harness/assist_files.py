"""The file mode of assisted lowering (`ascend-lower --assist-prompt DIR --assist-answers DIR`): a person
or an external tool answers the prompts. Each prompt is written as DIR/<kernel>.<decision>.r<round>.prompt.md
(by the assisted step, for every model); the answer is read from <kernel>.<decision>.r<round>.json (or .txt)
in the answers directory. A missing answer ends the step with the best decision so far, uncached; the next
run, with the answer in place, asks the same prompt again (prompts are deterministic) and goes on."""

from __future__ import annotations

from pathlib import Path

from lowering.assist import AnswerKey

ANSWER_SUFFIXES = (".json", ".txt")


class FileModel:
    name = "files"

    def __init__(self, answers: Path | None):
        self.answers = answers

    def answer_path(self, key: AnswerKey) -> Path | None:
        if self.answers is None:
            return None
        for suffix in ANSWER_SUFFIXES:
            p = self.answers / f"{key.stem}{suffix}"
            if p.is_file():
                return p
        return None

    def answer(self, prompt: str, key: AnswerKey, grammar: str | None) -> str | None:
        p = self.answer_path(key)
        return p.read_text() if p is not None else None
