"""Fixtures of the interop tests (helpers: ``harness.clients``): one quorum per test module, a fault proxy."""

from __future__ import annotations

import pytest

from harness.clients import FaultProxy, start_quorum


@pytest.fixture(scope="module")
def quorum(tmp_path_factory):
    q = start_quorum(str(tmp_path_factory.mktemp("quorum")))
    try:
        yield q
    finally:
        q.cluster.close()


@pytest.fixture
def fault_proxy(quorum):
    proxy = FaultProxy(quorum)
    try:
        yield proxy
    finally:
        proxy.close()
