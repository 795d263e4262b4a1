"""Helpers for node-level tests: a node over a MemoryLog whose Readies are applied synchronously."""

from __future__ import annotations

import random

import pytest

from kraftwire.log.memory import MemoryLog
from kraftwire.raft.config import RaftConfig
from kraftwire.raft.events import LogFlushed, Received
from kraftwire.raft.node import RaftNode
from kraftwire.testing.apply import apply_log_op, apply_snapshot_op


class Harness:
    """One node, driven by hand: ``apply`` executes a Ready on the log (flushing immediately if asked)."""

    def __init__(self, node_id=1, voters=(1, 2, 3), stored=None, log=None, now=0, seed=7, **kw):
        settings = dict(election_timeout_ms=100, fetch_timeout_ms=300, request_timeout_ms=300, append_linger_ms=0)
        settings.update(kw)
        self.config = RaftConfig(node_id=node_id, voters=frozenset(voters), **settings)
        self.log = log or MemoryLog()
        self.now = now
        self.persisted = stored
        self.node = RaftNode(self.config, self.log, stored, random.Random(seed), now)
        self.readies = []

    def apply(self, ready, flush=True):
        self.readies.append(ready)
        if ready.persist is not None:
            self.persisted = ready.persist
        for op in ready.log_ops:
            apply_log_op(self.log, op)
        sent = list(ready.send)
        if ready.high_watermark is not None:
            self.log.update_high_watermark(ready.high_watermark)
        for op in ready.snapshot_ops:
            apply_snapshot_op(self.log, op)
        if ready.flush and flush:
            offset = self.log.flush()
            sent += list(ready.send_after_flush)
            follow = self.node.handle(LogFlushed(offset), self.now)
            sent += self.apply(follow, flush)
        return sent

    def poll(self, at=None, flush=True):
        if at is not None:
            self.now = at
        return self.apply(self.node.poll(self.now), flush)

    def deliver(self, msg, flush=True):
        return self.apply(self.node.handle(Received(msg), self.now), flush)


@pytest.fixture
def harness():
    return Harness
