"""The driver executes a Ready in the contract's order: persist before anything, log ops, send, gated messages only
after a flush that covers them completed, LogFlushed back to the core, high watermark; an I/O error stops the node
(fail-stop). Flushes run on the loop thread while the disk is quick and in a worker thread while it is slow; the
ordering tests hold a flush open, so they pin the worker thread (``inline_flush_max_ms=-1``)."""

from __future__ import annotations

import asyncio
import threading

from kraftwire.log.memory import MemoryLog
from kraftwire.raft import messages as m
from kraftwire.raft.election import ElectionState
from kraftwire.raft.events import LogFlushed
from kraftwire.raft.ready import AppendAsFollower, Ready
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.runtime.clocks import wall_ms as now_ms
from kraftwire.server.runtime.driver import Driver


class RecordingLog(MemoryLog):
    def __init__(self, journal, gate: threading.Event) -> None:
        super().__init__()
        self.journal = journal
        self.gate = gate

    def append_as_follower(self, records, epoch, batches=None):
        self.journal.append("append")
        return super().append_as_follower(records, epoch, batches)

    def flush(self):
        self.journal.append("flush-start")
        assert self.gate.wait(10)
        offset = super().flush()
        self.journal.append(f"flush-done {offset}")
        return offset

    def update_high_watermark(self, offset):
        self.journal.append(f"hw {offset}")
        super().update_high_watermark(offset)


class Store:
    def __init__(self, journal, fail=False) -> None:
        self.journal = journal
        self.fail = fail

    def write(self, state) -> None:
        if self.fail:
            raise OSError(5, "Input/output error")
        self.journal.append(f"persist epoch={state.leader_epoch}")


class Quorum:
    leader_id = 2


class StubCore:
    """Returns scripted Readys; records what the driver tells it."""

    local_id = 1
    state_name = "Follower"
    epoch = 1
    quorum = Quorum()

    def __init__(self, readys, journal) -> None:
        self.readys = list(readys)
        self.journal = journal
        self.number = 100

    def _next(self):
        if self.readys:
            return self.readys.pop(0)
        self.number += 1
        return Ready(self.number, next_wakeup_ms=now_ms() + 60_000)

    def handle(self, event, now):
        self.journal.append(f"core {type(event).__name__}" + (f" {event.offset}" if isinstance(event, LogFlushed) else ""))
        return self._next()

    def poll(self, now):
        return self._next()

    def on_flushed(self, offset, now):
        return self.handle(LogFlushed(offset), now)

    def deliver_committed(self):
        self.journal.append("core deliver")


def batch(base: int, count: int, epoch: int = 1) -> bytes:
    builder = RecordBatchBuilder(base_offset=base, partition_leader_epoch=epoch)
    for i in range(count):
        builder.append(None, b"v%d" % i, timestamp=0)
    return builder.build()


def fetch(cid: int) -> m.FetchRequest:
    return m.FetchRequest(1, 2, cid, "c", replica_id=1, replica_epoch=-1, current_leader_epoch=1, fetch_offset=3,
                          last_fetched_epoch=1, max_wait_ms=500, max_bytes=1000)


