"""Hot-path cost of recording a metric, kraftwire's own structures against the libraries that could replace them.

    python benchmarks/metrics_bench.py [--n 200000] [--rounds 5]

Rows (best of ``--rounds``, nanoseconds per call, one thread, the event loop's situation):
* ``Histogram.record_ms`` (kraftwire.server.edge.metrics) against ``hdrh.histogram.HdrHistogram.record_value`` with the
  same microsecond conversion, 3 significant figures, 1 us .. 1 h;
* ``Registry.inc`` with one label against a ``prometheus_client.Counter`` child (``labels(...).inc()``);
* the Kafka-named request metrics (``kraftwire.server.edge.kafka_meters``): ``RequestMeters.count`` and ``record``
  (six phase histograms) per request, and a whole request through a real ``InboundConnection`` and ``Dispatcher``
  (a Heartbeat its handler answers at once) with the metrics off and on — the difference is what timing a request
  costs on the event loop;
* the CPU time of one scrape (``Registry.render``) of a broker-and-controller node's Kafka-named metrics: 30 request
  types, 100 topics, 1,000 hosted partitions and an image of 1,000 partitions (``--scrape-rounds`` scrapes,
  microseconds per scrape, ``time.process_time``).

The commit latency histogram is recorded once per committed append run and the request counter once per request, so
these calls sit on the node's hot path. Figures depend on the machine; they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import random
import sys
import time


def _best(fn, rounds: int, n: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scrape-rounds", type=int, default=20)
    args = parser.parse_args()
    n, rounds = args.n, args.rounds
    rng = random.Random(1)
    values = [rng.expovariate(1 / 5.0) for _ in range(n)]  # commit latencies in ms, mean 5 ms

    from kraftwire.server.edge.metrics import Histogram, Registry

    rows = []

    def ours():
        h = Histogram()
        record = h.record_ms
        for v in values:
            record(v, 1)

    rows.append(("Histogram.record_ms (kraftwire)", _best(ours, rounds, n)))

    try:
        from hdrh.histogram import HdrHistogram
    except ImportError:
        print("hdrhistogram is not installed: its row is skipped", file=sys.stderr)
    else:
        def hdr():
            h = HdrHistogram(1, 3_600_000_000, 3)
            record = h.record_value
            for v in values:
                record(int(v * 1000.0) if v > 0 else 0, 1)

        rows.append(("HdrHistogram.record_value (hdrhistogram)", _best(hdr, rounds, n)))

    apis = [rng.choice(("Fetch", "Produce", "Metadata", "Vote")) for _ in range(n)]

    def ours_inc():
        r = Registry()
        for api in apis:
            r.inc("requests_total", api=api)

    rows.append(("Registry.inc (kraftwire)", _best(ours_inc, rounds, n)))

    try:
        from prometheus_client import CollectorRegistry, Counter
    except ImportError:
        print("prometheus-client is not installed: its row is skipped", file=sys.stderr)
    else:
        def prom_inc():
            c = Counter("requests", "requests", ["api"], registry=CollectorRegistry())
            for api in apis:
                c.labels(api=api).inc()

        rows.append(("Counter.labels().inc (prometheus-client)", _best(prom_inc, rounds, n)))

    rows += _kafka_request_rows(rng, n, rounds)
    rows.append(("one scrape of a node's Kafka-named metrics (CPU, per scrape)",
                 _scrape_cpu_ns(args.scrape_rounds)))

    print("| call | ns per call |")
    print("| --- | ---: |")
    for name, ns in rows:
        print(f"| {name} | {ns:.0f} |")
    return 0


def _kafka_request_rows(rng, n: int, rounds: int) -> list:
    import asyncio

    from kraftwire.protocol import messages as w
    from kraftwire.protocol.framing import encode_request
    from kraftwire.server.edge.connection import InboundConnection
    from kraftwire.server.edge.dispatcher import Dispatcher
    from kraftwire.server.edge.kafka_meters import RequestMeters
    from kraftwire.server.edge.metrics import Registry

    keys = [rng.choice((0, 1, 3, 12)) for _ in range(n)]
    stamps = [(1000, 1000 + rng.randrange(50_000), 60_000 + rng.randrange(500_000)) for _ in range(n)]

    def count_and_record():
        meters = RequestMeters()
        count, record = meters.count, meters.record
        for key, (started, handled, answered) in zip(keys, stamps):
            count(key, 9)
            record(key, 0, started, handled, answered, answered + 20_000, 0)

    rows = [("RequestMeters.count + record, six phases (kraftwire)", _best(count_and_record, rounds, n))]

    class Sink(asyncio.Transport):
        def write(self, data):
            pass

        def get_extra_info(self, name, default=None):
            return ("127.0.0.1", 1) if name == "peername" else default

        def get_write_buffer_size(self):
            return 0

    frame = b"".join(bytes(c) for c in encode_request(
        w.HeartbeatRequest(group_id="g", generation_id=1, member_id="m"), 4, 7))
    per_request = max(1, n // 10)

    def through(metrics):
        async def run():
            d = Dispatcher(metrics)
            d.serve("Heartbeat", lambda req, conn: conn.send_response(
                w.HeartbeatResponse(error_code=0, throttle_time_ms=0), req.version, req.header.correlation_id))
            conn = InboundConnection(d, 1 << 20)
            conn.connection_made(Sink())
            for _ in range(per_request):
                conn.data_received(frame)
            conn._idle.cancel()
        return lambda: asyncio.run(run())

    off = _best(through(None), rounds, per_request)
    on = _best(through(Registry()), rounds, per_request)
    rows += [("a Heartbeat through connection + dispatcher, metrics off", off),
             ("the same, metrics on (request counted and its phases timed)", on)]
    return rows


def _scrape_cpu_ns(scrapes: int) -> float:
    """CPU nanoseconds of one ``render()`` of a stand-in broker-and-controller node (see the module's docstring)."""
    import time as _time
    from types import SimpleNamespace

    from kraftwire.ids import UUID
    from kraftwire.metadata.image import MetadataDelta, MetadataImage, PartitionRegistration
    from kraftwire.protocol import messages as m
    from kraftwire.replica.partition import ReplicaState
    from kraftwire.server.edge.kafka_meters import ControllerEvents, RequestMeters, TopicMeters
    from kraftwire.server.edge.metrics import Registry
    from kraftwire.server.node import kafka_metrics

    delta = MetadataDelta(MetadataImage())
    for b in (1, 2, 3):
        delta.replay(m.RegisterBrokerRecord(broker_id=b, is_migrating_zk_broker=False, incarnation_id=UUID(int=b),
                                            broker_epoch=b, end_points=[], features=[], rack=None, fenced=False,
                                            in_controlled_shutdown=False, log_dirs=[]))
    partitions = {}
    topics = TopicMeters()
    for t in range(100):
        tid = UUID(int=1000 + t)
        delta.replay(m.TopicRecord(name=f"topic-{t}", topic_id=tid))
        topics.produced(f"topic-{t}", 1000, 10, False)
        topics.fetched(f"topic-{t}", 1000, False)
        for p in range(10):
            replicas = [1 + (p + i) % 3 for i in range(3)]
            delta.replay(m.PartitionRecord(partition_id=p, topic_id=tid, replicas=replicas, isr=replicas,
                                           removing_replicas=[], adding_replicas=[], leader=replicas[0],
                                           leader_recovery_state=0, leader_epoch=0, partition_epoch=0,
                                           directories=[]))
            state = ReplicaState(1, f"topic-{t}", p)
            state.apply(PartitionRegistration(replicas=tuple(replicas), directories=(), isr=tuple(replicas),
                                              removing_replicas=(), adding_replicas=(), leader=replicas[0],
                                              leader_recovery_state=0, leader_epoch=0, partition_epoch=0), 0)
            partitions[(f"topic-{t}", p)] = SimpleNamespace(state=state, min_isr=2, failed=False)
    image = delta.apply(10_000)
    requests = RequestMeters()
    for key in range(30):
        for i in range(200):
            requests.count(key, 1 + i % 3)
            requests.record(key, 0, 1000, 2000 + i * 10, 3000 + i * 100, 3500 + i * 100, 0)
    events = ControllerEvents()
    for i in range(200):
        events.record(0, 1000, 5000 + i * 50)
    node = SimpleNamespace(
        dispatcher=SimpleNamespace(requests=requests), loop_idle=None,
        raft=SimpleNamespace(quorum=SimpleNamespace(leader_id=1, state=None), epoch=3),
        log=SimpleNamespace(high_watermark=lambda: 10_001, end_offset=lambda: 10_001, last_fetched_epoch=lambda: 3),
        settings=SimpleNamespace(voters=(1, 2, 3)),
        metadata=SimpleNamespace(image=image, applied_timestamp=0, controller=object(), active=True, events=events),
        replicas=SimpleNamespace(partitions=partitions, isr_shrinks=0, isr_expands=0),
        topic_meters=topics, group_apis=None)
    registry = Registry()
    registry.sources.append(lambda: kafka_metrics.families(node))
    registry.render()  # warm
    t0 = _time.process_time()
    for _ in range(scrapes):
        registry.render()
    return (_time.process_time() - t0) / scrapes * 1e9


if __name__ == "__main__":
    sys.exit(main())
