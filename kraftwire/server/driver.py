"""The driver: feeds the pure core and executes every ``Ready`` in the order ``kraftwire.raft.ready`` prescribes.

Everything runs on the event loop thread. The log flush (fsync) runs right there too while the disk is quick — as in
Kafka's single-threaded raft client, a sub-millisecond fsync costs less than handing it to a thread and being woken
again, and that handoff sits twice on every commit's critical path (leader, then follower). An inline flush runs
inside the Ready that asked for it, before its messages leave, and ``LogFlushed`` is fed to the core as soon as that
Ready is done: a follower's next Fetch and the leader's answers to parked fetches do not wait for another turn of
the event loop nor for the broker callbacks. When recent flushes are slow (their moving average passes
``INLINE_FLUSH_MAX_MS``, or the driver's ``inline_flush_max_ms``), flushes move to one worker thread so the node
keeps serving while the disk works, and move back once the disk is quick again. Either way it is group commit:
appends made meanwhile join the next flush. The order of the contract is kept like this:

1. ``persist``: quorum-state is written (tmp, fsync, rename, fsync dir) synchronously, before anything else of the
   Ready — nothing later can overtake it. It is rare (elections), so blocking the loop for it is the honest choice.
2. ``log_ops`` run synchronously. The log allows appends while a flush runs in the worker; truncation and snapshot
   operations take the I/O lock, i.e. wait for an in-flight flush to finish first.
3. ``flush``: inline, the log is flushed here; otherwise a flush is requested and the worker flushes whatever the
   log holds when it starts.
4. ``send`` leaves now.
5. ``send_after_flush``: held with the log end offset after this Ready's log ops as their durability target, and
   released only once a completed flush covers that target (then ``LogFlushed`` is fed to the core). A crash drops
   them, as the contract says.
6. ``high_watermark`` is applied to the log; 7. snapshot ops run under the I/O lock; 8. one timer calls ``poll`` at
   ``next_wakeup_ms``.

Fail-stop: any exception from the log, the quorum-state file or the core stops the process at once (exit code 3),
without a clean-shutdown marker, so the next start recovers from disk. Voter fsync cannot be turned off.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.log.quorum_state_store import FileQuorumStateStore, QuorumStateData
from kraftwire.raft import messages as m
from kraftwire.raft.election import ElectionState
from kraftwire.raft.events import LogFlushed, Received, RequestFailed, SnapshotStored
from kraftwire.raft.node import RaftNode
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

log = logging.getLogger("kraftwire.driver")
FATAL_EXIT_CODE = 3
#: flushes run on the event loop thread while their moving average stays at or below this many milliseconds
INLINE_FLUSH_MAX_MS = 1.0
#: weight of the newest flush in that moving average
_FLUSH_EWMA_WEIGHT = 0.2


def now_ms() -> int:
    return int(time.time() * 1000)


def election_from_store(data: QuorumStateData | None) -> ElectionState | None:
    if data is None:
        return None
    voted = None if data.voted_id == NO_ID else ReplicaKey(data.voted_id, data.voted_directory_id)
    return ElectionState(data.leader_epoch, data.leader_id, voted)


def election_to_store(state: ElectionState) -> QuorumStateData:
    voted = state.voted_key
    return QuorumStateData(leader_epoch=state.epoch, leader_id=state.leader_id,
                           voted_id=voted.id if voted else NO_ID,
                           voted_directory_id=voted.directory_id if voted else None)


def fail_stop(what: str, exc: BaseException) -> None:
    """Stop the process now: no clean-shutdown marker, nothing more sent. The next start recovers from disk."""
    log.critical("FATAL %s: %s: %s — stopping the node (fail-stop)", what, type(exc).__name__, exc, exc_info=exc)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(FATAL_EXIT_CODE)


class Driver:
    """``Driver(raft, log, store, send)``: ``send(message)`` hands a core message to the network edge."""

    def __init__(self, raft: RaftNode, log_, store: FileQuorumStateStore, send: Callable[[m.Message], None], *,
                 on_fatal: Callable[[str, BaseException], None] = fail_stop, metrics=None,
                 inline_flush_max_ms: float = INLINE_FLUSH_MAX_MS) -> None:
        self.raft = raft
        self.log = log_
        self.store = store
        self._send = send
        self._on_fatal = on_fatal
        self.metrics = metrics
        self._loop: asyncio.AbstractEventLoop | None = None
        self._io_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kraftwire-fsync")
        self._flush_wanted = False
        self._flush_task: asyncio.Task | None = None
        self._gated: deque[tuple[int, tuple[m.Message, ...]]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._stopped = False
        self._poll_soon = False
        self._last_view = None
        self.flushes = 0
        self.flush_ms_total = 0.0
        self.flushes_inline = 0
        self.flush_ms_average = 0.0
        self.inline_flush_max_ms = inline_flush_max_ms
        self.on_ready: list[Callable[[], None]] = []

    # ------------------------------------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._log_view("start")
        self.poll()

    async def stop(self) -> None:
        """Stop feeding the core; wait for an in-flight flush; flush what is left."""
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
        task = self._flush_task
        if task is not None:
            try:
                await task
            except Exception:  # pragma: no cover - already fail-stopped
                pass
        await asyncio.get_running_loop().run_in_executor(self._executor, self._flush_locked)
        self._executor.shutdown(wait=True)

    @property
    def stopped(self) -> bool:
        return self._stopped

    # ------------------------------------------------------------------------------------------------ inputs
    def handle(self, event) -> None:
        if self._stopped:
            return
        try:
            ready = self.raft.handle(event, now_ms())
        except Exception as exc:
            self._on_fatal(f"the Raft core failed on {type(event).__name__}", exc)
            return
        self._execute(ready, event)

    def poll(self) -> None:
        if self._stopped:
            return
        try:
            ready = self.raft.poll(now_ms())
        except Exception as exc:
            self._on_fatal("the Raft core failed on poll", exc)
            return
        self._execute(ready, None)

    def received(self, message: m.Message) -> None:
        self.handle(Received(message))

    def request_failed(self, destination: int, correlation_id: int) -> None:
        self.handle(RequestFailed(destination, correlation_id))

    def call(self, fn: Callable[[RaftNode, int], object]):
        """Run a client call on the core (``schedule_append``, ``resign``...) and execute its effects."""
        result = fn(self.raft, now_ms())
        self.poll()
        return result

    # ------------------------------------------------------------------------------------------------ executing
    def _execute(self, ready: Ready, cause) -> None:
        try:
            flushed = self._execute_unchecked(ready)
        except Exception as exc:
            self._on_fatal(f"executing Ready #{ready.number}", exc)
            return
        self._log_view(cause)
        if flushed is not None:
            # The flush ran inline within this Ready: tell the core now (its Ready runs the callbacks).
            self.handle(LogFlushed(flushed))
            return
        for callback in self.on_ready:
            callback()

    def _execute_unchecked(self, ready: Ready) -> int | None:
        """Returns the flushed offset when this Ready's flush ran inline (the caller feeds ``LogFlushed``)."""
        # 1. persist
        if ready.persist is not None:
            self.store.write(election_to_store(ready.persist))
        # 2. log ops
        lg = self.log
        for op in ready.log_ops:
            if isinstance(op, AppendAsLeader):
                lg.append_as_leader(op.records, op.epoch)
            elif isinstance(op, AppendAsFollower):
                lg.append_as_follower(op.records, op.epoch)
            elif isinstance(op, InitializeLeaderEpoch):
                lg.initialize_leader_epoch(op.epoch)
            elif isinstance(op, TruncateTo):
                with self._io_lock:
                    lg.truncate_to(op.offset)
                self._clamp_gated()
            elif isinstance(op, TruncateToLatestSnapshot):
                with self._io_lock:
                    lg.truncate_to_latest_snapshot()
                self._clamp_gated()
            else:  # pragma: no cover
                raise TypeError(f"unknown log op {op!r}")
        # 3. flush: while the disk is quick and no flush is in flight in the worker, right here, before anything of
        # this Ready leaves (a follower's next Fetch, the leader's answers to parked fetches wait on it).
        target = lg.end_offset()
        flushed = None
        if ready.flush or (ready.send_after_flush and lg.flushed_offset() < target):
            if self.flushing_inline and self._flush_task is None and self._loop is not None:
                self.flushes_inline += 1
                flushed = self._flush_locked()
                self._flush_wanted = False
                self._release_gated(flushed)
            else:
                self._flush_wanted = True
        # 4. send now
        for msg in ready.send:
            self._send(msg)
        # 5. gated on durability
        if ready.send_after_flush:
            if lg.flushed_offset() >= target:
                for msg in ready.send_after_flush:
                    self._send(msg)
            else:
                self._gated.append((target, ready.send_after_flush))
                self._flush_wanted = True
        # 6. high watermark. The core hands committed batches to its listeners from the log's high watermark, which
        # is only applied here, after the core returned: poll once more right away so the commit is delivered now
        # rather than at the next timer or message (up to a linger period later).
        if ready.high_watermark is not None:
            lg.update_high_watermark(ready.high_watermark)
            if self._loop is not None and not self._poll_soon:
                self._poll_soon = True
                self._loop.call_soon(self._poll_now)
        # 7. snapshots
        for op in ready.snapshot_ops:
            self._snapshot_op(op)
        # 8. timer
        self._arm_timer(ready.next_wakeup_ms)
        if self._flush_wanted and self._flush_task is None and self._loop is not None:
            self._flush_task = self._loop.create_task(self._flush_loop())
        return flushed

    def _release_gated(self, flushed: int) -> None:
        """Send the held messages whose durability target ``flushed`` covers, oldest first."""
        if self._gated:
            ready_now = [msgs for target, msgs in self._gated if target <= flushed]
            self._gated = deque((t, msgs) for t, msgs in self._gated if t > flushed)
            for msgs in ready_now:
                for msg in msgs:
                    self._send(msg)
        if self._gated:
            self._flush_wanted = True

    def _clamp_gated(self) -> None:
        """After a truncation, held messages wait for the (shorter) log to be durable, not for data that is gone:
        otherwise one of them could wait until the log grows back, and hold up the ones queued behind it."""
        end = self.log.end_offset()
        if self._gated:
            self._gated = deque((min(t, end), msgs) for t, msgs in self._gated)
            self._flush_wanted = True

    def _snapshot_op(self, op) -> None:
        with self._io_lock:
            if isinstance(op, (CreateSnapshot, StoreSnapshot)):
                writer = (self.log.create_new_snapshot(op.snapshot_id) if isinstance(op, CreateSnapshot)
                          else self.log.store_snapshot(op.snapshot_id))
                if writer is not None:
                    writer.append(op.data)
                    writer.freeze()
                    writer.close()
                stored = SnapshotStored(op.snapshot_id.end_offset, op.snapshot_id.epoch)
                assert self._loop is not None
                self._loop.call_soon(self.handle, stored)
                # A new snapshot is what lets retention move the log start (whole segments below it only).
                self.log.maybe_clean(now_ms())
            elif isinstance(op, DeleteBeforeSnapshot):
                self.log.delete_before_snapshot(op.snapshot_id)
            else:  # pragma: no cover
                raise TypeError(f"unknown snapshot op {op!r}")

    def maybe_clean(self) -> bool:
        """Apply time-based retention (``metadata.max.retention.ms``) between snapshots; an I/O error is fatal."""
        if self._stopped:
            return False
        try:
            with self._io_lock:
                return self.log.maybe_clean(now_ms())
        except Exception as exc:
            self._on_fatal("applying log retention", exc)
            return False

    def _arm_timer(self, wake_ms: int) -> None:
        """One timer polls the core at ``wake_ms``. A timer already due no later is kept: polling early is harmless
        (that poll arms the next one), and most Readys only move the wake-up later (a fetch parked again, a
        deadline pushed back), so this saves cancelling and scheduling a timer on every Ready."""
        if self._stopped or self._loop is None:
            return
        when = self._loop.time() + max(0, wake_ms - now_ms()) / 1000.0
        timer = self._timer
        if timer is not None:
            if timer.when() <= when:
                return
            timer.cancel()
        self._timer = self._loop.call_at(when, self._on_timer)

    def _poll_now(self) -> None:
        self._poll_soon = False
        self.poll()

    def _on_timer(self) -> None:
        self._timer = None
        self.poll()

    # ------------------------------------------------------------------------------------------------ flushing
    def _flush_locked(self) -> int:
        with self._io_lock:
            started = time.perf_counter()
            flushed = self.log.flush()
            took_ms = (time.perf_counter() - started) * 1000
        # A single writer: only one flush runs at a time (the worker has one thread, or the loop runs it itself).
        self.flush_ms_average += _FLUSH_EWMA_WEIGHT * (took_ms - self.flush_ms_average)
        self.flushes += 1
        self.flush_ms_total += took_ms
        return flushed

    @property
    def flushing_inline(self) -> bool:
        """Whether the next flush runs on the event loop thread (the disk has been quick lately)."""
        return self.flush_ms_average <= self.inline_flush_max_ms

    async def _flush_loop(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._flush_wanted and not self._stopped:
                self._flush_wanted = False
                try:
                    if self.flushing_inline:
                        self.flushes_inline += 1
                        flushed = self._flush_locked()
                    else:
                        flushed = await loop.run_in_executor(self._executor, self._flush_locked)
                except Exception as exc:
                    self._on_fatal("flushing the log", exc)
                    return
                if self._stopped:
                    return
                self._release_gated(flushed)
                self.handle(LogFlushed(flushed))
        finally:
            self._flush_task = None
        if self._flush_wanted and not self._stopped:  # requested while we were finishing
            self._flush_task = loop.create_task(self._flush_loop())

    # ------------------------------------------------------------------------------------------------ operator log
    def _log_view(self, cause) -> None:
        raft = self.raft
        view = (raft.state_name, raft.epoch, raft.quorum.leader_id)
        if view == self._last_view:
            return
        previous, self._last_view = self._last_view, view
        reason = _describe_cause(cause)
        if previous is None:
            log.info("node %d starts as %s in epoch %d (leader %s, log end %d, high watermark %d)",
                     raft.local_id, view[0], view[1], _leader(view[2]), self.log.end_offset(),
                     self.log.high_watermark())
        else:
            log.info("node %d: %s -> %s, epoch %d, leader %s (reason: %s; log end %d, high watermark %d)",
                     raft.local_id, previous[0], view[0], view[1], _leader(view[2]), reason, self.log.end_offset(),
                     self.log.high_watermark())


def _leader(leader_id: int) -> str:
    return "unknown" if leader_id == NO_ID else str(leader_id)


def _describe_cause(cause) -> str:
    if cause is None:
        return "timer (election / fetch timeout, backoff or check-quorum)"
    if cause == "start":
        return "start"
    if isinstance(cause, Received):
        msg = cause.message
        name = type(msg).__name__
        if isinstance(msg, m.VoteResponse):
            name = ("PreVote" if msg.pre_vote else "Vote") + f"Response(granted={msg.vote_granted})"
        elif isinstance(msg, m.VoteRequest):
            name = ("PreVote" if msg.pre_vote else "Vote") + f"Request(epoch {msg.candidate_epoch})"
        return f"{name} from node {msg.src}"
    if isinstance(cause, LogFlushed):
        return f"log flushed to {cause.offset}"
    if isinstance(cause, RequestFailed):
        return f"request to node {cause.destination} failed"
    return type(cause).__name__
