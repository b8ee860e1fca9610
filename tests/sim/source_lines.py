"""Line numbers of hand-written test kernels, found by a unique text on the line (reports name file:line)."""

from __future__ import annotations

from pathlib import Path


def line_in(src: Path, text: str) -> int:
    """The 1-based line of `src` holding `text`; the text must occur on exactly one line."""
    hits = [i for i, ln in enumerate(src.read_text().splitlines(), start=1) if text in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]
