"""The hot-path halves of the Kafka-named metrics: what the edge records per request, per appended or read partition
and per event-loop turn, kept in plain structures and turned into metric families only at scrape time.

* ``RequestMeters`` — ``kafka.network:type=RequestMetrics``: RequestsPerSec by (request, version), and per request
  type the request's phases, as Kafka splits them, measured on the event loop with ``time.perf_counter_ns``:

  - RequestQueueTimeMs: from the read that brought the frame in to the handler's start (the frames of one read run
    one after another: the later ones wait for the earlier ones);
  - LocalTimeMs: the handler's synchronous run (the answer given, or the request parked);
  - RemoteTimeMs: from the handler's return to the answer being ready (waiting for replicas, a purgatory, the
    controller, a coordinator's write); 0 for an answer given by the handler itself;
  - ResponseSendTimeMs: from the answer being ready to its hand-over to the socket's transport (an answer held
    behind an earlier request's on the same connection waits here, as it would in Kafka's response queue);
  - ThrottleTimeMs: the answer's ``throttle_time_ms``;
  - TotalTimeMs: the sum.

  Percentiles are over the type's last ``RESERVOIR`` requests (Kafka's, over a reservoir of that size biased to the
  last five minutes); ``_count`` and ``_mean`` cover the node's whole life, as Kafka's Count and Mean do. A Produce
  with acks=0 (never answered) is recorded when its handler returns.
* ``TopicMeters`` — ``kafka.server:type=BrokerTopicMetrics``, per topic (the all-topics series is their sum):
  TotalProduceRequests for each partition of a client Produce that reaches the append (v3+, authorized, known),
  BytesIn/MessagesIn for what the leader appended of it (the request's record bytes, its offsets),
  FailedProduceRequests for its refusals that Kafka counts; TotalFetchRequests/BytesOut/FailedFetchRequests for the
  partitions of client (consumer) fetches — replica fetches are replication traffic, which Kafka meters apart.
* ``ShareMeters`` — ``kafka.server:type=ShareGroupMetrics`` (KIP-932, KIP-1191), on every broker as Kafka's
  ``SharePartitionManager`` keeps them: RecordAcknowledgementsPerSec by acknowledgement type (the offsets of the
  acknowledgements that took effect — durable, where they needed a write); PartitionLoadTimeMs (a share-partition's
  load from the share coordinator, failed or not); per group, RequestTopicPartitionsFetchRatio (of a completing
  ShareFetch, the share-partitions that could acquire over those asked, in percent) and TopicPartitionsAcquireTimeMs
  (the time from a ShareFetch's start, or its last such mark, to each try that finds a share-partition able to
  acquire, and to its completion at MaxWaitMs — where Kafka's ``DelayedShareFetch`` marks it: each try that takes a
  partition's fetch lock, and its expiry); and the dead-letter queue's DeadLetterQueueRecordCount (records written),
  TotalProduceRequestsPerSec (Produce requests sent, retries included) and FailedProduceRequestsPerSec (writes given
  up).
* ``LoopIdle`` — RequestHandlerAvgIdlePercent's equivalent: the share of wall time the event loop spent waiting in
  its selector (nothing to run), over roughly the last minute. Kafka's is the handler threads' idle share; kraftwire
  handles every request on its one event loop, so the loop's idle share is the same question (how much headroom is
  left). Measured by timing the selector's ``select`` calls of asyncio's selector event loop; a loop without a
  selector (uvloop) reports nothing.
"""

from __future__ import annotations

import math
import time
from collections import deque


#: the requests of one type whose times make its percentiles (Kafka's reservoir size)
RESERVOIR = 1028
#: the one-minute average of the loop's idle share
IDLE_WINDOW_S = 60.0
#: the request phases, in the order ``RequestMeters.record`` takes them, with their Kafka metric names
PHASES = ("RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ResponseSendTimeMs", "ThrottleTimeMs", "TotalTimeMs")
#: Kafka's percentile attributes, as the quantile label the rules file gives them
QUANTILES = (("0.50", 50.0), ("0.75", 75.0), ("0.95", 95.0), ("0.98", 98.0), ("0.99", 99.0), ("0.999", 99.9))


