"""The driver: feeds the pure core and executes every ``Ready`` in the order ``kraftwire.raft.ready`` prescribes.

Everything runs on the event loop thread. The log flush (fsync) runs right there too while the disk is quick — as in
Kafka's single-threaded raft client, a sub-millisecond fsync costs less than handing it to a thread and being woken
again, and that handoff sits twice on every commit's critical path (leader, then follower). An inline flush runs
inside the Ready that asked for it, before its messages leave, and ``LogFlushed`` is fed to the core as soon as that
Ready is done: a follower's next Fetch and the leader's answers to parked fetches do not wait for another turn of
the event loop nor for the broker callbacks. When recent flushes are slow (their moving average passes
``INLINE_FLUSH_MAX_MS``, or the driver's ``inline_flush_max_ms``), flushes move to one worker thread so the node
keeps serving while the disk works, and move back once the disk is quick again. Either way it is group commit:
appends made meanwhile join the next flush.

The Ready itself is executed by ``kraftwire.raft.execute.ReadyExecutor`` — the same code the simulator and the unit
tests run — with this driver as its host: quorum-state is written synchronously (tmp, fsync, rename, fsync dir; rare,
so blocking the loop for it is the honest choice), truncations and snapshot operations take the I/O lock (they wait
for a flush in the worker to finish), messages gated on durability are held by the executor until a completed flush
covers them, and one timer calls ``poll`` at ``next_wakeup_ms``.

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
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.log.quorum_state_store import FileQuorumStateStore, QuorumStateData
from kraftwire.raft import messages as m
from kraftwire.raft.election import ElectionState
from kraftwire.raft.events import LogFlushed, Received, RequestFailed, SnapshotStored
from kraftwire.raft.node import RaftNode
from kraftwire.raft.execute import ReadyExecutor
from kraftwire.raft.ready import Ready
from kraftwire.server.runtime.clocks import wall_ms as now_ms

log = logging.getLogger("kraftwire.driver")
FATAL_EXIT_CODE = 3
#: flushes run on the event loop thread while their moving average stays at or below this many milliseconds
INLINE_FLUSH_MAX_MS = 1.0
#: weight of the newest flush in that moving average
_FLUSH_EWMA_WEIGHT = 0.2


def election_from_store(data: QuorumStateData | None) -> ElectionState | None:
    if data is None:
        return None
    voted = None if data.voted_id == NO_ID else ReplicaKey(data.voted_id, data.voted_directory_id)
    return ElectionState(data.leader_epoch, data.leader_id, voted)


def election_to_store(state: ElectionState, static_voters=None) -> QuorumStateData:
    """The quorum-state to write: data_version 0 with the static voters (kraft.version 0, as Kafka writes it for
    ``controller.quorum.voters``), else data_version 1 with the voted directory id (kraft.version 1)."""
    voted = state.voted_key
    if static_voters is not None:
        return QuorumStateData(leader_epoch=state.epoch, leader_id=state.leader_id,
                               voted_id=voted.id if voted else NO_ID, current_voters=tuple(sorted(static_voters)),
                               data_version=0)
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
                 inline_flush_max_ms: float = INLINE_FLUSH_MAX_MS, static_voters=None) -> None:
        self.raft = raft
        #: controller.quorum.voters (kraft.version 0): quorum-state is written at data_version 0 with them
        self.static_voters = static_voters
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
        self.executor = ReadyExecutor(log_, self)
        self._timer: asyncio.TimerHandle | None = None
        # kept beside the handle: uvloop's call_at answers a due time with a plain Handle, which has no when()
        self._timer_when = 0.0
        #: the wake-up the latest Ready asked for (wall-clock ms); the armed timer may be earlier
        self._wake_ms = 0
        self._stopped = False
        self._deliver_soon = False
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

    def _flushed(self, offset: int) -> bool:
        """Feed a completed flush to the core; whether it took a step (which ran the callbacks)."""
        if self._stopped:
            return True
        try:
            ready = self.raft.on_flushed(offset, now_ms())
        except Exception as exc:
            self._on_fatal("the Raft core failed on LogFlushed", exc)
            return True
        if ready is None:
            return False
        self._execute(ready, LogFlushed(offset))
        return True

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
            # The flush ran inline within this Ready: tell the core now (its Ready, if the flush calls for a step,
            # runs the callbacks).
            if self._flushed(flushed):
                return
        self._callbacks()

    def _callbacks(self) -> None:
        """What waits on the core's progress (the broker's answers and watchers), as after every step."""
        for callback in self.on_ready:
            callback()

    # ------------------------------------------------------------------------------------------------ ReadyHost
    # The executor runs the Ready's steps in order and calls these.
    def persist(self, state: ElectionState) -> None:
        self.store.write(election_to_store(state, self.static_voters))

    def send(self, message: m.Message) -> None:
        self._send(message)

    def flush(self) -> int | None:
        """While the disk is quick and no flush is in flight in the worker: flush right here, before anything of this
        Ready leaves (a follower's next Fetch, the leader's answers to parked fetches wait on it). Otherwise ask the
        flush loop for one (it flushes whatever the log holds when it starts, and goes round again while asked)."""
        if self.flushing_inline and self._flush_task is None and self._loop is not None:
            self.flushes_inline += 1
            self._flush_wanted = False
            return self._flush_locked()
        self._flush_wanted = True
        return None

    def exclusive(self):
        return self._io_lock

    def high_watermark_advanced(self) -> None:
        # The core hands committed batches to its listeners from the log's high watermark, which is only applied by
        # the executor, after the core returned: deliver right after this Ready (no whole step for it) so the commit
        # reaches the listeners now rather than at the next timer or message (up to a linger period later).
        if self._loop is not None and not self._deliver_soon:
            self._deliver_soon = True
            self._loop.call_soon(self._deliver_now)

    def snapshot_stored(self, snapshot_id) -> None:
        assert self._loop is not None
        self._loop.call_soon(self.handle, SnapshotStored(snapshot_id.end_offset, snapshot_id.epoch))
        # A new snapshot is what lets retention move the log start (whole segments below it only).
        with self._io_lock:
            self.log.maybe_clean(now_ms())

    def _execute_unchecked(self, ready: Ready) -> int | None:
        """Returns the flushed offset when this Ready's flush ran inline (the caller feeds ``LogFlushed``)."""
        flushed = self.executor.execute(ready)
        if self._flush_wanted and self._flush_task is None and self._loop is not None:
            self._flush_task = self._loop.create_task(self._flush_loop())
        return flushed

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

    def arm_timer(self, wake_ms: int) -> None:
        """One timer polls the core at ``wake_ms``. A timer already due no later is kept, and most Readys only move
        the wake-up later (a fetch parked again, a deadline pushed back), so this saves cancelling and scheduling a
        timer on every Ready; when such a kept timer fires before the latest wake-up, it is only moved on
        (``_on_timer``)."""
        if self._stopped or self._loop is None:
            return
        self._wake_ms = wake_ms
        when = self._loop.time() + max(0, wake_ms - now_ms()) / 1000.0
        timer = self._timer
        if timer is not None:
            if self._timer_when <= when:
                return
            timer.cancel()
        self._timer = self._loop.call_at(when, self._on_timer)
        self._timer_when = when

    def _deliver_now(self) -> None:
        self._deliver_soon = False
        if self._stopped:
            return
        try:
            self.raft.deliver_committed()
        except Exception as exc:
            self._on_fatal("the Raft core failed delivering commits", exc)
            return
        self._callbacks()

    def _on_timer(self) -> None:
        """Poll the core, unless every Ready since this timer was armed asked for a later wake-up: each Ready's
        ``next_wakeup_ms`` is its complete answer (a leader's parked fetch answered by new data no longer needs
        its high-watermark linger), so a step now would find nothing due. Then the timer just moves on."""
        self._timer = None
        if now_ms() < self._wake_ms:
            self.arm_timer(self._wake_ms)
            return
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
                self.executor.flushed(flushed)
                if not self._flushed(flushed):
                    self._callbacks()  # what waits on the flushed offset, as after a step
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
