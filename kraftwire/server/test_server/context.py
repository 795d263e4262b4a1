"""What the client APIs share: the node's core, log and topic, error codes, "after every Ready" watchers, and the
one offset-keyed wait (``waits``) for answers that need the log to reach an offset.

Produce acknowledgements, coordinator appends and parked consumer fetches wait for the log (flushed offset, high
watermark) or for a leadership change; the driver calls ``on_ready`` callbacks after executing each Ready, which is
exactly when those can have moved.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from kraftwire.server.runtime.waits import FLUSHED, HIGH_WATERMARK, OffsetWaits

# The wire error codes the client APIs answer with, re-exported from the one table (``c.NONE`` etc. in the handlers).
from kraftwire.error_codes import (  # noqa: F401
    COORDINATOR_NOT_AVAILABLE,
    CORRUPT_MESSAGE,
    DUPLICATE_SEQUENCE_NUMBER,
    INVALID_PRODUCER_EPOCH,
    INVALID_RECORD,
    INVALID_REQUIRED_ACKS,
    LEADER_NOT_AVAILABLE,
    MESSAGE_TOO_LARGE,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_NOT_AVAILABLE,
    OFFSET_OUT_OF_RANGE,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    REQUEST_TIMED_OUT,
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    UNKNOWN_PRODUCER_ID,
    UNKNOWN_TOPIC_ID,
    UNKNOWN_TOPIC_OR_PARTITION,
    UNSUPPORTED_VERSION,
)


class BrokerContext:
    def __init__(self, node) -> None:
        self.node = node
        self.watchers: list[Callable[[], None]] = []
        self._attached = None
        self.waits = OffsetWaits()

    def attach(self) -> bool:
        """Hook the "after every Ready" callbacks into the node's driver (once it exists); False if not running."""
        driver = self.node.driver
        if driver is None or driver.stopped or self.node.log is None:
            return False
        if self._attached is not driver:
            driver.on_ready.append(self._on_ready)
            self._attached = driver
        return True

    # ---------------------------------------------------------------------------------------------------- views
    @property
    def raft(self):
        return self.node.raft

    @property
    def driver(self):
        return self.node.driver

    @property
    def log(self):
        return self.node.log

    @property
    def topic_name(self) -> str:
        return self.node.topic.name

    @property
    def topic_id(self):
        return self.node.topic.topic_id

    @property
    def voters(self):
        return self.node.settings.voters

    @property
    def node_id(self) -> int:
        return self.node.settings.node_id

    def is_leader(self) -> bool:
        raft = self.raft
        return raft is not None and raft.is_leader() and not self.driver.stopped

    def leader_id(self) -> int:
        return self.raft.quorum.leader_id

    def epoch(self) -> int:
        return self.raft.epoch

    def epoch_start_offset(self) -> int:
        """Where this leader's epoch starts in the log (-1 when not leading)."""
        return getattr(self.raft.quorum.state, "epoch_start_offset", -1) if self.raft is not None else -1

    def loop(self) -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    def voter(self, node_id: int):
        for v in self.voters:
            if v.node_id == node_id:
                return v
        return None

    # ---------------------------------------------------------------------------------------------------- watchers
    def _on_ready(self) -> None:
        for watcher in list(self.watchers):
            watcher()
        self.check_waits()

    # ---------------------------------------------------------------------------------------------------- waits
    def check_waits(self) -> None:
        if not self.waits.pending:  # most Readys: every Produce already answered
            return
        lg = self.log
        if lg is not None:
            self.waits.check(lg.high_watermark(), lg.flushed_offset(), self.epoch() if self.is_leader() else None)

    def wait_for(self, end: int, epoch: int, callback: Callable[[int], None], *, committed: bool = True,
                 timeout_ms: int = 30_000) -> None:
        """``callback(error)`` once the high watermark (``committed``) or the flushed offset reaches ``end``
        (NONE), when this node stops leading ``epoch`` first (NOT_LEADER_OR_FOLLOWER), or after ``timeout_ms``
        (REQUEST_TIMED_OUT)."""
        self.waits.add(HIGH_WATERMARK if committed else FLUSHED, end, epoch, callback, loop=self.loop(),
                       timeout_s=max(timeout_ms, 0) / 1000.0, timeout_error=REQUEST_TIMED_OUT)
        self.check_waits()

    def append_and_commit(self, raw_batch: bytes, callback: Callable[[int], None], timeout_ms: int = 30_000) -> None:
        """Append ``raw_batch`` as leader; ``callback(error)`` as ``wait_for`` says, for its last offset."""
        epoch = self.epoch()
        try:
            _first, last = self.driver.call(lambda raft, now: raft.append_batch(raw_batch, now))
        except Exception:  # NotLeaderError and friends: the caller only needs to know it did not work
            callback(NOT_LEADER_OR_FOLLOWER)
            return
        self.wait_for(last + 1, epoch, callback, timeout_ms=timeout_ms)
