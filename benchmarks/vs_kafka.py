"""kraftwire measured beside Apache Kafka 4.4.0 on this machine (#38): three combined nodes of each
(``tests/harness/clusters.py``), the same server.properties keys, the same clients, never both clusters at once.

    python benchmarks/vs_kafka.py [--quick] [--out DIR] [--only NAME,...] [--budget MINUTES]

Both kinds run with the same durability settings (``DURABILITY``: replication factor 3, ``min.insync.replicas=2``,
Kafka's default flush policy — no fsync per write, durability from replication — stated explicitly) and the same
``controller.quorum.*`` and broker-session timeouts (Kafka's defaults, stated explicitly). Kafka runs with the JVM
flags ``kafka-server-start.sh`` ships; kraftwire as ``kraftwire server-start --config``. Each cluster first takes a
discarded warm-up load (the JVM's JIT; kraftwire gets the same), and the rounds alternate which kind goes first.

Measurements (``--only`` names):

* ``produce``: confluent-kafka, acks=all, 100 B and 1 KiB values into 6-partition RF-3 topics: records/s, and the CPU
  seconds the three nodes spent per million records (``/proc/<pid>/stat``);
* ``perf``: the same with Kafka's own ``org.apache.kafka.tools.ProducerPerformance`` (acks=all, linger.ms=5);
* ``latency``: one 100 B record at a time, acks=all (concurrency 1): p50 and p99;
* ``consume``: a confluent-kafka consumer reading a topic just written (from the page cache): records/s;
* ``e2e``: produce one record (acks=all) and wait until a consumer has it, one at a time: p50 and p99;
* ``failover``: SIGKILL of the active controller until a topic can be created again through a surviving node;
* ``create``: 10,000 partitions at replication factor 3 (topics of 500: Kafka refuses one controller operation of
  more than 10,000 records) through the admin API until every broker hosts them all (DescribeLogDirs);
* ``restart``: a broker (not the active controller) stopped with SIGTERM and started again while it hosts 2,000
  partitions (RF 3, one record each): seconds until it is registered and until it is back in every ISR.

Every wait is bounded; a measurement that cannot finish in its bound reports what it reached and says so. Figures
depend on this 2-core machine; they are reported, never asserted. ``--quick`` is a smoke run (small counts, one
round).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]

from client_bench import cpu_seconds, pct  # noqa: E402
from harness.clusters import HOST, KafkaCluster, KraftwireCluster, metadata  # noqa: E402
from harness.kafka import kafka_libs  # noqa: E402

#: the same durability on both: RF 3, two replicas in sync, and Kafka's default flush policy (no fsync per write)
DURABILITY = ("default.replication.factor=3\nmin.insync.replicas=2\n"
              "log.flush.interval.messages=9223372036854775807\n")
#: the same quorum and broker-session timeouts on both (Kafka's defaults, written out)
TIMEOUTS = ("controller.quorum.election.timeout.ms=1000\ncontroller.quorum.fetch.timeout.ms=2000\n"
            "controller.quorum.election.backoff.max.ms=1000\ncontroller.quorum.request.timeout.ms=2000\n"
            "broker.heartbeat.interval.ms=2000\nbroker.session.timeout.ms=9000\n")
PROPS = DURABILITY + TIMEOUTS
KINDS = {"kafka": KafkaCluster, "kraftwire": KraftwireCluster}
NAMES = ("produce", "perf", "latency", "consume", "e2e", "failover", "create", "restart")
DATA_NAMES = NAMES[:6]
PARTITIONS = 6
RF = 3
PER_TOPIC = 500  # partitions per topic in ``create`` and ``restart``
IDLE_S = 5.0  # the window of the idle CPU reading before ``produce``
#: kafka-producer-perf-test.sh's heap
PERF_JVM = ("-Xmx512M",)


@dataclasses.dataclass(frozen=True)
class Sizes:
    rounds: int
    records_100: int
    records_1k: int
    latency: int
    e2e: int
    create: int
    restart: int
    create_s: float  # bound of the ``create`` measurement
    restart_s: float  # bound of the ``restart`` measurement
    failover_s: float
    load_s: float  # bound of any one produce or consume run


FULL = Sizes(rounds=2, records_100=200_000, records_1k=50_000, latency=2000, e2e=1000, create=10_000, restart=2000,
             create_s=300, restart_s=300, failover_s=60, load_s=240)
QUICK = Sizes(rounds=1, records_100=20_000, records_1k=5_000, latency=200, e2e=100, create=1000, restart=200,
              create_s=120, restart_s=120, failover_s=60, load_s=120)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Incomplete(Exception):
    """A measurement that did not finish within its bound; ``figures`` holds what it reached."""

    def __init__(self, what: str, figures: dict) -> None:
        super().__init__(what)
        self.figures = figures


def ask(port: int, body, version: int, timeout: float = 10.0):
    from kraftwire.server.edge.client import request_once

    return asyncio.run(request_once(HOST, port, body, version, timeout=timeout))


# ---------------------------------------------------------------------------------------------------- clients
def confluent_produce(bootstrap: str, topic: str, value: bytes, n: int, bound_s: float) -> float:
    """Seconds for confluent-kafka (acks=all, linger.ms=5) to have ``n`` records of ``value`` acknowledged; raises on
    any delivery error or when past ``bound_s``."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "batch.size": 1_000_000,
                  "queue.buffering.max.messages": 1_000_000, "message.timeout.ms": int(bound_s * 1000)})
    errors = []

    def delivered(err, _msg) -> None:
        if err is not None:
            errors.append(err)

    start = time.perf_counter()
    deadline = start + bound_s
    for i in range(n):
        while True:
            try:
                p.produce(topic, value, on_delivery=delivered)
                break
            except BufferError:
                p.poll(0.005)
                if time.perf_counter() > deadline:
                    raise Incomplete(f"{i} of {n} records queued within {bound_s} s", {"queued": i})
        if i % 10000 == 0:
            p.poll(0)
    left = p.flush(max(1.0, deadline - time.perf_counter()))
    elapsed = time.perf_counter() - start
    if errors:
        raise AssertionError(f"{len(errors)} records failed, first {errors[0]}")
    if left:
        raise Incomplete(f"{left} of {n} records unacknowledged after {bound_s} s",
                         {"records_per_s": round((n - left) / elapsed)})
    return elapsed