class RequestTimes:
    """The times of one kind of request, ``phases`` per request (microseconds): the last ``RESERVOIR`` requests'
    in a ring (their percentiles, sorted at scrape time), and the lifetime count and sums (the mean).

    A ring rather than a histogram per phase: recording is one slice assignment and the additions of the sums
    (``benchmarks/metrics_bench.py`` measured it at about a quarter of six ``Histogram.record_ms`` calls), and the
    sorting happens when scraped. Kafka's percentiles come from a reservoir of the same size (1,028 samples, biased
    to the last five minutes); these are exactly the last 1,028 requests of the type."""

    __slots__ = ("phases", "ring", "next", "filled", "count", "sums_us")

    def __init__(self, phases: int = len(PHASES)) -> None:
        self.phases = phases
        self.ring = [0] * (RESERVOIR * phases)
        self.next = 0  # where the next request's times go (an index into ring)
        self.filled = 0  # requests in the ring
        self.count = 0
        self.sums_us = [0] * phases

    def add(self, phases_us: tuple) -> None:
        at = self.next
        n = self.phases
        self.ring[at:at + n] = phases_us
        self.next = at + n if at + n < len(self.ring) else 0
        if self.filled < RESERVOIR:
            self.filled += 1
        self.count += 1
        sums = self.sums_us
        for i in range(n):
            sums[i] += phases_us[i]

    def percentiles_ms(self, phase: int, ps) -> list[float]:
        """The ``ps`` percentiles (0..100) of the phase over the requests in the ring, in milliseconds (nearest
        rank; 0.0 when there are none)."""
        n = self.filled
        if not n:
            return [0.0] * len(ps)
        values = sorted(self.ring[phase:n * self.phases:self.phases])
        return [values[max(0, math.ceil(n * p / 100.0) - 1)] / 1000.0 for p in ps]

    def mean_ms(self, phase: int) -> float:
        return self.sums_us[phase] / self.count / 1000.0 if self.count else 0.0


