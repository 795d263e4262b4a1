"""Real Kafka clients against a real 3-node kraftwire quorum (processes on 127.0.0.1).

Reuses the end-to-end process harness (tests/e2e/conftest.py: ``Cluster``, ``kw``, ``segment_batches``), loaded by
path because ``--import-mode=importlib`` cannot import a conftest by name. One quorum per test module (the clients
write to the quorum's one topic, ``clients``; every test tags its values and checks only its own records, in full
and in order, so modules stay independent without paying for a quorum per test). Every wait is bounded.
"""

from __future__ import annotations

import importlib.util
import os
import time

import pytest

_E2E = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e", "conftest.py")
_spec = importlib.util.spec_from_file_location("kraftwire_e2e_harness", _E2E)
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)

TOPIC = "clients"
RECORDS = 10_000


class Quorum:
    def __init__(self, cluster) -> None:
        self.cluster = cluster

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.cluster.nodes.values())

    @property
    def servers(self) -> list[str]:
        return [f"127.0.0.1:{n.port}" for n in self.cluster.nodes.values()]

    def leader(self):
        part = self.cluster.wait_for_leader()
        return self.cluster.nodes[part.leader_id]

    def partition_dir(self, node) -> str:
        return os.path.join(node.log_dir, f"{TOPIC}-0")

    def batches(self, node) -> list[dict]:
        return harness.segment_batches(self.partition_dir(node), check=False)


def start_quorum(base: str, extra_props: str = "") -> Quorum:
    cluster = harness.Cluster(base, 3, command="server-start", extra_props=f"metadata.log.topic={TOPIC}\n" + extra_props)
    cluster.start_all()
    cluster.wait_for_leader()
    return Quorum(cluster)


@pytest.fixture(scope="module")
def quorum(tmp_path_factory):
    q = start_quorum(str(tmp_path_factory.mktemp("quorum")))
    try:
        yield q
    finally:
        q.cluster.close()


def values(tag: str, n: int = RECORDS) -> list[bytes]:
    return [f"{tag}-{i:06d}".encode() for i in range(n)]


def only(tag: str, got) -> list[bytes]:
    prefix = f"{tag}-".encode()
    return [v for v in got if v is not None and v.startswith(prefix)]


def bounded(seconds: float):
    """A deadline helper: ``left()`` seconds remaining, ``expired()``."""
    end = time.monotonic() + seconds

    class _D:
        @staticmethod
        def left() -> float:
            return max(0.0, end - time.monotonic())

        @staticmethod
        def expired() -> bool:
            return time.monotonic() >= end

    return _D


@pytest.fixture
def interop():
    """Helpers for test modules (conftest cannot be imported by name)."""

    class H:
        TOPIC = TOPIC
        RECORDS = RECORDS
        values = staticmethod(values)
        only = staticmethod(only)
        bounded = staticmethod(bounded)
        start_quorum = staticmethod(start_quorum)
        harness_module = harness

    return H


@pytest.fixture
def e2e_kw():
    """``python -m kraftwire ARGS`` to completion (the e2e harness's ``kw``)."""
    return harness.kw