def confluent_latency(bootstrap: str, topic: str, n: int) -> list[float]:
    """Milliseconds from produce to acknowledgement of one 100 B record at a time (acks=all, linger.ms=0)."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    errors = []

    def delivered(err, _msg) -> None:
        if err is not None:
            errors.append(err)

    out = []
    for i in range(n + 1):
        t = time.perf_counter()
        p.produce(topic, b"x" * 100, on_delivery=delivered)
        if p.flush(30):
            raise AssertionError(f"record {i} unacknowledged after 30 s")
        if i:  # the first one also connects
            out.append((time.perf_counter() - t) * 1000)
    if errors:
        raise AssertionError(f"{len(errors)} records failed, first {errors[0]}")
    return out


def producer_performance(bootstrap: str, topic: str, size: int, n: int, bound_s: float) -> dict:
    """Kafka's ``kafka-producer-perf-test.sh`` (acks=all, linger.ms=5, its other settings its defaults): its summary
    line as figures."""
    cmd = ["java", *PERF_JVM, "-cp", os.path.join(kafka_libs(), "*"), "org.apache.kafka.tools.ProducerPerformance",
           "--topic", topic, "--num-records", str(n), "--record-size", str(size), "--throughput", "-1",
           "--producer-props", f"bootstrap.servers={bootstrap}", "acks=all", "linger.ms=5"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=bound_s)
    except subprocess.TimeoutExpired as exc:
        raise Incomplete(f"ProducerPerformance did not finish within {bound_s} s", {}) from exc
    text = proc.stdout + proc.stderr
    summary = re.search(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                        r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th", text)
    if proc.returncode != 0 or summary is None or "Exception" in text:
        raise AssertionError(f"ProducerPerformance exited {proc.returncode}:\n{text[-3000:]}")
    sent, rate, mb, avg, _max, p50, _p95, p99 = summary.groups()
    if int(sent) != n:
        raise AssertionError(f"ProducerPerformance sent {sent} of {n}")
    return {"records_per_s": round(float(rate)), "mb_per_s": float(mb), "avg_ms": float(avg), "p50_ms": int(p50),
            "p99_ms": int(p99)}


def consume(bootstrap: str, topic: str, partitions: int, n: int, bound_s: float) -> float:
    """Seconds for a confluent-kafka consumer (assigned every partition from the beginning, no group) to receive
    ``n`` records."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "vs-kafka", "enable.auto.commit": False})
    try:
        start = time.perf_counter()
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        got = 0
        while got < n:
            if time.perf_counter() - start > bound_s:
                raise Incomplete(f"{got} of {n} records within {bound_s} s", {"records_per_s": round(got / bound_s)})
            for m in c.consume(10000, 1.0):
                if m.error() is not None:
                    raise AssertionError(f"consumer error {m.error()}")
                got += 1
        return time.perf_counter() - start
    finally:
        c.close()


