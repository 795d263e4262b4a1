"""Fixtures of the codec tests (helpers: ``harness.codec``).

``codec`` runs a test once per implementation. The ``ext`` parameter *fails* when the extension cannot be imported,
except when the run deliberately disables it with ``KRAFTWIRE_NO_EXT=1`` (then the python twin is what is tested).
"""

from __future__ import annotations

import pytest

from kraftwire.records import pyimpl

from harness.codec import NO_EXT, load_ext


@pytest.fixture(params=["python", "ext"])
def codec(request):
    if request.param == "python":
        return pyimpl
    if NO_EXT:
        pytest.skip("KRAFTWIRE_NO_EXT=1: the extension is deliberately not under test in this run")
    return load_ext()  # an ImportError here fails the test, on purpose


@pytest.fixture
def both():
    """(python twin, extension) for differential tests; the extension must import unless disabled."""
    if NO_EXT:
        pytest.skip("KRAFTWIRE_NO_EXT=1: no extension to compare against")
    return pyimpl, load_ext()
