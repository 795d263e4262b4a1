"""``kraftwire quickstart``: a local KRaft cluster of real ``server-start`` processes, a replicated topic, and a
produce-and-consume workload through it with a real Kafka client (confluent-kafka, acks=all).

It prints as it goes: the nodes up, the topic (``kraftwire topics --describe``), the producer's records/s and
latency in ``kafka-producer-perf-test.sh``'s lines, the consumer's count, and the consumer group's lag
(``kraftwire consumer-groups --describe``); then it stops the nodes and removes its directory. ``--keep`` leaves the
cluster running and prints the bootstrap servers, commands to try and how to stop it. ``--raft`` runs the Raft
test-server workload instead (``kraftwire.tools.quickstart_raft``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import threading
import time

from kraftwire.tools import quickstart_raft

TOPIC = "quickstart-events"
GROUP = "quickstart-group"
REPORT_INTERVAL_S = 2.0
READY_S = 60.0
TOPIC_S = 60.0
DRAIN_S = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--raft", action="store_true",
                        help="run the Raft test-server workload on a quorum instead (Kafka's TestRaftServer)")
    parser.add_argument("--combined", type=int, metavar="N",
                        help="N combined (broker+controller) nodes (the default shape, 3)")
    parser.add_argument("--controllers", type=int, metavar="M",
                        help="M controller-only nodes (with --brokers; default 3)")
    parser.add_argument("--brokers", type=int, metavar="N", help="N broker-only nodes (with --controllers; default 3)")
    parser.add_argument("--partitions", type=int, default=3, help="partitions of the topic (default 3)")
    parser.add_argument("--duration", type=float,
                        help="seconds to run the workload (default 10; 30 with --raft)")
    parser.add_argument("--throughput", type=int,
                        help="records per second, -1 for unthrottled (default 5000; 20000 with --raft)")
    parser.add_argument("--record-size", type=int, help="bytes per record (default 100; 256 with --raft)")
    parser.add_argument("--json", metavar="PATH", help="write the summary as JSON")
    parser.add_argument("--dir", metavar="DIR", help="put the nodes' configs, logs and data here (kept)")
    parser.add_argument("--keep", action="store_true",
                        help="leave the cluster running and print how to use and stop it (--raft: keep the directory)")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        help="one more property for every node's config (repeatable)")
    parser.add_argument("--nodes", type=int, help="with --raft: number of voters (default 3)")
    parser.add_argument("--records-per-append", type=int, default=1,
                        help="with --raft: records per append (default 1)")


def _fail(message: str) -> int:
    print(f"kraftwire quickstart: {message}", file=sys.stderr)
    return 1


def run(args: argparse.Namespace) -> int:
    bad = next((item for item in args.set if "=" not in item or not item.partition("=")[0].strip()), None)
    if bad is not None:
        return _fail(f"--set takes KEY=VALUE, not {bad!r}")
    if args.raft:
        if args.combined is not None or args.controllers is not None or args.brokers is not None:
            return _fail("--raft runs a quorum of --nodes voters; --combined, --controllers and --brokers shape a "
                         "cluster")
        return quickstart_raft.run(args)
    if args.nodes is not None or args.records_per_append != 1:
        return _fail("--nodes and --records-per-append belong to --raft; shape a cluster with --combined N or "
                     "--controllers M --brokers N")
    if args.combined is not None and (args.controllers is not None or args.brokers is not None):
        return _fail("give --combined N, or --controllers M --brokers N, not both")
    separate = args.controllers is not None or args.brokers is not None
    combined = 0 if separate else (3 if args.combined is None else args.combined)
    controllers = (3 if args.controllers is None else args.controllers) if separate else 0
    brokers = (3 if args.brokers is None else args.brokers) if separate else 0
    if (combined or controllers) < 1 or (separate and brokers < 1):
        return _fail("a cluster needs at least one controller and one broker")
    if args.partitions < 1:
        return _fail("--partitions must be >= 1")
    args.duration = 10.0 if args.duration is None else args.duration
    args.throughput = 5000 if args.throughput is None else args.throughput
    args.record_size = 100 if args.record_size is None else args.record_size
    return _run_cluster(args, combined, controllers, brokers)


def _run_cluster(args, combined: int, controllers: int, brokers: int) -> int:
    from kraftwire.tools.local_cluster import LocalCluster

    base = args.dir or tempfile.mkdtemp(prefix="kraftwire-quickstart-")
    os.makedirs(base, exist_ok=True)
    started = time.monotonic()
    cluster = LocalCluster(base, combined=combined, controllers=controllers, brokers=brokers, extra=args.set)
    keep = False
    codes: list[int] = []
    try:
        cluster.start()
        print(f"kraftwire quickstart: {cluster.describe_shape()}, cluster {cluster.cluster_id}, data in {base}",
              flush=True)
        if not cluster.wait_ready(READY_S):
            for node in cluster.exited() or cluster.nodes:
                print(f"--- node {node.node_id} ({node.log_path}) ---\n{cluster.tail(node)}", file=sys.stderr)
            return _fail(f"the nodes did not all come up within {READY_S:.0f} s; their logs are in {base}")
        roles = ", ".join(f"{n.node_id} ({n.roles})" for n in cluster.nodes)
        print(f"nodes up after {time.monotonic() - started:.1f} s: {roles}; bootstrap servers {cluster.bootstrap}",
              flush=True)
        replication = min(3, len(cluster.brokers))
        error = _create_topic(cluster.bootstrap, args.partitions, replication)
        if error:
            return _fail(error)
        _tool("topics", "--bootstrap-server", cluster.bootstrap, "--describe", "--topic", TOPIC)
        summary = _workload(cluster.bootstrap, args)
        summary.update(nodes=len(cluster.nodes), shape=cluster.describe_shape(), replication_factor=replication,
                       partitions=args.partitions)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(summary, f, indent=2)
                f.write("\n")
        if args.keep:
            keep = True
            _print_keep(cluster, base)
            return 0
        return 0 if summary["consumed"] == summary["produced"] and summary["lag"] == 0 else 1
    finally:
        if not keep:
            codes = cluster.stop()
            print(f"nodes stopped (exit codes {codes}) after {time.monotonic() - started:.1f} s", flush=True)
            if args.dir is None and all(code == 0 for code in codes):
                shutil.rmtree(base, ignore_errors=True)
            elif args.dir is None:
                print(f"kept {base} (a node did not stop cleanly: see its log)", flush=True)


def _create_topic(bootstrap: str, partitions: int, replication: int) -> str | None:
    """Create the topic and wait until every partition has a leader and a full ISR; an error line, or None."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.create_topics([NewTopic(TOPIC, partitions, replication)], operation_timeout=TOPIC_S)[TOPIC]
    try:
        future.result(TOPIC_S)
    except Exception as exc:  # noqa: BLE001 - a KafkaException carrying the broker's error
        return f"cannot create topic {TOPIC}: {exc}"
    deadline = time.monotonic() + TOPIC_S
    while time.monotonic() < deadline:
        if all(_ready_on(server, partitions, replication) for server in bootstrap.split(",")):
            return None
        time.sleep(0.2)
    return f"topic {TOPIC} did not get a leader and {replication} in-sync replicas per partition in {TOPIC_S:.0f} s"


