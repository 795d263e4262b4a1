"""``ReadyExecutor``: the one implementation of "execute a ``Ready`` in the contract's order".

The asyncio driver, the seeded simulator and the unit-test harness all execute Readys through this class, so the
simulation's invariants (no send before flush, committed data never lost) cover the very ordering code production
runs. What differs between them is behind a small ``ReadyHost``: where the election state goes, how messages leave,
how a flush happens (inline, on a worker thread, after a simulated disk delay), and how the next wake-up is armed.

The order, step by step (``kraftwire.raft.ready`` states the contract):

1. ``persist``: ``host.persist(state)`` before anything else of the Ready.
2. ``log_ops`` on the log, in list order. Truncations run inside ``host.exclusive()`` (the driver's I/O lock keeps a
   flush on its worker thread out of the way) and then re-target held messages (below).
3. ``flush`` when the Ready asks for one, or when it has messages gated on durability that the log does not cover
   yet. ``host.flush()`` either flushes at once and returns the flushed offset, or starts a flush and returns ``None``;
   the host then reports the completed flush to ``flushed(offset)``. Either way it is group commit: a flush makes
   durable whatever the log holds when it runs.
4. ``send``: ``host.send(message)`` for each.
5. ``send_after_flush``: sent now if the log is already durable up to its end, else held with the log end offset
   after this Ready's log ops as the target; ``flushed(offset)`` releases the held groups whose target it covers,
   oldest first. A crash drops them (the host throws the executor away with the node).
6. ``high_watermark``: recorded in the log, then ``host.high_watermark_advanced()``.
7. ``snapshot_ops`` inside ``host.exclusive()``; a snapshot written (created or downloaded) is reported with
   ``host.snapshot_stored(snapshot_id)``.
8. ``host.arm_timer(next_wakeup_ms)``.

``execute`` returns the flushed offset when step 3 flushed inline: the caller feeds ``LogFlushed(offset)`` to the
core once the Ready is done (so the core sees the flush only after this Ready's messages left). A deferred flush is
fed the same way by whoever completes it, after calling ``flushed``.
"""

from __future__ import annotations

from collections import deque
from contextlib import nullcontext
from typing import ContextManager, Protocol

from kraftwire.ids import SnapshotId
from kraftwire.raft.election import ElectionState
from kraftwire.raft.messages import Message
from kraftwire.raft.ready import (
    AppendAsFollower,
    AppendAsLeader,
    CreateSnapshot,
    DeleteBeforeSnapshot,
    InitializeLeaderEpoch,
    Ready,
    StoreSnapshot,
    TruncateTo,
    TruncateToLatestSnapshot,
)


class ReadyHost(Protocol):
    """What an executor needs from its surroundings. ``flush`` returns the flushed offset when it flushed at once,
    ``None`` when it started a flush that completes later (the host then calls ``ReadyExecutor.flushed``)."""

    def persist(self, state: ElectionState) -> None: ...

    def send(self, message: Message) -> None: ...

    def flush(self) -> int | None: ...

    def exclusive(self) -> ContextManager: ...

    def high_watermark_advanced(self) -> None: ...

    def snapshot_stored(self, snapshot_id: SnapshotId) -> None: ...

    def arm_timer(self, wake_ms: int) -> None: ...


class HostBase:
    """Defaults for the hooks most hosts do not need: no lock, nothing to do on a new high watermark or snapshot."""

    def exclusive(self) -> ContextManager:
        return nullcontext()

    def high_watermark_advanced(self) -> None:
        pass

    def snapshot_stored(self, snapshot_id: SnapshotId) -> None:
        pass


class ReadyExecutor:
    """Executes Readys on ``log`` through ``host``; holds the messages that wait for a flush. One per node
    incarnation: a crash discards it together with the messages it holds."""

    __slots__ = ("log", "host", "_held")

    def __init__(self, log, host: ReadyHost) -> None:
        self.log = log
        self.host = host
        self._held: deque[tuple[int, tuple[Message, ...]]] = deque()

    @property
    def holding(self) -> bool:
        """Whether messages wait for a flush."""
        return bool(self._held)

    def execute(self, ready: Ready) -> int | None:
        host = self.host
        log = self.log
        # 1. persist
        if ready.persist is not None:
            host.persist(ready.persist)
        # 2. log ops
        for op in ready.log_ops:
            kind = type(op)
            if kind is AppendAsLeader:
                log.append_as_leader(op.records, op.epoch, op.batches)
            elif kind is AppendAsFollower:
                log.append_as_follower(op.records, op.epoch, op.batches)
            elif kind is InitializeLeaderEpoch:
                log.initialize_leader_epoch(op.epoch)
            elif kind is TruncateTo:
                with host.exclusive():
                    log.truncate_to(op.offset)
                self._retarget_held()
            elif kind is TruncateToLatestSnapshot:
                with host.exclusive():
                    log.truncate_to_latest_snapshot()
                self._retarget_held()
            else:
                raise TypeError(f"unknown log operation {op!r}")
        # 3. flush
        target = log.end_offset()
        flushed = None
        if ready.flush or (ready.send_after_flush and log.flushed_offset() < target):
            flushed = host.flush()
            if flushed is not None:
                self.flushed(flushed)
        # 4. send now
        for msg in ready.send:
            host.send(msg)
        # 5. gated on durability
        if ready.send_after_flush:
            if log.flushed_offset() >= target:
                for msg in ready.send_after_flush:
                    host.send(msg)
            else:
                self._held.append((target, ready.send_after_flush))
        # 6. high watermark
        if ready.high_watermark is not None:
            log.update_high_watermark(ready.high_watermark)
            host.high_watermark_advanced()
        # 7. snapshots
        for op in ready.snapshot_ops:
            self._snapshot_op(op)
        # 8. timer
        host.arm_timer(ready.next_wakeup_ms)
        return flushed

    def flushed(self, offset: int) -> None:
        """A flush completed up to ``offset``: send the held messages it covers, oldest first.

        Targets never decrease along the queue (the log end only grows between truncations, and a truncation lowers
        every target to the new end), so the covered groups are a prefix. Every group had a flush requested when it
        was held (step 3), and that flush covers its target, so nothing more is asked for here."""
        held = self._held
        send = self.host.send
        while held and held[0][0] <= offset:
            for msg in held.popleft()[1]:
                send(msg)

    def _retarget_held(self) -> None:
        """After a truncation, held messages wait for the (shorter) log to be durable, not for data that is gone:
        otherwise one of them could wait until the log grows back, and hold up the ones queued behind it."""
        if self._held:
            end = self.log.end_offset()
            self._held = deque((min(target, end), msgs) for target, msgs in self._held)

    def _snapshot_op(self, op) -> None:
        kind = type(op)
        if kind is CreateSnapshot or kind is StoreSnapshot:
            with self.host.exclusive():
                log = self.log
                writer = (log.create_new_snapshot(op.snapshot_id) if kind is CreateSnapshot
                          else log.store_snapshot(op.snapshot_id))
                if writer is not None:  # None: a snapshot the log already has (or below its start)
                    writer.append(op.data)
                    writer.freeze()
                    writer.close()
            self.host.snapshot_stored(op.snapshot_id)
        elif kind is DeleteBeforeSnapshot:
            with self.host.exclusive():
                self.log.delete_before_snapshot(op.snapshot_id)
        else:
            raise TypeError(f"unknown snapshot operation {op!r}")
