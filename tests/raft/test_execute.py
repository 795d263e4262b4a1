"""The Ready executor keeps the contract's order (kraftwire.raft.ready), whatever its host does."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from kraftwire.ids import SnapshotId
from kraftwire.log.memory import MemoryLog
from kraftwire.raft.election import ElectionState
from kraftwire.raft.execute import ReadyExecutor
from kraftwire.raft.messages import Message
from kraftwire.raft.ready import (
    AppendAsLeader,
    CreateSnapshot,
    InitializeLeaderEpoch,
    Ready,
    TruncateTo,
)
from kraftwire.records import RecordBatchBuilder


def _batch(n=1):
    b = RecordBatchBuilder()
    for i in range(n):
        b.append(None, f"v{i}".encode(), timestamp=0)
    return b.build()


def _msg(n):
    return Message(src=1, dst=2, correlation_id=n)


class TracingLog(MemoryLog):
    """A MemoryLog that records which calls the executor made, into the host's shared trace."""

    def __init__(self, trace):
        super().__init__()
        self.trace = trace

    def append_as_leader(self, records, epoch, batches=None):
        self.trace.append("append")
        return super().append_as_leader(records, epoch, batches)

    def truncate_to(self, offset):
        self.trace.append(f"truncate {offset}")
        return super().truncate_to(offset)

    def update_high_watermark(self, offset):
        self.trace.append(f"hw {offset}")
        return super().update_high_watermark(offset)


class Host:
    def __init__(self, *, inline=True):
        self.trace = []
        self.inline = inline
        self.log = None
        self.locked = False

    def persist(self, state):
        self.trace.append(f"persist {state.epoch}")

    def send(self, message):
        self.trace.append(f"send {message.correlation_id}")

    def flush(self):
        if self.inline:
            self.trace.append("flush")
            return self.log.flush()
        self.trace.append("flush requested")
        return None

    @contextmanager
    def exclusive(self):
        assert not self.locked
        self.locked = True
        self.trace.append("lock")
        try:
            yield
        finally:
            self.locked = False
            self.trace.append("unlock")

    def high_watermark_advanced(self):
        self.trace.append("hw advanced")

    def snapshot_stored(self, snapshot_id):
        self.trace.append(f"snapshot stored {snapshot_id.end_offset}")

    def arm_timer(self, wake_ms):
        self.trace.append(f"timer {wake_ms}")


def _executor(inline=True):
    host = Host(inline=inline)
    log = TracingLog(host.trace)
    host.log = log
    return ReadyExecutor(log, host), host, log


def test_steps_run_in_the_contracts_order():
    ex, host, log = _executor()
    ready = Ready(number=1, persist=ElectionState(3, 1, None),
                  log_ops=(InitializeLeaderEpoch(3), AppendAsLeader(_batch(2), 3)), flush=True,
                  send=(_msg(1),), send_after_flush=(_msg(2),), high_watermark=0, next_wakeup_ms=50)
    assert ex.execute(ready) == log.end_offset() == 2
    assert host.trace == ["persist 3", "append", "flush", "send 1", "send 2", "hw 0", "hw advanced", "timer 50"]


def test_gated_messages_wait_for_a_deferred_flush_that_covers_them():
    ex, host, log = _executor(inline=False)
    ex.execute(Ready(number=1, log_ops=(AppendAsLeader(_batch(), 0),), flush=True, send=(_msg(1),),
                     send_after_flush=(_msg(2),)))
    assert host.trace == ["append", "flush requested", "send 1", "timer 0"]
    assert ex.holding
    ex.execute(Ready(number=2, log_ops=(AppendAsLeader(_batch(), 0),), flush=True, send_after_flush=(_msg(3),)))
    host.trace.clear()
    ex.flushed(1)  # covers the first group only
    assert host.trace == ["send 2"]
    ex.flushed(log.flush())
    assert host.trace == ["send 2", "send 3"] and not ex.holding


def test_gated_messages_without_a_flush_request_one_when_the_log_is_not_durable():
    ex, host, log = _executor(inline=False)
    ex.execute(Ready(number=1, log_ops=(AppendAsLeader(_batch(), 0),)))
    host.trace.clear()
    ex.execute(Ready(number=2, send_after_flush=(_msg(1),)))
    assert host.trace == ["flush requested", "timer 0"] and ex.holding
    ex.flushed(log.flush())
    assert host.trace[-1] == "send 1"


def test_gated_messages_leave_at_once_when_the_log_is_durable():
    ex, host, log = _executor(inline=False)
    ex.execute(Ready(number=1, log_ops=(AppendAsLeader(_batch(), 0),)))
    log.flush()
    host.trace.clear()
    ex.execute(Ready(number=2, send_after_flush=(_msg(1),)))
    assert host.trace == ["send 1", "timer 0"]


def test_a_truncation_lowers_held_targets_to_the_new_log_end():
    ex, host, log = _executor(inline=False)
    ex.execute(Ready(number=1, log_ops=(AppendAsLeader(_batch(3), 0),), flush=True, send_after_flush=(_msg(1),)))
    ex.execute(Ready(number=2, log_ops=(TruncateTo(1),)))
    assert "lock" in host.trace and host.trace.index("lock") < host.trace.index("truncate 1")
    host.trace.clear()
    ex.flushed(log.flush())  # the log is durable to 1 now: the message no longer waits for offsets that are gone
    assert host.trace == ["send 1"]


def test_snapshots_are_written_under_the_lock_and_reported():
    ex, host, log = _executor()
    ex.execute(Ready(number=1, log_ops=(AppendAsLeader(_batch(), 0), AppendAsLeader(_batch(), 0)), flush=True,
                     high_watermark=2))
    host.trace.clear()
    snap = SnapshotId(1, 0)
    ex.execute(Ready(number=2, snapshot_ops=(CreateSnapshot(snap, _batch()),), next_wakeup_ms=9))
    assert host.trace == ["lock", "unlock", "snapshot stored 1", "timer 9"]
    assert log.latest_snapshot_id() == snap


def test_an_unknown_operation_is_refused():
    ex, _, _ = _executor()
    with pytest.raises(TypeError):
        ex.execute(Ready(number=1, log_ops=(object(),)))
