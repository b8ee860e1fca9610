"""Shared fixtures: golden files (`pytest --update-golden` rewrites them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"
REPO = Path(__file__).resolve().parent.parent

# Emulator programs built by the tests (and the CLI runs they start) compile at -O1: about a third less
# compile CPU than -O2 (npu_harness/sim/compiler.py), and the tests run small shapes. Set ASCEND_SIM_OPT to
# test another level.
os.environ.setdefault("ASCEND_SIM_OPT", "-O1")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from current output")


class Golden:
    def __init__(self, request):
        self.update = request.config.getoption("--update-golden")
        self.dir = GOLDEN_DIR / Path(request.node.fspath).stem

    def check(self, name: str, text: str) -> None:
        path = self.dir / name
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        if not path.exists():
            pytest.fail(f"golden file {path} is missing; run pytest --update-golden to create it")
        expected = path.read_text()
        assert text == expected, f"output differs from {path}; if the change is intended, run pytest --update-golden"


@pytest.fixture
def golden(request) -> Golden:
    return Golden(request)