def test_ready_order_and_flush_gating():
    journal: list[str] = []
    gate = threading.Event()
    log = RecordingLog(journal, gate)
    vote = m.VoteResponse(1, 3, 5, 0, 2, 1, vote_granted=False)
    ready = Ready(1, persist=ElectionState(1, 2), log_ops=(AppendAsFollower(batch(0, 3), 1),), flush=True,
                  send=(vote,), send_after_flush=(fetch(9),), high_watermark=2, next_wakeup_ms=now_ms() + 60_000)
    core = StubCore([ready], journal)

    async def main():
        driver = Driver(core, log, Store(journal), lambda msg: journal.append(f"send {type(msg).__name__}"),
                        on_fatal=lambda what, exc: journal.append(f"FATAL {what}"), inline_flush_max_ms=-1)
        driver.start()
        await asyncio.sleep(0.2)
        assert "send FetchRequest" not in journal  # the flush has not completed
        gate.set()
        for _ in range(100):
            if any(e.startswith("core LogFlushed") for e in journal):
                break
            await asyncio.sleep(0.02)
        await driver.stop()

    asyncio.run(main())
    order = [e for e in journal if not e.startswith("flush-start")]
    assert order[:4] == ["persist epoch=1", "append", "send VoteResponse", "hw 2"], journal
    i_done = next(i for i, e in enumerate(order) if e.startswith("flush-done"))
    i_fetch = order.index("send FetchRequest")
    i_flushed = next(i for i, e in enumerate(order) if e.startswith("core LogFlushed"))
    assert order[i_done] == "flush-done 3"
    assert i_done < i_fetch < i_flushed, journal
    # the new high watermark reaches the listeners right after its Ready, without a step of its own
    assert order.index("hw 2") < order.index("core deliver"), journal
    assert not any(e.startswith("FATAL") for e in journal)


def test_gated_messages_without_a_flush_wait_for_earlier_unflushed_data():
    journal: list[str] = []
    gate = threading.Event()
    log = RecordingLog(journal, gate)
    first = Ready(1, log_ops=(AppendAsFollower(batch(0, 2), 1),), flush=True, next_wakeup_ms=now_ms() + 60_000)
    second = Ready(2, send_after_flush=(fetch(10),), next_wakeup_ms=now_ms() + 60_000)
    core = StubCore([first, second], journal)

    async def main():
        driver = Driver(core, log, Store(journal), lambda msg: journal.append(f"send {type(msg).__name__}"),
                        on_fatal=lambda what, exc: journal.append(f"FATAL {what}"), inline_flush_max_ms=-1)
        driver.start()
        driver.poll()  # the second Ready: its gated Fetch must wait for the flush of the first
        await asyncio.sleep(0.2)
        assert "send FetchRequest" not in journal
        gate.set()
        for _ in range(100):
            if "send FetchRequest" in journal:
                break
            await asyncio.sleep(0.02)
        await driver.stop()

    asyncio.run(main())
    assert journal.index("flush-done 2") < journal.index("send FetchRequest")


def test_io_error_is_fail_stop():
    journal: list[str] = []
    gate = threading.Event()
    gate.set()
    log = RecordingLog(journal, gate)
    ready = Ready(1, persist=ElectionState(3), send=(m.VoteResponse(1, 3, 5, 0, -1, 3, vote_granted=True),),
                  next_wakeup_ms=now_ms() + 60_000)
    core = StubCore([ready], journal)
    fatal = []

    async def main():
        driver = Driver(core, log, Store(journal, fail=True), lambda msg: journal.append("send"),
                        on_fatal=lambda what, exc: fatal.append((what, exc)))
        driver.start()
        await driver.stop()

    asyncio.run(main())
    assert fatal and isinstance(fatal[0][1], OSError)
    assert "send" not in journal  # nothing leaves after a failed persist