def end_to_end(bootstrap: str, topic: str, n: int) -> list[float]:
    """Milliseconds from producing one record (acks=all, linger.ms=0) until a consumer assigned to its partition
    receives it, one record at a time."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "vs-kafka-e2e", "enable.auto.commit": False})
    try:
        _low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
        c.assign([TopicPartition(topic, 0, high)])
        out = []
        for i in range(n + 1):
            value = f"e2e-{i}".encode()
            t = time.perf_counter()
            p.produce(topic, value, partition=0)
            p.poll(0)
            deadline = t + 30
            while True:
                m = c.poll(1.0)
                if m is not None and m.error() is None and m.value() == value:
                    break
                if time.perf_counter() > deadline:
                    raise AssertionError(f"record {i} not consumed within 30 s")
            if i:  # the first one also fetches the consumer's first batch
                out.append((time.perf_counter() - t) * 1000)
            p.poll(0)
        if p.flush(30):
            raise AssertionError("records unacknowledged after 30 s")
        return out
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------------- cluster views
def active_controller(cluster) -> int | None:
    """The Raft leader of ``__cluster_metadata`` as a running node's controller listener reports it."""
    from kraftwire.protocol import messages as w

    R = w.DescribeQuorumRequest
    body = R(topics=[R.TopicData(topic_name="__cluster_metadata", partitions=[R.PartitionData(partition_index=0)])])
    for i in cluster.running():
        try:
            part = ask(cluster.nodes[i].controller_port, body, 1, timeout=3).topics[0].partitions[0]
        except Exception:  # noqa: BLE001 - starting, stopping or down
            continue
        if part.error_code == 0 and part.leader_id >= 0:
            return part.leader_id
    return None


def hosted(cluster, i: int, prefix: str) -> int:
    """How many partitions of the topics named ``prefix*`` node ``i`` hosts (DescribeLogDirs), -1 while it does not
    answer."""
    from kraftwire.protocol import messages as w

    try:
        r = ask(cluster.nodes[i].port, w.DescribeLogDirsRequest(topics=None), 2, timeout=10)
    except Exception:  # noqa: BLE001 - busy or down
        return -1
    return sum(len(t.partitions) for d in r.results for t in d.topics if t.name.startswith(prefix))


def in_every_isr(cluster, survivor: int, topics: list[str], node: int) -> tuple[int, int]:
    """(partitions of ``topics`` whose ISR holds ``node``, all partitions) as node ``survivor`` reports them."""
    try:
        md = metadata(cluster.nodes[survivor].port, topics, timeout=10)
    except Exception:  # noqa: BLE001 - busy
        return 0, -1
    parts = [p for t in md.topics if t.error_code == 0 for p in t.partitions]
    return sum(node in p.isr_nodes for p in parts), len(parts)


