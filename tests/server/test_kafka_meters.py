"""The hot-path halves of the Kafka-named metrics (``server.edge.kafka_meters``): request phases recorded through a
real connection and dispatcher, the sliding percentile window, BrokerTopicMetrics' counters, the event loop's idle
share, ShareGroupMetrics, and their rendering under the rules file's names (``server.node.kafka_metrics``)."""

from __future__ import annotations

import asyncio

from harness.wire import Transport
from harness.wire import request_frame as _frame
from kraftwire.protocol import messages as w
from kraftwire.server.edge.connection import InboundConnection
from kraftwire.server.edge.dispatcher import Dispatcher
from kraftwire.replica.share_partition import AckBatch
from kraftwire.server.edge.kafka_meters import PHASES, RESERVOIR, LoopIdle, RequestTimes, ShareMeters, TopicMeters
from kraftwire.server.edge.metrics import Registry

HEARTBEAT, OFFSET_COMMIT, PRODUCE = 12, 8, 0


def test_phases_of_answered_parked_and_unanswered_requests():
    async def main():
        d = Dispatcher(Registry())
        parked = []
        d.serve("OffsetCommit", lambda req, conn: parked.append((req, conn)))
        d.serve("Heartbeat", lambda req, conn: conn.send_response(w.HeartbeatResponse(error_code=0, throttle_time_ms=7),
                                                                   req.version, req.header.correlation_id))
        d.serve("Produce", lambda req, conn: None)  # acks=0: never answered
        conn = InboundConnection(d, 1 << 20)
        conn.connection_made(Transport())
        commit = w.OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="", topics=[])
        conn.data_received(_frame(commit, 8, 1) + _frame(w.ProduceRequest(acks=0, timeout_ms=1, topic_data=[]), 9, 2)
                           + _frame(w.HeartbeatRequest(group_id="g", generation_id=1, member_id="m"), 4, 3))
        meters = d.requests
        assert meters.counts == {(OFFSET_COMMIT, 8): 1, (PRODUCE, 9): 1, (HEARTBEAT, 4): 1}
        # the heartbeat is answered but held behind the commit: neither is recorded yet; the produce is
        assert set(meters.times) == {PRODUCE}
        await asyncio.sleep(0.01)  # the commit waits "remotely" at least this long
        req, c = parked.pop()
        c.send_response(w.OffsetCommitResponse(throttle_time_ms=0, topics=[]), req.version, req.header.correlation_id)
        assert set(meters.times) == {PRODUCE, OFFSET_COMMIT, HEARTBEAT} and not conn.timing
        remote = PHASES.index("RemoteTimeMs")
        assert meters.times[OFFSET_COMMIT].sums_us[remote] >= 10_000
        assert meters.times[HEARTBEAT].sums_us[remote] == 0  # answered by its handler
        assert meters.times[HEARTBEAT].sums_us[PHASES.index("ThrottleTimeMs")] == 7000
        assert meters.times[HEARTBEAT].sums_us[PHASES.index("ResponseSendTimeMs")] >= 10_000  # held behind the commit
        total = meters.times[OFFSET_COMMIT]
        parts = sum(total.sums_us[PHASES.index(p)] for p in PHASES[:5])
        assert abs(total.sums_us[PHASES.index("TotalTimeMs")] - parts) <= 4  # integer microseconds per phase

    asyncio.run(main())


def test_percentiles_are_over_the_last_reservoir_of_requests():
    times = RequestTimes(2)
    assert times.percentiles_ms(0, [50.0]) == [0.0]
    for us in range(1, 101):  # 1..100 ms
        times.add((us * 1000, 0))
    assert times.percentiles_ms(0, [50.0, 99.0, 100.0]) == [50.0, 99.0, 100.0]
    assert times.mean_ms(0) == 50.5
    for _ in range(RESERVOIR):  # the ring fills with newer requests: the old ones leave it
        times.add((5000, 0))
    assert times.percentiles_ms(0, [0.0, 100.0]) == [5.0, 5.0]
    assert times.count == 100 + RESERVOIR and times.filled == RESERVOIR  # the lifetime count stays


def test_topic_counters_and_forgetting_deleted_topics():
    meters = TopicMeters()
    meters.produced("a", 100, 3, False)
    meters.produced("a", 0, 0, True)
    meters.fetched("a", 50, False)
    meters.fetched("b", 0, True)
    assert meters.topics["a"] == [100, 3, 2, 1, 50, 1, 0]
    assert meters.topics["b"] == [0, 0, 0, 0, 0, 1, 1]
    meters.forget({"a"})
    assert set(meters.topics) == {"a"}


def test_the_loop_idle_share_counts_time_waiting_in_the_selector():
    async def main():
        loop = asyncio.get_running_loop()
        meter = LoopIdle.install(loop)
        assert meter is not None and LoopIdle.install(loop) is meter  # one per loop
        await asyncio.sleep(0.2)
        assert meter.idle_ns >= 100_000_000
        share = meter.idle_share()
        assert 0.0 < share <= 1.0

    asyncio.run(main())


def test_share_meters_count_as_kafkas_share_group_metrics():
    """As Kafka's ``SharePartitionManager.acknowledge`` marks RecordAcknowledgementsPerSec: a batch of one type counts
    its whole range, a batch with a type per offset each offset, gaps (type 0) nothing; the fetch ratio is
    ``(int) (acquirable / asked * 100.0)`` in doubles; the acquire time runs from the last mark."""
    meters = ShareMeters()
    assert meters.acks == {1: 0, 2: 0, 3: 0, 4: 0}  # every type from the start, as Kafka registers them
    meters.acknowledged([AckBatch(10, 19, (1,)), AckBatch(20, 23, (2, 0, 3, 3)), AckBatch(30, 30, (4,)),
                         AckBatch(40, 49, (0,))])
    assert meters.acks == {1: 10, 2: 1, 3: 2, 4: 1}

    meters.fetched("g", 1, 3)
    meters.fetched("g", 29, 100)  # 0.29 * 100.0 is 28.999999999999996 in doubles: Kafka records 28
    meters.fetched("g", 0, 2)
    ratios, times = meters.histograms["g"]
    assert sorted(ratios.percentiles_ms(0, [0.0, 50.0, 100.0])) == [0.0, 28.0, 33.0] and ratios.count == 3
    since = [1000]
    meters.acquiring("g", since, 1040)
    meters.acquiring("g", since, 1045)
    assert since == [1045] and times.percentiles_ms(0, [0.0, 100.0]) == [5.0, 40.0]

    meters.loaded(120)
    assert meters.load_times.count == 1 and meters.load_times.mean_ms(0) == 120.0
    meters.dead_letters("g", meters.PRODUCES)
    meters.dead_letters("g", meters.RECORDS, 3)
    meters.dead_letters("h", meters.FAILED)
    assert meters.dlq == {("g", meters.PRODUCES): 1, ("g", meters.RECORDS): 3, ("h", meters.FAILED): 1}
