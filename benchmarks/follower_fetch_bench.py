"""Follower fetching (KIP-392): what the leader serves to consumers in other racks, and the end-to-end latency they
see, with ``replica.selector.class`` set (Kafka's rack-aware selector) against unset (every consumer reads from the
leader); on kraftwire and (``--kafka``) on Apache Kafka 4.4 beside it, same machine, same run.

    python benchmarks/follower_fetch_bench.py [--records 600] [--rate 100] [--value-bytes 512] [--kafka] [--json F]

Each system is one controller and three brokers, 2, 3 and 4, in racks ``a``, ``b`` and ``c``. Per mode a new topic
of one partition on replicas [2, 3, 4] (its leader: broker 2, rack a); two confluent-kafka consumers with
``client.rack`` ``b`` and ``c`` (assigned, no group) read while an acks=all producer writes ``--records`` records of
``--value-bytes`` at ``--rate`` per second, each stamped with its send time. The selector is a static broker config:
between the modes every broker restarts with it set.

Reported per mode: the bytes each consumer received from the leader and from the followers (librdkafka's own
per-broker ``rxbytes`` statistics, from after a warm-up record to the end: Fetch answers, plus the little Metadata
traffic), and the end-to-end latency (consume time minus send time, one clock) at p50 and p99 over both consumers.
Kafka runs with the suite's light JVM flags (C1 only, serial GC, 512 MB). Figures depend on the machine (2 shared
cores here); they are reported, never asserted. Bounded: every wait has a deadline; about two minutes in all.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(os.environ.get("KRAFTWIRE_ROOT") or Path(__file__).resolve().parents[1])
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

BROKERS = {2: "a", 3: "b", 4: "c"}
LEADER = 2
CONSUMER_RACKS = ("b", "c")
WAIT_S = 60.0


def _selector() -> str:
    from kraftwire.config import RACK_AWARE_SELECTOR

    return f"replica.selector.class={RACK_AWARE_SELECTOR}\n"


def _racks(selector: bool):
    """A broker's properties (RolesCluster's and KafkaCluster's ``node_props``): its rack, the selector if set;
    nothing for the controller."""
    def props(node_id: int, *_socks) -> str:
        if node_id not in BROKERS:
            return ""
        return f"broker.rack={BROKERS[node_id]}\n" + (_selector() if selector else "")
    return props


def _until(predicate, what: str):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what} not reached within {WAIT_S:.0f} s")


class RackConsumer:
    """One consumer in ``rack`` reading partition 0 of ``topic`` on its own thread: its latencies (ms) and its
    librdkafka statistics (the latest, and a count to wait for a fresh one)."""

    def __init__(self, bootstrap: str, topic: str, rack: str) -> None:
        from confluent_kafka import Consumer, TopicPartition

        self.stats: dict = {}
        self.stats_seen = 0
        self.latencies: list[float] = []
        self.records = 0
        self.stopping = threading.Event()
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{rack}", "client.rack": rack,
                                  "enable.auto.commit": False, "statistics.interval.ms": 200,
                                  "stats_cb": self._stats})
        self.consumer.assign([TopicPartition(topic, 0, 0)])
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _stats(self, text: str) -> None:
        self.stats = json.loads(text)
        self.stats_seen += 1

    def _run(self) -> None:
        while not self.stopping.is_set():
            msg = self.consumer.poll(0.05)
            if msg is not None and msg.error() is None:
                now = time.time_ns()
                self.records += 1
                sent = int(msg.value()[:20])
                if sent:  # 0: the warm-up record
                    self.latencies.append((now - sent) / 1e6)
        self.consumer.close()

    def rx_bytes(self) -> dict[int, int]:
        """Bytes received per broker node id, from statistics taken after this call began."""
        seen = self.stats_seen
        _until(lambda: self.stats_seen > seen + 1, "fresh consumer statistics")
        return {b["nodeid"]: b["rxbytes"] for b in self.stats["brokers"].values() if b["nodeid"] in BROKERS}


def _measure(bootstrap: str, topic: str, records: int, rate: int, value_bytes: int) -> dict:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=1, replica_assignment=[[LEADER, *(b for b in BROKERS if b != LEADER)]])
                         ])[topic].result(30)

    def in_sync():
        t = admin.list_topics(topic, timeout=10).topics[topic]
        return t.error is None and t.partitions and len(t.partitions[0].isrs) == len(BROKERS) \
            and t.partitions[0].leader == LEADER

    _until(in_sync, f"{topic} led by {LEADER} with every replica in sync")
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    consumers = [RackConsumer(bootstrap, topic, rack) for rack in CONSUMER_RACKS]
    try:
        producer.produce(topic, value=b"0".zfill(20), partition=0)  # warm-up: the consumers find their replica
        producer.flush(30)
        _until(lambda: all(c.records >= 1 for c in consumers), "the warm-up record consumed")
        before = [c.rx_bytes() for c in consumers]
        padding = b"x" * max(0, value_bytes - 20)
        started = time.monotonic()
        for i in range(records):
            delay = started + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            producer.produce(topic, value=str(time.time_ns()).encode().zfill(20) + padding, partition=0)
            producer.poll(0)
        assert producer.flush(30) == 0
        _until(lambda: all(c.records >= records + 1 for c in consumers), "every record consumed")
        after = [c.rx_bytes() for c in consumers]
    finally:
        for c in consumers:
            c.stopping.set()
        for c in consumers:
            c.thread.join(10)
    served = {node: sum(a[node] - b.get(node, 0) for a, b in zip(after, before)) for node in BROKERS}
    latencies = sorted(x for c in consumers for x in c.latencies)
    return {"leader_bytes": served[LEADER], "follower_bytes": sum(v for n, v in served.items() if n != LEADER),
            "payload_bytes": records * value_bytes * len(consumers),
            "p50_ms": round(statistics.median(latencies), 1),
            "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 1)}


def _kraftwire(base: str, args) -> dict:
    from harness import roles

    out = {}
    cluster = roles.RolesCluster(base, controllers=1, brokers=3, kraft=True, node_props=_racks(False))
    try:
        for node in cluster.nodes.values():
            node.start()
        bootstrap = ",".join(f"127.0.0.1:{n.port_of('BROKER')}" for n in cluster.brokers)
        any_port = cluster.brokers[0].port_of("BROKER")
        for selector in (False, True):
            if selector:  # a static config: every broker restarts with it
                for node in cluster.brokers:
                    node.terminate()
                    with open(node.config, "a", encoding="utf-8") as f:
                        f.write(_selector())
                    node.start()
            _until(lambda: roles.broker_ids(any_port) == sorted(BROKERS), "three brokers online")
            out[_mode(selector)] = _measure(bootstrap, f"ff-{int(selector)}", args.records, args.rate,
                                            args.value_bytes)
    finally:
        cluster.close()
    return out


def _kafka(base: str, args) -> dict:
    from harness import roles
    from harness.kafka import KafkaCluster

    out = {}
    with KafkaCluster(base, brokers=3, node_props=_racks(False)) as cluster:
        bootstrap = ",".join(f"127.0.0.1:{p}" for p in cluster.ports.values())
        for selector in (False, True):
            if selector:
                cluster.restart_brokers(_racks(True))
            _until(lambda: roles.broker_ids(cluster.ports[LEADER]) == sorted(BROKERS), "three brokers online")
            out[_mode(selector)] = _measure(bootstrap, f"ff-{int(selector)}", args.records, args.rate,
                                            args.value_bytes)
    return out


def _mode(selector: bool) -> str:
    return "rack-aware selector" if selector else "no selector (leader)"


def render(figures: dict) -> str:
    lines = [f"{figures['records']} records of {figures['value_bytes']} B at {figures['rate']}/s, leader in rack a, "
             f"consumers in racks b and c (bytes: both consumers together); {figures['elapsed_s']} s in all",
             "| broker | replica.selector.class | from leader B | from followers B | payload B | p50 ms | p99 ms |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for broker in ("kraftwire", "kafka"):
        for mode, f in figures.get(broker, {}).items():
            lines.append(f"| {broker} | {mode} | {f['leader_bytes']} | {f['follower_bytes']} | {f['payload_bytes']} | "
                         f"{f['p50_ms']} | {f['p99_ms']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=600)
    ap.add_argument("--rate", type=int, default=100, help="records per second (low: latency, not throughput)")
    ap.add_argument("--value-bytes", type=int, default=512)
    ap.add_argument("--kafka", action="store_true", help="also measure Apache Kafka 4.4 beside it")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    figures = {"records": args.records, "rate": args.rate, "value_bytes": args.value_bytes}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as base:
        os.makedirs(Path(base) / "kraftwire")
        figures["kraftwire"] = _kraftwire(str(Path(base) / "kraftwire"), args)
        if args.kafka:
            figures["kafka"] = _kafka(str(Path(base) / "kafka"), args)
    figures["elapsed_s"] = round(time.monotonic() - started)
    print(render(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
