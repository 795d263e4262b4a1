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

  Percentiles come from ``metrics.Histogram``\\ s over a sliding window of one to two ``WINDOW_S`` (Kafka's are from
  a reservoir biased to the last five minutes); ``_count`` and ``_mean`` cover the node's whole life, as Kafka's
  Count and Mean do. A Produce with acks=0 (never answered) is recorded when its handler returns.
* ``TopicMeters`` — ``kafka.server:type=BrokerTopicMetrics``, per topic (the all-topics series is their sum):
  TotalProduceRequests for each partition of a client Produce that reaches the append (v3+, authorized, known),
  BytesIn/MessagesIn for what the leader appended of it (the request's record bytes, its offsets),
  FailedProduceRequests for its refusals that Kafka counts; TotalFetchRequests/BytesOut/FailedFetchRequests for the
  partitions of client (consumer) fetches — replica fetches are replication traffic, which Kafka meters apart.
* ``LoopIdle`` — RequestHandlerAvgIdlePercent's equivalent: the share of wall time the event loop spent waiting in
  its selector (nothing to run), over roughly the last minute. Kafka's is the handler threads' idle share; kraftwire
  handles every request on its one event loop, so the loop's idle share is the same question (how much headroom is
  left). Measured by timing the selector's ``select`` calls of asyncio's selector event loop; a loop without a
  selector (uvloop) reports nothing.
"""

from __future__ import annotations

import time
from collections import deque

from kraftwire.server.edge.metrics import Histogram

#: the sliding window of the request-time percentiles: they cover the current window and the one before it
WINDOW_S = 60.0
#: the request phases, in the order ``RequestMeters.record`` takes them, with their Kafka metric names
PHASES = ("RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ResponseSendTimeMs", "ThrottleTimeMs", "TotalTimeMs")
#: Kafka's percentile attributes, as the quantile label the rules file gives them
QUANTILES = (("0.50", 50.0), ("0.75", 75.0), ("0.95", 95.0), ("0.98", 98.0), ("0.99", 99.0), ("0.999", 99.9))


class RequestTimes:
    """The ``phases`` times of one kind of request: windowed histograms (percentiles) and lifetime count and sums
    (mean)."""

    __slots__ = ("current", "previous", "since", "count", "sums_us")

    def __init__(self, now: float, phases: int = len(PHASES)) -> None:
        self.current = [Histogram() for _ in range(phases)]
        self.previous: list[Histogram] | None = None
        self.since = now
        self.count = 0
        self.sums_us = [0] * phases

    def rotate(self, now: float) -> None:
        """At scrape time: start a new window once the current one is ``WINDOW_S`` old."""
        if now - self.since >= WINDOW_S:
            self.previous = self.current if now - self.since < 2 * WINDOW_S else None
            self.current = [Histogram() for _ in self.current]
            self.since = now

    def add(self, phases_us) -> None:
        self.count += 1
        sums, hists = self.sums_us, self.current
        for i, us in enumerate(phases_us):
            sums[i] += us
            hists[i].record_us(us)

    def window(self, phase: int) -> Histogram:
        """The phase's recordings over the current and the previous window."""
        merged = Histogram()
        merged.merge(self.current[phase])
        if self.previous is not None:
            merged.merge(self.previous[phase])
        return merged


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
            times = self.times[api_key] = RequestTimes(time.monotonic())
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
        self.times = RequestTimes(time.monotonic(), len(self.NAMES))

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
            if now - t >= WINDOW_S:
                base_t, base_idle = t, i
            else:
                break
        if not self.samples or now - self.samples[-1][0] >= 1.0:
            self.samples.append((now, idle))
        elapsed = now - base_t
        return min(1.0, max(0.0, (idle - base_idle) / elapsed)) if elapsed > 0 else 1.0
