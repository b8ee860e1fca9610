"""Fixtures shared by the torch-op tests."""

from __future__ import annotations

import pytest

from ascend_dsl import interpreter


@pytest.fixture
def no_interpreter(monkeypatch):
    """A kernel call must run the emitted kernel: the interpreter raises if anything calls it."""
    def refuse(*a, **k):
        raise AssertionError("the interpreter must not run for a kernel call")

    monkeypatch.setattr(interpreter, "run", refuse)