def create_topics(cluster, prefix: str, total: int, bound_s: float) -> list[str]:
    """Topics ``prefix-0..`` of ``PER_TOPIC`` partitions (RF 3) summing to ``total``, one CreateTopics request each,
    all in flight at once; their names once every request is answered."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    names, futures = [], []
    for k, first in enumerate(range(0, total, PER_TOPIC)):
        name = f"{prefix}-{k}"
        names.append(name)
        futures.append(admin.create_topics([NewTopic(name, min(PER_TOPIC, total - first), RF)],
                                           request_timeout=bound_s, operation_timeout=bound_s)[name])
    deadline = time.monotonic() + bound_s
    for f in futures:
        f.result(max(1.0, deadline - time.monotonic()))
    return names


# ---------------------------------------------------------------------------------------------------- measurements
def prepare_produce(cluster, sizes: Sizes) -> dict:
    """The topics, then the nodes' CPU seconds per second while no client works (their background work, a
    reading aid for the CPU per million records, which includes it)."""
    for label in ("100B", "1KiB"):
        cluster.create_topic(f"produce-{label}", PARTITIONS, RF)
    pids = {i: cluster.pid(i) for i in cluster.running()}
    before = {i: cpu_seconds(pid) for i, pid in pids.items()}
    time.sleep(IDLE_S)
    return {i: round((cpu_seconds(pid) - before[i]) / IDLE_S, 3) for i, pid in pids.items()}


def measure_produce(cluster, sizes: Sizes, idle: dict) -> dict:
    out: dict = {"idle_cpu_s_per_s_by_node": idle}
    for label, value, n in (("100B", b"x" * 100, sizes.records_100), ("1KiB", b"x" * 1024, sizes.records_1k)):
        topic = f"produce-{label}"
        pids = {i: cluster.pid(i) for i in cluster.running()}
        before = {i: cpu_seconds(pid) for i, pid in pids.items()}
        elapsed = confluent_produce(cluster.bootstrap, topic, value, n, sizes.load_s)
        cpu = {i: cpu_seconds(pid) - before[i] for i, pid in pids.items()}
        out[label] = {"records": n, "records_per_s": round(n / elapsed), "mb_per_s": round(n * len(value) / elapsed / 1e6, 2),
                      "cpu_s_per_million": round(sum(cpu.values()) / n * 1e6, 2),
                      "cpu_s_per_million_by_node": {i: round(c / n * 1e6, 2) for i, c in cpu.items()}}
    return out


def prepare_perf(cluster, sizes: Sizes) -> None:
    for label in ("100B", "1KiB"):
        cluster.create_topic(f"perf-{label}", PARTITIONS, RF)


def measure_perf(cluster, sizes: Sizes, _prepared) -> dict:
    out = {}
    for label, size, n in (("100B", 100, sizes.records_100), ("1KiB", 1024, sizes.records_1k)):
        out[label] = producer_performance(cluster.bootstrap, f"perf-{label}", size, n, sizes.load_s)
    return out


def measure_latency(cluster, sizes: Sizes, _prepared) -> dict:
    lat = confluent_latency(cluster.bootstrap, "latency", sizes.latency)
    return {"samples": len(lat), "p50_ms": round(statistics.median(lat), 3), "p99_ms": round(pct(lat, 0.99), 3)}


def prepare_consume(cluster, sizes: Sizes) -> None:
    cluster.create_topic("consume", PARTITIONS, RF)
    confluent_produce(cluster.bootstrap, "consume", b"x" * 100, sizes.records_100, sizes.load_s)


def measure_consume(cluster, sizes: Sizes, _prepared) -> dict:
    n = sizes.records_100
    elapsed = consume(cluster.bootstrap, "consume", PARTITIONS, n, sizes.load_s)
    return {"records": n, "records_per_s": round(n / elapsed), "mb_per_s": round(n * 100 / elapsed / 1e6, 2)}


def measure_e2e(cluster, sizes: Sizes, _prepared) -> dict:
    lat = end_to_end(cluster.bootstrap, "e2e", sizes.e2e)
    return {"samples": len(lat), "p50_ms": round(statistics.median(lat), 3), "p99_ms": round(pct(lat, 0.99), 3)}


def measure_failover(cluster, sizes: Sizes, _prepared) -> dict:
    """SIGKILL of the active controller; seconds until a topic can be created again: a CreateTopics request (one
    partition, RF 1: creation needs a controller, not the dead node's replica; a new name each) goes to a surviving
    node every 100 ms, each waiting up to 5 s, and the first that succeeds gives the time it was answered."""
    leader = active_controller(cluster)
    if leader is None:
        raise AssertionError("no active controller")
    ports = [cluster.nodes[i].port for i in cluster.running() if i != leader]
    cluster.kill(leader)
    seconds, attempts, last = asyncio.run(first_creation(ports, sizes.failover_s))
    if seconds is None:
        raise Incomplete(f"no topic created within {sizes.failover_s} s of the kill (last {last})",
                         {"killed": leader, "seconds": sizes.failover_s, "attempts": attempts})
    return {"killed": leader, "seconds": round(seconds, 3), "attempts": attempts,
            "new_controller": active_controller(cluster)}


async def first_creation(ports: list[int], bound_s: float) -> tuple[float | None, int, object]:
    """(seconds until the first CreateTopics answered without error, requests sent, the last outcome seen)."""
    from kraftwire import error_codes as ec
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import request_once

    CT = w.CreateTopicsRequest
    loop = asyncio.get_running_loop()
    start = loop.time()
    outcomes: list = []

    async def create(k: int) -> None:
        body = CT(topics=[CT.CreatableTopic(name=f"after-failover-{k}", num_partitions=1, replication_factor=1,
                                            assignments=[], configs=[])], timeout_ms=5000, validate_only=False)
        try:
            r = await request_once(HOST, ports[k % len(ports)], body, 5, timeout=5)
            outcomes.append((r.topics[0].error_code, loop.time() - start))
        except Exception as exc:  # noqa: BLE001 - timeouts and closed connections while the quorum elects
            outcomes.append((repr(exc), loop.time() - start))

    tasks = []
    try:
        while loop.time() - start < bound_s:
            done = [t for code, t in outcomes if code == ec.NONE]
            if done:
                return min(done), len(tasks), ec.NONE
            tasks.append(asyncio.ensure_future(create(len(tasks))))
            await asyncio.sleep(0.1)
        return None, len(tasks), outcomes[-1][0] if outcomes else None
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def measure_create(cluster, sizes: Sizes, _prepared) -> dict:
    """``sizes.create`` partitions at RF 3; seconds until every broker hosts all of them."""
    start = time.perf_counter()
    bound = sizes.create_s
    figures = {"partitions": sizes.create, "replication_factor": RF}
    try:
        create_topics(cluster, "many", sizes.create, bound)
    except Exception as exc:  # noqa: BLE001 - a refused or timed-out creation is reported with what was reached
        figures["error"] = repr(exc)[:300]
    answered = time.perf_counter() - start
    counts = {}
    while True:
        counts = {i: hosted(cluster, i, "many-") for i in cluster.running()}
        elapsed = time.perf_counter() - start
        if all(c >= sizes.create for c in counts.values()) and "error" not in figures:
            return {**figures, "seconds": round(elapsed, 2), "answered_s": round(answered, 2),
                    "partitions_per_s": round(sizes.create / elapsed, 1)}
        if elapsed > bound or "error" in figures:
            reached = max(0, min(counts.values()))
            raise Incomplete(f"every broker hosts {reached} of {sizes.create} partitions after {elapsed:.0f} s",
                             {**figures, "seconds": round(elapsed, 2), "hosted_by_node": counts,
                              "partitions_per_s": round(reached / elapsed, 1)})
        time.sleep(1.0)


def prepare_restart(cluster, sizes: Sizes) -> list[str]:
    """``sizes.restart`` partitions (RF 3) holding one record each, in sync on every node; the topics' names."""
    from confluent_kafka import Producer

    names = create_topics(cluster, "rst", sizes.restart, sizes.restart_s)
    counts = [min(PER_TOPIC, sizes.restart - first) for first in range(0, sizes.restart, PER_TOPIC)]
    p = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5})
    for name, count in zip(names, counts):
        for part in range(count):
            p.produce(name, b"x" * 100, partition=part)
    if p.flush(sizes.restart_s):
        raise AssertionError("records unacknowledged")
    bound = time.monotonic() + sizes.restart_s
    while not all(cluster.partitions_ready(name, count, RF) for name, count in zip(names, counts)):
        if time.monotonic() > bound:
            raise AssertionError(f"the {sizes.restart} partitions not in sync within {sizes.restart_s} s")
        time.sleep(0.5)
    return names


