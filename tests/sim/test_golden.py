"""Golden transcripts (hand-written expectations). ``KRAFTWIRE_REWRITE_GOLDEN=1`` rewrites the files instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kraftwire.testing.transcript import run_transcript

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.txt")), ids=lambda p: p.stem)
def test_transcript(path: Path):
    expected = path.read_text()
    actual = run_transcript(expected)
    if os.environ.get("KRAFTWIRE_REWRITE_GOLDEN"):
        path.write_text(actual)
        return
    assert actual == expected
