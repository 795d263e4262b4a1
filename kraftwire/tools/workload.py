"""Kafka's TestRaftServer workload (``RaftWorkloadGenerator``), with its flags honoured.

A Raft listener plus an asyncio pacing task. Only while its node leads (after ``handle_leader_change`` names this
node for an epoch) it calls ``schedule_append`` with K zero-filled records of B bytes at the requested rate
(records/s; -1 = as fast as the quorum commits, with a bounded number of uncommitted records in flight). It
remembers (last offset, append time) per append. On ``handle_commit``, batches of its own epoch are checked against
that queue — each committed data batch must end exactly at an expected offset and no expected offset may be skipped
(a mismatch raises ``WorkloadError``) — and the commit latency (append → commit) and committed bytes are recorded.
On resignation its state is cleared; it resumes when its node leads again. Batches a client produced to the
served topic in between are not the workload's and are left out of its figures. At ``throughput`` 0 it appends
nothing: the node only serves its log (the client tests' shape).

Every ``report_interval_s`` it prints one line (records/s, ``bytes.committed.rate``, ``commit.latency``
percentiles); ``summary()`` gives the JSON shape of ``--json``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque

from kraftwire.errors import KraftwireError, NotLeaderError
from kraftwire.server.edge.metrics import Histogram

log = logging.getLogger("kraftwire.workload")

#: in unthrottled mode, stop appending when this many records are uncommitted
MAX_IN_FLIGHT_RECORDS = 50_000


class WorkloadError(KraftwireError):
    """Committed offsets did not match what the workload appended."""


class Workload:
    def __init__(self, node_id: int, *, throughput: int = 20000, record_size: int = 256, records_per_append: int = 1,
                 report_interval_s: float = 5.0, out=None) -> None:
        if record_size < 0:
            raise ValueError("--record-size must be >= 0")
        if records_per_append < 1:
            raise ValueError("--records-per-append must be >= 1")
        if throughput < -1:
            raise ValueError("--throughput must be >= 0 (0: serve the log only, append nothing) or -1 "
                             "(unthrottled)")
        self.node_id = node_id
        self.throughput = throughput
        self.record_size = record_size
        self.k = records_per_append
        self.report_interval_s = report_interval_s
        self.out = out
        self.payload = [bytes(record_size)] * records_per_append
        self.driver = None
        self.epoch: int | None = None
        self.pending: deque[tuple[int, float]] = deque()  # (last offset of an append, append time)
        self.in_flight = 0
        self.histogram = Histogram()
        self.window = Histogram()
        self.total_records = 0
        self.total_bytes = 0
        self.window_records = 0
        self.window_bytes = 0
        self.started = time.monotonic()
        self.window_started = self.started
        self.error: Exception | None = None
        self.first_commit_wall: float | None = None  # wall-clock time of the first commit this node saw as leader
        self.end_wall: float | None = None  # set by mark_end() when the run is over (shutdown is not counted)
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._reporter: asyncio.Task | None = None
        self.lines: list[str] = []
        self.exported: Histogram | None = None  # the node's Prometheus commit latency histogram, when attached

    def attach_metrics(self, registry) -> None:
        self.exported = registry.histogram("commit_latency_ms", "test-server workload: append to commit latency (ms)")

    # ---------------------------------------------------------------------------------------------- Raft listener
    def handle_leader_change(self, leader) -> None:
        if self.throughput == 0:
            return  # serving only: nothing to append, nothing to time
        if leader.is_leader(self.node_id):
            self.epoch = leader.epoch
            self.pending.clear()
            self.in_flight = 0
            log.info("workload: node %d leads epoch %d; appending %s records/s of %d bytes, %d per append",
                     self.node_id, leader.epoch, "max" if self.throughput < 0 else self.throughput, self.record_size,
                     self.k)
            self._wake.set()
        else:
            if self.epoch is not None:
                log.info("workload: node %d no longer leads (epoch %d, leader %d); appends stop", self.node_id,
                         leader.epoch, leader.leader_id)
            self.epoch = None
            self.pending.clear()
            self.in_flight = 0

    def handle_load_snapshot(self, reader) -> None:
        pass

    def handle_commit(self, batches) -> None:
        if self.epoch is None:
            return
        now = time.perf_counter()
        for batch in batches:
            if batch.is_control or batch.epoch != self.epoch:
                continue
            if self.first_commit_wall is None:
                self.first_commit_wall = time.time()
            pending = self.pending
            if not pending or pending[0][0] > batch.last_offset:
                continue  # not one of this workload's appends: a client produced it
            if pending[0][0] < batch.base_offset:
                self._fail(f"committed batch {batch.base_offset}..{batch.last_offset} of epoch {batch.epoch}, "
                           f"expected offset {pending[0][0] if pending else 'none'}")
                return
            while pending and pending[0][0] <= batch.last_offset:
                offset, appended = pending.popleft()
                run = 1  # the appends of one pacing tick share their append time: record them at once
                while pending and pending[0][1] == appended and pending[0][0] <= batch.last_offset:
                    offset = pending.popleft()[0]
                    run += 1
                latency_ms = (now - appended) * 1000
                self.histogram.record_ms(latency_ms, run)
                self.window.record_ms(latency_ms, run)
                if self.exported is not None:
                    self.exported.record_ms(latency_ms, run)
                last = offset
            if last != batch.last_offset:
                self._fail(f"committed batch ends at {batch.last_offset}, the append ended at {last}")
                return
            count = batch.record_count
            size = count * self.record_size  # only this workload appends in its epoch, records of one size
            self.in_flight -= count
            self.total_records += count
            self.total_bytes += size
            self.window_records += count
            self.window_bytes += size
        self._wake.set()

    def _fail(self, why: str) -> None:
        self.error = WorkloadError(why)
        log.error("workload: %s", why)
        self.epoch = None

    # ---------------------------------------------------------------------------------------------- appending
    def start(self, driver) -> None:
        self.driver = driver
        loop = asyncio.get_running_loop()
        self.started = self.window_started = time.monotonic()
        self._task = loop.create_task(self._run())
        self._reporter = loop.create_task(self._report_loop())

    async def stop(self) -> None:
        for task in (self._task, self._reporter):
            if task is not None:
                task.cancel()
        for task in (self._task, self._reporter):
            if task is not None:
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass

    def _append(self, count: int) -> int:
        """Up to ``count`` appends now; returns how many were made."""
        driver = self.driver
        raft = driver.raft
        made = 0
        t = time.perf_counter
        from kraftwire.server.runtime.clocks import wall_ms as now_ms

        now = now_ms()
        appended = 0.0
        try:
            for i in range(count):
                if self.epoch is None or raft.epoch != self.epoch:
                    break
                if not i % 64:  # appends made together share one append time (recorded at once on commit)
                    appended = t()
                offset = raft.schedule_append(self.payload, now)
                self.pending.append((offset, appended))
                self.in_flight += self.k
                made += 1
        except NotLeaderError:
            self.epoch = None
        if made:
            driver.poll()
        return made

    async def _run(self) -> None:
        per_append = self.k
        tick = 0.005
        credit = 0.0
        last = time.perf_counter()
        while True:
            if self.error is not None or self.driver.stopped:
                return
            if self.epoch is None:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), 0.5)
                except asyncio.TimeoutError:
                    pass
                last = time.perf_counter()
                credit = 0.0
                continue
            if self.throughput < 0:
                room = (MAX_IN_FLIGHT_RECORDS - self.in_flight) // per_append
                if room <= 0:
                    self._wake.clear()
                    try:
                        await asyncio.wait_for(self._wake.wait(), 0.5)
                    except asyncio.TimeoutError:
                        pass
                    continue
                self._append(min(room, max(1, 2000 // per_append)))
                await asyncio.sleep(0)
                continue
            now = time.perf_counter()
            credit = min(credit + (now - last) * self.throughput / per_append, self.throughput / per_append)
            last = now
            whole = int(credit)
            if whole:
                credit -= self._append(whole) if self.epoch is not None else whole
            await asyncio.sleep(tick)

    # ---------------------------------------------------------------------------------------------- reporting
    async def _report_loop(self) -> None:
        while True:
            await asyncio.sleep(self.report_interval_s)
            self.report()

    def report(self) -> str:
        now = time.monotonic()
        elapsed = max(now - self.window_started, 1e-9)
        line = format_line(self.window_records / elapsed, self.window_bytes / elapsed, self.window)
        self.window_started = now
        self.window_records = self.window_bytes = 0
        self.window = Histogram()
        self.lines.append(line)
        if self.out is not None:
            print(line, file=self.out, flush=True)
        return line

    def mark_end(self) -> None:
        """The measured run ends now: no more appends; the time spent shutting down is not counted."""
        if self.end_wall is None:
            self.end_wall = time.time()
        self.epoch = None

    def summary(self) -> dict:
        """Rates over the time from this node's first commit as leader (the election is not counted) to the end
        (``mark_end``, else now)."""
        end = self.end_wall if self.end_wall is not None else time.time()
        start = self.first_commit_wall if self.first_commit_wall is not None else end
        elapsed = max(end - start, 1e-9)
        return summary_dict(self.total_records / elapsed, self.total_bytes / elapsed, self.histogram,
                            records=self.total_records, bytes=self.total_bytes, seconds=round(elapsed, 3),
                            first_commit_unix=self.first_commit_wall, end_unix=end)


def _pct(h: Histogram, p: float) -> float:
    return round(h.percentile(p), 3) if h.count else 0.0


def format_line(records_per_sec: float, bytes_per_sec: float, h: Histogram) -> str:
    return (f"records/s: {records_per_sec:.1f}, bytes.committed.rate: {bytes_per_sec:.2f} bytes/s, "
            f"commit.latency (ms): p50 {_pct(h, 50):.1f} p75 {_pct(h, 75):.1f} p99 {_pct(h, 99):.1f} "
            f"p99.9 {_pct(h, 99.9):.1f}")


def summary_dict(records_per_sec: float, bytes_per_sec: float, h: Histogram, **extra) -> dict:
    return {
        "records_per_sec": round(records_per_sec, 1),
        "mb_per_sec": round(bytes_per_sec / 1e6, 3),
        "commit_latency_ms": {"p50": _pct(h, 50), "p75": _pct(h, 75), "p99": _pct(h, 99), "p999": _pct(h, 99.9)},
        **extra,
    }