def measure_restart(cluster, sizes: Sizes, names: list[str]) -> dict:
    """A broker hosting the prepared partitions stopped (SIGTERM) and started again: seconds until it is registered,
    and until it is back in every ISR. The broker is not the active controller (that is ``failover``)."""
    leader = active_controller(cluster)
    victim = max(i for i in cluster.running() if i != leader)
    survivor = min(i for i in cluster.running() if i != victim)
    bound = time.monotonic() + sizes.restart_s
    stop_start = time.perf_counter()
    cluster.stop(victim, timeout=sizes.restart_s)
    stopped = time.perf_counter() - stop_start
    while time.monotonic() < bound and (victim in (cluster.brokers_seen(survivor) or [victim])
                                        or in_every_isr(cluster, survivor, names, victim)[0] > 0):
        time.sleep(0.2)
    gone = time.perf_counter() - stop_start
    start = time.perf_counter()
    cluster.start(victim)
    registered = None
    while True:
        elapsed = time.perf_counter() - start
        if registered is None and victim in (cluster.brokers_seen(survivor) or ()):
            registered = elapsed
        back, total = in_every_isr(cluster, survivor, names, victim)
        if registered is not None and back == total == sizes.restart:
            return {"partitions": sizes.restart, "replication_factor": RF, "node": victim,
                    "stop_s": round(stopped, 2), "unlisted_after_stop_s": round(gone, 2),
                    "registered_s": round(registered, 2), "seconds": round(elapsed, 2),
                    "partitions_per_s": round(sizes.restart / elapsed, 1)}
        if elapsed > sizes.restart_s:
            raise Incomplete(f"back in {back} of {sizes.restart} ISRs after {elapsed:.0f} s",
                             {"partitions": sizes.restart, "seconds": round(elapsed, 2), "registered_s": registered,
                              "partitions_per_s": round(back / elapsed, 1)})
        cluster.check_alive()
        time.sleep(0.2)


MEASURE = {"produce": measure_produce, "perf": measure_perf, "latency": measure_latency,
           "consume": measure_consume, "e2e": measure_e2e, "failover": measure_failover,
           "create": measure_create, "restart": measure_restart}
#: what a measurement needs in place before it is timed (topics, data); outside the measurement and its profile
PREPARE = {"produce": prepare_produce, "perf": prepare_perf,
           "latency": lambda cluster, _sizes: cluster.create_topic("latency", 1, RF),
           "consume": prepare_consume, "e2e": lambda cluster, _sizes: cluster.create_topic("e2e", 1, RF),
           "restart": prepare_restart}