def test_a_frozen_snapshot_lets_retention_move_the_log_start():
    """Retention is the log's (``maybe_clean``): the driver runs it once a snapshot is frozen, so old data goes.
    As in Kafka, retention moves the log start from one snapshot to the next: it needs two of them."""
    from kraftwire.ids import SnapshotId
    from kraftwire.raft.ready import AppendAsLeader, CreateSnapshot
    from kraftwire.records.control import snapshot_footer_batch, snapshot_header_batch

    journal: list[str] = []
    log = MemoryLog(retention_bytes=1)  # anything above one byte is over the limit
    for i in range(4):
        log.append_as_leader(batch(0, 5), 1)
    log.flush()
    log.update_high_watermark(log.end_offset())
    snapshot = snapshot_header_batch(0, epoch=1) + batch(1, 3) + snapshot_footer_batch(epoch=1, base_offset=4)
    older = Ready(1, snapshot_ops=(CreateSnapshot(SnapshotId(5, 1), snapshot),), next_wakeup_ms=now_ms() + 60_000)
    ready = Ready(2, snapshot_ops=(CreateSnapshot(SnapshotId(10, 1), snapshot),), next_wakeup_ms=now_ms() + 60_000)
    core = StubCore([older, ready], journal)

    async def main():
        driver = Driver(core, log, Store(journal), lambda msg: None,
                        on_fatal=lambda what, exc: journal.append(f"FATAL {what}: {exc!r}"))
        driver.start()  # executes both snapshot Readys (the second follows the first one's SnapshotStored)
        for _ in range(100):
            if log.start_offset() == 10:
                break
            await asyncio.sleep(0.01)
        await driver.stop()

    assert log.start_offset() == 0
    asyncio.run(main())
    assert not any(e.startswith("FATAL") for e in journal), journal
    assert log.latest_snapshot_id() == SnapshotId(10, 1)
    assert log.start_offset() == 10


class TimedLog(MemoryLog):
    """Records which thread each flush ran on; a flush takes ``delay_s``."""

    def __init__(self) -> None:
        super().__init__()
        self.delay_s = 0.0
        self.threads: list[str] = []

    def flush(self):
        self.threads.append(threading.current_thread().name)
        if self.delay_s:
            threading.Event().wait(self.delay_s)
        return super().flush()


def _run_flushes(log: TimedLog, count: int, **driver_kwargs) -> Driver:
    """Executes ``count`` Readys that each append one batch and ask for a flush, one after another."""
    journal: list[str] = []
    readys = [Ready(i + 1, log_ops=(AppendAsFollower(batch(i, 1), 1),), flush=True,
                    send_after_flush=(fetch(i),), next_wakeup_ms=now_ms() + 60_000) for i in range(count)]
    core = StubCore(readys, journal)
    sent: list[str] = []

    async def main():
        driver = Driver(core, log, Store(journal), lambda msg: sent.append(type(msg).__name__),
                        on_fatal=lambda what, exc: journal.append(f"FATAL {what}"), **driver_kwargs)
        driver.start()
        for _ in range(count - 1):
            before = len(sent)
            driver.poll()
            for _ in range(500):
                if len(sent) > before and driver._flush_task is None:
                    break
                await asyncio.sleep(0.002)
        for _ in range(500):
            if len(sent) == count:
                break
            await asyncio.sleep(0.002)
        await driver.stop()
        return driver

    driver = asyncio.run(main())
    assert len(sent) == count, (sent, journal)  # every gated Fetch left, after its flush
    assert not any(e.startswith("FATAL") for e in journal)
    return driver


def test_quick_flushes_run_on_the_loop_thread():
    log = TimedLog()
    driver = _run_flushes(log, 5)
    loop_thread = threading.main_thread().name
    # stop() makes the last flush, in the worker; every flush before it ran on the loop thread
    assert log.threads[:-1] == [loop_thread] * (len(log.threads) - 1), log.threads
    assert driver.flushes_inline == len(log.threads) - 1 >= 1 and driver.flushing_inline


def test_slow_flushes_move_to_the_worker_thread_and_back():
    log = TimedLog()
    log.delay_s = 0.02  # 20 ms a flush: far above the 1 ms inline limit
    driver = _run_flushes(log, 4)
    loop_thread = threading.main_thread().name
    # The average starts at 0, so the first slow flush still ran inline; it pushed the average past the limit.
    assert log.threads[0] == loop_thread
    assert all(name != loop_thread for name in log.threads[1:]), log.threads
    assert driver.flush_ms_average > 1.0 and not driver.flushing_inline

    # The disk is quick again: the moving average decays below the limit and flushes return to the loop thread.
    log.delay_s = 0.0
    average = driver.flush_ms_average
    for _ in range(40):
        driver._flush_locked()
    assert driver.flush_ms_average < 1.0 < average and driver.flushing_inline


