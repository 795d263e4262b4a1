"""Fixtures of the log tests: ``harness`` runs a test against every implementation (MemoryLog, SegmentedLog and a
SegmentedLog that rolls every few batches); ``batch`` builds record batches (``harness.batches.make_batch``)."""

from __future__ import annotations

import pytest

from harness.batches import LogHarness, make_batch

@pytest.fixture(params=["memory", "segmented", "segmented-tiny"])
def harness(request, tmp_path):
    h = LogHarness(request.param, tmp_path)
    yield h
    if h.log is not None and h.kind != "memory":
        try:
            h.log.close()
        except Exception:
            pass


@pytest.fixture
def batch():
    return make_batch