def _ready_on(server: str, partitions: int, replication: int) -> bool:
    """Whether the broker at ``server`` shows the topic with every partition led and its ISR full. Each broker is
    asked: one applies the metadata a moment after another, and the tools that follow may ask any of them."""
    from kraftwire.errors import KraftwireError
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import request_once

    host, _, port = server.rpartition(":")
    try:
        answer = asyncio.run(request_once(host, int(port), w.MetadataRequest(
            topics=[w.MetadataRequest.MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False), 12,
            timeout=10))
    except (OSError, asyncio.TimeoutError, KraftwireError):
        return False
    return any(t.name == TOPIC and t.error_code == 0 and len(t.partitions) == partitions and all(
        p.leader_id >= 0 and len(p.isr_nodes) == replication for p in t.partitions) for t in answer.topics)


def _tool(*argv: str) -> str:
    """Run one ``kraftwire`` tool (``argv[0]``, a module of this package) in this process and print its output as
    ``kraftwire TOOL ...`` would."""
    import importlib

    module = importlib.import_module(f"kraftwire.tools.{argv[0].replace('-', '_')}")
    parser = argparse.ArgumentParser(prog=f"kraftwire {argv[0]}")
    module.add_arguments(parser)
    print(f"$ kraftwire {' '.join(argv)}", flush=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.run(parser.parse_args(list(argv[1:])))
    print(out.getvalue(), end="", flush=True)
    return out.getvalue()


class _Consumer(threading.Thread):
    """A consumer in ``GROUP`` reading the topic from the beginning while the producer writes; it commits what it
    read when told to stop (synchronously) and stays in the group until ``close``."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Consumer

        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False, "client.id": "quickstart-consumer"})
        self.consumer.subscribe([TOPIC])
        self.count = 0
        self.errors: list[str] = []
        self.stopping = threading.Event()
        self.committed = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            msg = self.consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error() is not None:
                if not msg.error().retriable() and msg.error().code() != -191:  # -191: end of a partition
                    self.errors.append(str(msg.error()))
                continue
            self.count += 1
        try:
            self.consumer.commit(asynchronous=False)
        except Exception as exc:  # noqa: BLE001 - nothing to commit, or the group refused it: reported
            self.errors.append(f"commit: {exc}")
        self.committed.set()

    def lag(self) -> int:
        """The group's lag: each partition's high watermark minus the group's committed offset."""
        from confluent_kafka import TopicPartition

        assigned = self.consumer.committed(
            [TopicPartition(TOPIC, p) for p in self._partitions()], timeout=10)
        total = 0
        for tp in assigned:
            _, high = self.consumer.get_watermark_offsets(tp, timeout=10)
            total += high - max(tp.offset, 0)
        return total

    def _partitions(self) -> list[int]:
        return sorted(self.consumer.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions)

    def close(self) -> None:
        self.consumer.close()


def _workload(bootstrap: str, args) -> dict:
    """Produce for ``args.duration`` s at ``args.throughput`` records/s (acks=all, idempotent) while one consumer
    in a group reads; print the producer's figures as kafka-producer-perf-test.sh prints them, the consumer's count
    and the group's lag."""
    from confluent_kafka import Producer

    from kraftwire.tools.producer_perf_test import Stats

    consumer = _Consumer(bootstrap)
    consumer.start()
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 5, "client.id": "quickstart-producer"})
    payload = b"x" * args.record_size
    print(f"producing {args.record_size}-byte records to {TOPIC} for {args.duration:.0f} s (acks=all, "
          f"{'unthrottled' if args.throughput < 0 else f'{args.throughput} records/s'}); consumer group {GROUP} "
          "reads them", flush=True)
    stats = Stats(max(1, int(args.duration * max(args.throughput, 10000))))
    failures: list[str] = []
    produced = [0]

    def delivered(sent_at: float):
        def callback(err, _msg) -> None:
            now = time.monotonic()
            if err is not None:
                failures.append(err.str())
                return
            produced[0] += 1
            stats.record((now - sent_at) * 1000.0, args.record_size, now)
        return callback

    start = time.monotonic()
    sent = 0
    while time.monotonic() - start < args.duration:
        if args.throughput > 0 and sent >= args.throughput * (time.monotonic() - start):
            producer.poll(0.001)
            continue
        try:
            producer.produce(TOPIC, payload, on_delivery=delivered(time.monotonic()))
            sent += 1
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    left = producer.flush(DRAIN_S)
    elapsed = max(time.monotonic() - stats.start, 1e-9)
    stats.print_total()
    deadline = time.monotonic() + DRAIN_S
    while consumer.count < produced[0] and time.monotonic() < deadline and not consumer.errors:
        time.sleep(0.1)
    consumer.stopping.set()
    consumer.committed.wait(DRAIN_S)
    lag = consumer.lag()
    print(f"consumer group {GROUP}: consumed {consumer.count} of {produced[0]} records, committed; lag {lag}",
          flush=True)
    _tool("consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", GROUP)
    consumer.close()
    for line in failures[:5] + consumer.errors[:5]:
        print(f"error: {line}", file=sys.stderr)
    if left:
        print(f"error: {left} records were not acknowledged within {DRAIN_S:.0f} s", file=sys.stderr)
    return {"produced": produced[0], "consumed": consumer.count, "lag": lag, "failed": len(failures) + left,
            "records_per_sec": round(produced[0] / elapsed, 1),
            "mb_per_sec": round(produced[0] * args.record_size / elapsed / 1e6, 3),
            "latency_ms": _percentiles(stats.latencies)}


def _percentiles(latencies: list[float]) -> dict:
    """p50/p95/p99/p99.9 of the acknowledgement latencies (ms), picked as kafka-producer-perf-test.sh picks them."""
    ordered = sorted(latencies) or [0.0]
    return {name: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)
            for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("p999", 0.999))}


def _print_keep(cluster, base: str) -> None:
    pids = " ".join(str(n.proc.pid) for n in cluster.nodes if n.proc is not None)
    b = cluster.bootstrap
    print(f"\nThe cluster keeps running. Bootstrap servers: {b}\nTry:\n"
          f"  kraftwire topics --bootstrap-server {b} --list\n"
          f"  echo hello | kraftwire console-producer --bootstrap-server {b} --topic {TOPIC}\n"
          f"  kraftwire console-consumer --bootstrap-server {b} --topic {TOPIC} --from-beginning --max-messages 5\n"
          f"  kraftwire consumer-groups --bootstrap-server {b} --describe --group {GROUP}\n"
          f"  kraftwire metadata-quorum --bootstrap-server {b} describe --status\n"
          f"Stop it: kill {pids} && rm -rf {base}", flush=True)