def test_flushes_can_be_pinned_to_the_worker_thread():
    log = TimedLog()
    driver = _run_flushes(log, 3, inline_flush_max_ms=-1)
    assert driver.flushes_inline == 0
    assert threading.main_thread().name not in log.threads


def test_an_inline_flush_runs_within_its_ready_before_the_messages_and_the_callbacks():
    """Inline, the Ready's flush happens before its sends; the gated Fetch leaves within the same call, LogFlushed
    reaches the core right after, and the broker callbacks run once, after that (nothing waits for a loop turn)."""
    journal: list[str] = []
    gate = threading.Event()
    gate.set()
    log = RecordingLog(journal, gate)
    vote = m.VoteResponse(1, 3, 5, 0, 2, 1, vote_granted=False)
    ready = Ready(1, log_ops=(AppendAsFollower(batch(0, 3), 1),), flush=True, send=(vote,),
                  send_after_flush=(fetch(9),), high_watermark=2, next_wakeup_ms=now_ms() + 60_000)
    core = StubCore([ready], journal)

    async def main():
        driver = Driver(core, log, Store(journal), lambda msg: journal.append(f"send {type(msg).__name__}"),
                        on_fatal=lambda what, exc: journal.append(f"FATAL {what}"))
        driver.on_ready.append(lambda: journal.append("callbacks"))
        driver._loop = asyncio.get_running_loop()
        driver.poll()  # one synchronous call executes the whole Ready
        snapshot = list(journal)
        await driver.stop()
        return driver, snapshot

    driver, order = asyncio.run(main())
    assert order == ["append", "flush-start", "flush-done 3", "send VoteResponse", "send FetchRequest", "hw 2",
                     "core LogFlushed 3", "callbacks"], order
    assert driver.flushes_inline == 1


def test_a_later_wakeup_keeps_the_armed_timer_and_an_earlier_one_replaces_it():
    journal: list[str] = []
    core = StubCore([], journal)

    async def main():
        driver = Driver(core, MemoryLog(), Store(journal), lambda msg: None,
                        on_fatal=lambda what, exc: journal.append(f"FATAL {what}"))
        driver._loop = asyncio.get_running_loop()
        driver.arm_timer(now_ms() + 1000)
        first = driver._timer
        driver.arm_timer(now_ms() + 5000)  # polling at the earlier time is harmless: kept
        assert driver._timer is first and not first.cancelled()
        driver.arm_timer(now_ms() + 10)  # sooner: must replace it
        assert driver._timer is not first and first.cancelled()
        assert driver._timer.when() < first.when()
        await driver.stop()

    asyncio.run(main())
    assert journal == []


def test_a_kept_timer_that_fires_before_the_latest_wakeup_moves_on_without_a_step():
    """The timer armed for an early wake-up stays armed when a later Ready asks for a later one; when it fires, the
    core is not stepped (nothing is due by its latest answer) and the timer is re-armed for that answer. A timer at
    or after the wake-up the latest Ready asked for polls."""
    journal: list[str] = []
    core = StubCore([], journal)
    polls = []
    core.poll = lambda now: (polls.append(now), core._next())[1]

    async def main():
        loop = asyncio.get_running_loop()
        driver = Driver(core, MemoryLog(), Store(journal), lambda msg: None,
                        on_fatal=lambda what, exc: journal.append(f"FATAL {what}"))
        driver._loop = loop
        driver.arm_timer(now_ms() + 20)
        later = now_ms() + 60_000
        driver.arm_timer(later)  # the latest Ready's answer: the early timer is kept
        early = driver._timer
        await asyncio.sleep(0.2)
        assert early is not driver._timer and driver._timer is not None  # it fired and moved on
        assert polls == []
        assert driver._timer.when() > loop.time() + 50
        driver.arm_timer(now_ms() + 20)  # sooner: replaces it, and polls when due
        await asyncio.sleep(0.2)
        assert len(polls) == 1
        await driver.stop()

    asyncio.run(main())
    assert journal == []