def attempt(name: str, fn, *args) -> dict:
    """``fn(*args)``'s figures; an unfinished or failed measurement is reported as such, never hangs the run."""
    log(f"  {name} ...")
    try:
        figures = fn(*args)
    except Incomplete as exc:
        figures = {**exc.figures, "incomplete": str(exc)}
    except Exception as exc:  # noqa: BLE001 - one failed measurement must not lose the others
        figures = {"error": f"{type(exc).__name__}: {exc}"[:2000], "trace": traceback.format_exc()[-3000:]}
    log(f"  {name}: {json.dumps({k: v for k, v in figures.items() if k != 'trace'})[:400]}")
    return figures


def warm_up(cluster, sizes: Sizes) -> None:
    """A discarded load: the JVM compiles its hot paths (kraftwire takes the same load), and the consumers' group
    coordinator topic (``__consumer_offsets``, which the first consumer with a group id creates) exists before any
    measurement."""
    cluster.create_topic("warmup", PARTITIONS, RF)
    confluent_produce(cluster.bootstrap, "warmup", b"x" * 100, sizes.records_100 // 2, sizes.load_s)
    confluent_produce(cluster.bootstrap, "warmup", b"x" * 1024, sizes.records_1k // 2, sizes.load_s)
    consume(cluster.bootstrap, "warmup", PARTITIONS, sizes.records_100 // 2 + sizes.records_1k // 2, sizes.load_s)
    confluent_latency(cluster.bootstrap, "warmup", sizes.latency // 10)


def session(kind: str, names: list[str], sizes: Sizes, work: str, profile: str | None = None) -> dict:
    """One fresh cluster of ``kind``: the data measurements among ``names`` (failover last: it kills a node), or
    one cluster-operation measurement (``create``/``restart``); with ``profile`` (a directory) every measurement
    runs under ``PySpy``."""
    base = tempfile.mkdtemp(prefix=f"{kind}-", dir=work)
    out: dict = {}
    log(f"{kind}: starting 3 nodes for {','.join(names)} in {base}")
    try:
        with KINDS[kind](base, props=PROPS) as cluster:
            if any(n in DATA_NAMES for n in names):
                out["warm_up"] = attempt("warm-up (discarded)", lambda: warm_up(cluster, sizes) or {"done": True})
            for name in names:
                prepared = None
                if name in PREPARE:
                    try:
                        prepared = PREPARE[name](cluster, sizes)
                    except Exception as exc:  # noqa: BLE001 - reported as the measurement's failure
                        out[name] = {"error": f"preparing: {type(exc).__name__}: {exc}"[:2000]}
                        log(f"  {name}: {out[name]['error'][:400]}")
                        continue
                if profile is None:
                    out[name] = attempt(name, MEASURE[name], cluster, sizes, prepared)
                    continue
                with PySpy(profile, name, {i: cluster.pid(i) for i in cluster.running()}) as spy:
                    out[name] = attempt(name, MEASURE[name], cluster, sizes, prepared)
                out[name]["profile"] = spy.summary()
    except Exception as exc:  # noqa: BLE001 - a cluster that does not start is a result too
        out["error"] = f"{type(exc).__name__}: {exc}"[:4000]
        log(f"{kind}: {out['error'][:400]}")
    return out


#: the frames under every sample of a node (interpreter start, the event loop): no news in a profile
ROOT_FRAMES = re.compile(r"<frozen runpy>|asyncio/(runners|base_events|events)\.py|kraftwire/(__main__|cli)\.py|"
                         r"tools/server_start\.py")


class PySpy:
    """py-spy sampling node processes while a measurement runs (``--profile``): one raw collapsed-stack file per node
    (``<dir>/<name>-node<i>.txt``, busy threads only), summarised as the frames holding the most samples."""

    def __init__(self, directory: str, name: str, pids: dict[int, int]) -> None:
        os.makedirs(directory, exist_ok=True)
        self.paths = {i: os.path.join(directory, f"{name}-node{i}.txt") for i in pids}
        self.pids = pids
        self.procs: dict[int, subprocess.Popen] = {}

    def __enter__(self) -> "PySpy":
        spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
        if not os.path.exists(spy):
            raise AssertionError(f"--profile needs py-spy beside {sys.executable} (pip install py-spy)")
        for i, pid in self.pids.items():
            self.procs[i] = subprocess.Popen([spy, "record", "-p", str(pid), "-r", "100", "-f", "raw", "--nonblocking",
                                              "-o", self.paths[i]], stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # attached before the load starts
        return self

    def __exit__(self, *exc) -> None:
        for proc in self.procs.values():
            proc.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def summary(self, top: int = 12) -> dict:
        """Per node: busy samples, and the ``top`` functions by own samples and by inclusive samples (percent)."""
        out = {}
        for i, path in self.paths.items():
            own: dict[str, int] = {}
            inclusive: dict[str, int] = {}
            total = 0
            if os.path.exists(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        stack, _, count = line.rstrip("\n").rpartition(" ")
                        if not count.isdigit():
                            continue
                        n = int(count)
                        frames = stack.split(";")
                        total += n
                        own[frames[-1]] = own.get(frames[-1], 0) + n
                        for frame in set(frames):
                            inclusive[frame] = inclusive.get(frame, 0) + n

            def share(counts: dict[str, int]) -> list:
                return [(frame, round(100 * c / total, 1)) for frame, c in
                        sorted(counts.items(), key=lambda kv: -kv[1]) if not ROOT_FRAMES.search(frame)][:top]

            out[i] = {"samples": total, "own": share(own) if total else [],
                      "inclusive": share(inclusive) if total else []}
        return out


# ---------------------------------------------------------------------------------------------------- the table
#: (label, unit, name, path in the figures, goal: (">=" or "<=", ratio kraftwire/Kafka) or None)
ROWS = [
    ("produce 100 B, confluent-kafka", "records/s", "produce", ("100B", "records_per_s"), (">=", 1.0)),
    ("produce 1 KiB, confluent-kafka", "records/s", "produce", ("1KiB", "records_per_s"), (">=", 1.0)),
    ("produce 100 B, ProducerPerformance", "records/s", "perf", ("100B", "records_per_s"), (">=", 1.0)),
    ("produce 1 KiB, ProducerPerformance", "records/s", "perf", ("1KiB", "records_per_s"), (">=", 1.0)),
    ("consume 100 B from the page cache", "records/s", "consume", ("records_per_s",), (">=", 1.0)),
    ("acks=all latency p50, concurrency 1", "ms", "latency", ("p50_ms",), ("<=", 1.0)),
    ("acks=all latency p99, concurrency 1", "ms", "latency", ("p99_ms",), ("<=", 1.0)),
    ("end-to-end latency p50", "ms", "e2e", ("p50_ms",), ("<=", 1.0)),
    ("end-to-end latency p99", "ms", "e2e", ("p99_ms",), ("<=", 1.0)),
    ("create partitions (RF 3) until hosted", "partitions/s", "create", ("partitions_per_s",), (">=", 0.5)),
    ("broker restart until back in every ISR", "partitions/s", "restart", ("partitions_per_s",), (">=", 0.5)),
    ("controller failover until a topic is created", "s", "failover", ("seconds",), ("<=", 1.0)),
    ("CPU s per million records, 100 B produce (3 nodes)", "s", "produce", ("100B", "cpu_s_per_million"), None),
    ("CPU s per million records, 1 KiB produce (3 nodes)", "s", "produce", ("1KiB", "cpu_s_per_million"), None),
]


def figure(runs: list[dict], name: str, path: tuple) -> tuple[float | None, str]:
    """The median over the runs of one figure, and a note when a run did not finish or failed."""
    values, notes = [], []
    for run in runs:
        node = run.get(name, {})
        if "error" in node:
            notes.append("not run" if node["error"].startswith("not run") else "failed")
            continue
        if "incomplete" in node:
            notes.append("incomplete")
        for key in path:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, (int, float)):
            values.append(float(node))
    return (statistics.median(values) if values else None), ", ".join(sorted(set(notes)))


def summarize(results: dict, names: list[str]) -> list[dict]:
    rows = []
    for label, unit, name, path, goal in ROWS:
        if name not in names:
            continue
        kafka, kafka_note = figure(results["kafka"], name, path)
        kw, kw_note = figure(results["kraftwire"], name, path)
        ratio = round(kw / kafka, 3) if kafka and kw is not None else None
        met = None
        if goal is not None and ratio is not None and not kw_note:
            met = ratio >= goal[1] if goal[0] == ">=" else ratio <= goal[1]
        rows.append({"measure": label, "unit": unit, "kafka": kafka, "kraftwire": kw, "ratio": ratio,
                     "goal": f"{goal[0]} {goal[1]}" if goal else None, "met": met,
                     "note": "; ".join(f"{k}: {n}" for k, n in (("kafka", kafka_note), ("kraftwire", kw_note)) if n)})
    return rows


def table(rows: list[dict]) -> str:
    def num(v) -> str:
        if v is None:
            return "—"
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"

    lines = ["| measure | unit | Kafka 4.4.0 | kraftwire | kraftwire/Kafka | goal | met |",
             "| --- | --- | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        met = {True: "yes", False: "**no**", None: "—"}[r["met"]]
        if r["note"]:
            met += f" ({r['note']})"
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}×"
        lines.append(f"| {r['measure']} | {r['unit']} | {num(r['kafka'])} | {num(r['kraftwire'])} | {ratio} | "
                     f"{r['goal'] or '—'} | {met} |")
    return "\n".join(lines)


def profile_text(runs: list[dict]) -> str:
    """The profile summaries as text: per measurement and node, the busiest functions."""
    lines = []
    for run in runs:
        for name, figures in run.items():
            for node, prof in (figures.get("profile") or {}).items() if isinstance(figures, dict) else ():
                lines.append(f"## {name}, node {node}: {prof['samples']} busy samples")
                lines += [f"  own {pct_:5.1f}%  {frame}" for frame, pct_ in prof["own"]]
                lines += [f"  incl {pct_:5.1f}%  {frame}" for frame, pct_ in prof["inclusive"]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts, one round: a smoke run")
    parser.add_argument("--out", default=None, help="directory for vs_kafka.json and vs_kafka.md")
    parser.add_argument("--only", default=",".join(NAMES), help=f"comma-separated subset of {','.join(NAMES)}")
    parser.add_argument("--profile", metavar="DIR", default=None,
                        help="kraftwire only, its nodes under py-spy during each measurement: stacks and summaries "
                             "in DIR (no comparison)")
    parser.add_argument("--budget", type=float, default=None,
                        help="minutes: clusters not yet started when they are spent are reported as not run")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = set(names) - set(NAMES)
    if unknown:
        parser.error(f"unknown measurement(s) {sorted(unknown)}; choose from {','.join(NAMES)}")
    sizes = QUICK if args.quick else FULL
    kafka_libs()  # fetched (or failing loudly) before any cluster starts
    results: dict = {"kafka": [], "kraftwire": []}
    started = time.time()
    load_before = os.getloadavg()
    # (kind, names) per fresh cluster, the kinds alternating which goes first: a first data round, the cluster
    # operations, then the further data rounds (the ones a spent --budget drops first)
    data = [n for n in names if n in DATA_NAMES]
    rounds = [[(kind, data) for kind in (("kafka", "kraftwire") if r % 2 == 0 else ("kraftwire", "kafka"))]
              for r in range(sizes.rounds if data else 0)]
    operations = [(kind, [name]) for k, name in enumerate(n for n in names if n not in DATA_NAMES)
                  for kind in (("kraftwire", "kafka") if k % 2 == 0 else ("kafka", "kraftwire"))]
    plan = rounds[0] + operations + [step for r in rounds[1:] for step in r] if rounds else operations
    if args.profile:  # one kraftwire cluster per set of measurements: where its time goes, no comparison
        plan = list(dict.fromkeys((kind, tuple(which)) for kind, which in plan if kind == "kraftwire"))
    with tempfile.TemporaryDirectory(prefix="vs-kafka-") as work:
        for step, (kind, which) in enumerate(plan, 1):
            if args.budget and time.time() - started > args.budget * 60:
                log(f"{kind}: {','.join(which)} not run: the {args.budget}-minute budget is spent")
                results[kind].append({name: {"error": "not run: time budget spent"} for name in which})
                continue
            log(f"cluster {step}/{len(plan)}")
            results[kind].append(session(kind, which, sizes, work, args.profile))
    if args.profile:
        with open(os.path.join(args.profile, "profile.json"), "w", encoding="utf-8") as f:
            json.dump(results["kraftwire"], f, indent=1, default=str)
        print(profile_text(results["kraftwire"]))
        return 0
    rows = summarize(results, names)
    report = {"machine": {"cpus": os.cpu_count(), "load_avg_before": load_before, "load_avg_after": os.getloadavg()},
              "sizes": dataclasses.asdict(sizes), "props": PROPS, "started": time.strftime(
                  "%Y-%m-%d %H:%M:%S", time.localtime(started)), "seconds": round(time.time() - started),
              "results": results, "table": rows}
    text = table(rows)
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "vs_kafka.json"), "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, default=str)
        with open(os.path.join(args.out, "vs_kafka.md"), "w", encoding="utf-8") as f:
            f.write(f"# kraftwire beside Apache Kafka 4.4.0 ({'quick' if args.quick else 'full'} run, "
                    f"{report['started']}, {report['seconds']} s)\n\nThree combined nodes each, RF 3, "
                    f"min.insync.replicas=2, acks=all; medians of {sizes.rounds} interleaved round(s); ratio = "
                    f"kraftwire/Kafka; {os.cpu_count()} CPUs, load average {load_before[0]:.1f} before and "
                    f"{report['machine']['load_avg_after'][0]:.1f} after.\n\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
