"""One Raft node over a MemoryLog, driven by hand: its Readies run synchronously through the production executor."""

from __future__ import annotations

import random

from kraftwire.log.memory import MemoryLog
from kraftwire.raft.config import RaftConfig
from kraftwire.raft.events import Received
from kraftwire.raft.execute import HostBase, ReadyExecutor
from kraftwire.raft.node import RaftNode


class NodeHarness(HostBase):
    """One node, driven by hand: ``apply`` executes a Ready with the production executor, flushing at once when the
    Ready asks for it (unless ``flush=False``: then nothing is ever flushed and gated messages stay held)."""

    def __init__(self, node_id=1, voters=(1, 2, 3), stored=None, log=None, now=0, seed=7, **kw):
        settings = dict(election_timeout_ms=100, fetch_timeout_ms=300, request_timeout_ms=300, append_linger_ms=0)
        settings.update(kw)
        self.config = RaftConfig(node_id=node_id, voters=frozenset(voters), **settings)
        self.log = log or MemoryLog()
        self.now = now
        self.persisted = stored
        self.node = RaftNode(self.config, self.log, stored, random.Random(seed), now)
        self.executor = ReadyExecutor(self.log, self)
        self.readies = []
        self._sent = []
        self._flushing = True

    # ReadyHost
    def persist(self, state):
        self.persisted = state

    def send(self, message):
        self._sent.append(message)

    def flush(self):
        return self.log.flush() if self._flushing else None

    def arm_timer(self, wake_ms):
        pass

    def apply(self, ready, flush=True):
        """Execute ``ready`` (and the Readys its flush leads to); returns every message sent meanwhile, in order."""
        self.readies.append(ready)
        self._flushing = flush
        self._sent = sent = []
        flushed = self.executor.execute(ready)
        if flushed is not None:
            after = self.node.on_flushed(flushed, self.now)
            if after is not None:
                sent += self.apply(after, flush)
        return sent

    def poll(self, at=None, flush=True):
        if at is not None:
            self.now = at
        return self.apply(self.node.poll(self.now), flush)

    def deliver(self, msg, flush=True):
        return self.apply(self.node.handle(Received(msg), self.now), flush)