class RequestMeters:
    """Request counts by (api key, version) and request phases by api key."""

    def __init__(self) -> None:
        self.counts: dict[tuple[int, int], int] = {}
        self.times: dict[int, RequestTimes] = {}

    def count(self, api_key: int, version: int) -> None:
        key = (api_key, version)
        counts = self.counts
        counts[key] = counts.get(key, 0) + 1

    def record(self, api_key: int, arrived_ns: int, started_ns: int, handled_ns: int, answered_ns: int,
               sent_ns: int, throttle_ms: int) -> None:
        """One answered request's timestamps (``perf_counter_ns``) and throttle time."""
        times = self.times.get(api_key)
        if times is None:
            times = self.times[api_key] = RequestTimes()
        times.add(((started_ns - arrived_ns) // 1000, (handled_ns - started_ns) // 1000,
                   (answered_ns - handled_ns) // 1000, (sent_ns - answered_ns) // 1000, throttle_ms * 1000,
                   (sent_ns - arrived_ns) // 1000 + throttle_ms * 1000))


class ControllerEvents:
    """Kafka's ``ControllerEventManager`` EventQueueTimeMs and EventQueueProcessingTimeMs, for the requests the
    active controller decides: the queue time runs from the request's arrival on this node to the decision's start
    (kraftwire has no event queue: a request waits behind the event loop's other work), the processing time is the
    decision and the append of its records."""

    NAMES = ("EventQueueTimeMs", "EventQueueProcessingTimeMs")

    def __init__(self) -> None:
        self.times = RequestTimes(len(self.NAMES))

    def record(self, queued_ns: int, started_ns: int, done_ns: int) -> None:
        self.times.add(((started_ns - queued_ns) // 1000, (done_ns - started_ns) // 1000))


class TopicMeters:
    """BrokerTopicMetrics' counters per topic: [bytes in, messages in, produce requests, failed produce requests,
    bytes out, fetch requests, failed fetch requests] (indexes below)."""

    BYTES_IN, MESSAGES_IN, PRODUCES, FAILED_PRODUCES, BYTES_OUT, FETCHES, FAILED_FETCHES = range(7)
    #: (index, Kafka's metric name)
    NAMES = ((BYTES_IN, "BytesInPerSec"), (MESSAGES_IN, "MessagesInPerSec"),
             (PRODUCES, "TotalProduceRequestsPerSec"), (FAILED_PRODUCES, "FailedProduceRequestsPerSec"),
             (BYTES_OUT, "BytesOutPerSec"), (FETCHES, "TotalFetchRequestsPerSec"),
             (FAILED_FETCHES, "FailedFetchRequestsPerSec"))

    def __init__(self) -> None:
        self.topics: dict[str, list[int]] = {}

    def of(self, topic: str) -> list[int]:
        """The topic's counters, to add to in place."""
        counters = self.topics.get(topic)
        if counters is None:
            counters = self.topics[topic] = [0] * 7
        return counters

    def produced(self, topic: str, nbytes: int, messages: int, failed: bool) -> None:
        """One partition of a Produce: ``nbytes`` and ``messages`` appended (0 when refused), ``failed`` when its
        refusal counts as a failed produce (``replica.health.NOT_FAILED_PRODUCE``)."""
        c = self.topics.get(topic) or self.of(topic)
        c[0] += nbytes
        c[1] += messages
        c[2] += 1
        c[3] += failed

    def fetched(self, topic: str, nbytes: int, failed: bool) -> None:
        """One partition of a client's Fetch: ``nbytes`` of records read, ``failed`` as
        ``replica.health.NOT_FAILED_FETCH`` says."""
        c = self.topics.get(topic) or self.of(topic)
        c[4] += nbytes
        c[5] += 1
        c[6] += failed

    def forget(self, live) -> None:
        """Drop the counters of topics not in ``live`` (deleted topics), as Kafka removes their metrics."""
        for topic in [t for t in self.topics if t not in live]:
            del self.topics[topic]


class ShareMeters:
    """ShareGroupMetrics; see the module's docstring. The histograms keep the last ``RESERVOIR`` values, as the
    request times do (``RequestTimes`` holds thousandths: a ratio in percent is kept ×1000 so that it reads back as
    itself)."""

    #: Kafka's AcknowledgeType ids and the ackType tag it gives their meters
    ACK_TYPES = ((1, "Accept"), (2, "Release"), (3, "Reject"), (4, "Renew"))
    #: the per-group meters, in the order they are served
    DLQ = ("DeadLetterQueueRecordCount", "DeadLetterQueueTotalProduceRequestsPerSec",
           "DeadLetterQueueFailedProduceRequestsPerSec")
    RECORDS, PRODUCES, FAILED = range(3)
    #: the per-group histograms
    HISTOGRAMS = ("RequestTopicPartitionsFetchRatio", "TopicPartitionsAcquireTimeMs")

    def __init__(self) -> None:
        self.acks = {ack_type: 0 for ack_type, _ in self.ACK_TYPES}
        self.load_times = RequestTimes(1)
        #: group -> [fetch ratios, acquire times]
        self.histograms: dict[str, list[RequestTimes]] = {}
        #: (group, RECORDS | PRODUCES | FAILED) -> count, each made when first added to (Kafka creates each
        #: per-group meter on its first mark)
        self.dlq: dict[tuple[str, int], int] = {}

    def acknowledged(self, batches) -> None:
        """Acknowledgement batches that took effect: a batch of one type counts its whole range, as Kafka's; one
        with a type per offset counts each offset (gaps, type 0, are no acknowledgement)."""
        acks = self.acks
        for b in batches:
            types = b.acknowledge_types
            if len(types) == 1:
                if types[0] in acks:
                    acks[types[0]] += b.last_offset - b.first_offset + 1
                continue
            for t in types:
                if t in acks:
                    acks[t] += 1

    def loaded(self, elapsed_ms: int) -> None:
        self.load_times.add((elapsed_ms * 1000,))

    def _group(self, group: str) -> list[RequestTimes]:
        times = self.histograms.get(group)
        if times is None:
            times = self.histograms[group] = [RequestTimes(1), RequestTimes(1)]
        return times

    def fetched(self, group: str, acquirable: int, asked: int) -> None:
        """A completing ShareFetch: ``acquirable`` of its ``asked`` share-partitions could acquire (Kafka records
        the percentage truncated, computed in doubles as its ``(int) (acquired / asked * 100.0)``)."""
        self._group(group)[0].add((int(acquirable / asked * 100.0) * 1000 if asked else 0,))

    def acquiring(self, group: str, since: list, now_ms: int) -> None:
        """A ShareFetch of ``group`` found a share-partition that can acquire: the time since it last did (or
        started), ``since[0]``, which moves to ``now_ms`` — Kafka's ``updateAcquireElapsedTimeMetric``."""
        self._group(group)[1].add(((now_ms - since[0]) * 1000,))
        since[0] = now_ms

    def dead_letters(self, group: str, what: int, n: int = 1) -> None:
        """Add ``n`` to the group's ``RECORDS``, ``PRODUCES`` or ``FAILED`` meter."""
        key = (group, what)
        self.dlq[key] = self.dlq.get(key, 0) + n


class LoopIdle:
    """Time the event loop spent waiting in its selector; see the module's docstring. ``install(loop)`` once per
    loop (every node on that loop shares it)."""

    #: samples (monotonic time, idle seconds) kept for the one-minute share
    SAMPLES = 64

    def __init__(self) -> None:
        self.idle_ns = 0
        self.started = time.monotonic()
        self.samples: deque = deque(maxlen=self.SAMPLES)

    @classmethod
    def install(cls, loop) -> "LoopIdle | None":
        """The loop's meter, wrapping its selector's ``select`` the first time; None without a selector."""
        meter = getattr(loop, "_kraftwire_idle", None)
        if meter is not None:
            return meter
        selector = getattr(loop, "_selector", None)
        if selector is None:
            return None
        meter = cls()
        select = selector.select
        clock = time.perf_counter_ns

        def timed_select(timeout=None):
            t0 = clock()
            try:
                return select(timeout)
            finally:
                meter.idle_ns += clock() - t0

        selector.select = timed_select
        loop._kraftwire_idle = meter
        return meter

    def idle_share(self, now: float | None = None) -> float:
        """The idle share since the newest sample at least a minute old (else since the meter started); a call at
        least a second after the last sample adds one."""
        now = time.monotonic() if now is None else now
        idle = self.idle_ns / 1e9
        base_t, base_idle = self.started, 0.0
        for t, i in self.samples:
            if now - t >= IDLE_WINDOW_S:
                base_t, base_idle = t, i
            else:
                break
        if not self.samples or now - self.samples[-1][0] >= 1.0:
            self.samples.append((now, idle))
        elapsed = now - base_t
        return min(1.0, max(0.0, (idle - base_idle) / elapsed)) if elapsed > 0 else 1.0
