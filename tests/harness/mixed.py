"""Helpers for clusters of Apache Kafka 4.4 and kraftwire nodes (``tests/mixed``): Kafka's server with a logger,
properties files, a Kafka directory id, the quorum's leader, a workload of an idempotent producer and a consumer
group running throughout, a transactional producer, a read of a whole topic, Kafka's metadata shell, moving a
broker's partitions to another."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import threading
import time
import uuid

from confluent_kafka import Consumer, Producer

from harness import processes
from harness.kafka import JVM_LIGHT, kafka_libs
from harness.roles import metadata, wait_until
from kraftwire.log.meta_properties import read_meta_properties
from kraftwire.server.edge.client import request_once
from kraftwire.tools.metadata_quorum import ADD_TIMEOUT_MS, add_voter_request

#: Kafka 4.4's release as kraftwire's newest metadata.version, without the features kraftwire does not implement yet
FORMAT = ("--release-version", "4.4-IV0", "--feature", "share.version=0", "--feature", "streams.version=0")


def properties(path, lines: dict) -> str:
    """A ``.properties`` file of ``lines``; its path."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(f"{k}={v}\n" for k, v in lines.items()))
    return str(path)


def start_kafka(config: str, log) -> subprocess.Popen:
    """Apache Kafka's ``kafka.Kafka config`` with slf4j-simple's logger (``tests/kafka/logging/pom.xml``), its
    output to ``log``."""
    classpath = os.pathsep.join(os.path.join(libs, "*") for libs in (kafka_libs(), kafka_libs("logging/pom.xml")))
    with open(log, "wb") as out:
        return subprocess.Popen(["java", *JVM_LIGHT, "-cp", classpath, "kafka.Kafka", config], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def directory_id() -> str:
    """A Kafka Uuid as Kafka prints it (URL-safe base64, no padding), never starting with '-' (Kafka avoids those)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def leader(ports) -> int | None:
    """The quorum's leader as the controllers on ``ports`` describe it (None while none is known)."""
    status = processes.quorum_status(ports)
    current = int(status.get("LeaderId", "-1") or -1)
    return current if current >= 0 else None


class Workload:
    """An idempotent acks=all producer and a consumer group on ``topic``, each in a thread of its own, running until
    ``stop()``: ``acked`` the values acknowledged, ``seen`` the values the group's consumer read (the values are
    ``w0``, ``w1``, ...: each once, so a duplicate in the log is one the idempotent producer let through)."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        self.bootstrap, self.topic, self.group = bootstrap, topic, group
        self.acked: list[bytes] = []
        self.failed: list = []
        self.seen: list[bytes] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._produce, daemon=True),
                         threading.Thread(target=self._consume, daemon=True)]

    def start(self) -> "Workload":
        for t in self._threads:
            t.start()
        return self

    def _produce(self) -> None:
        producer = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "acks": "all",
                             "linger.ms": 5, "message.timeout.ms": 60000})
        i = 0
        while not self._stop.is_set():
            producer.produce(self.topic, value=f"w{i}".encode(), on_delivery=lambda err, msg: (
                self.failed if err else self.acked).append(err or msg.value()))
            producer.poll(0.01)
            i += 1
        if producer.flush(90) != 0:
            self.failed.append("unflushed")

    def _consume(self) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group,
                             "auto.offset.reset": "earliest", "auto.commit.interval.ms": 500})
        consumer.subscribe([self.topic])
        # after stop(): read on until every acknowledged record has come (bounded)
        deadline = None
        while deadline is None or time.monotonic() < deadline:
            if self._stop.is_set() and deadline is None:
                deadline = time.monotonic() + 60
            if self._stop.is_set() and not self._threads[0].is_alive() and set(self.acked) <= set(self.seen):
                break
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None and msg.value().startswith(b"w"):
                self.seen.append(msg.value())
        consumer.close()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(150)


def transactions(bootstrap: str, topic: str, first: int) -> tuple[set[bytes], set[bytes]]:
    """Two committed transactions and an aborted one on ``topic`` (two partitions) by one transactional id (a new
    producer each call: its InitProducerId fences the previous one); (committed values, aborted values)."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{topic}-txn",
                         "transaction.timeout.ms": 60000})
    producer.init_transactions(60)
    committed, aborted = set(), set()
    for n, commit in enumerate((True, False, True)):
        producer.begin_transaction()
        values = {f"t{first + n}-{k}".encode() for k in range(20)}
        for v in sorted(values):
            producer.produce(topic, value=v, partition=n % 2)
        if commit:
            producer.commit_transaction(60)
            committed |= values
        else:
            producer.flush(60)
            producer.abort_transaction(60)
            aborted |= values
    return committed, aborted


def read_all(bootstrap: str, topic: str, count: int, isolation: str = "read_committed") -> list[bytes]:
    """Every record of ``topic`` from the start, by a consumer of no group, until ``count`` came and the end was
    reached (a few quiet polls), bounded."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": isolation})
    consumer.subscribe([topic])
    out: list[bytes] = []
    quiet, deadline = 0, time.monotonic() + 60
    while time.monotonic() < deadline and (len(out) < count or quiet < 5):
        msg = consumer.poll(0.5)
        if msg is None:
            quiet += 1
        elif msg.error() is None:
            quiet = 0
            out.append(msg.value())
    consumer.close()
    return out


def kafka_metadata_shell_tree(path: str, expected: str) -> str:
    """Kafka's ``kafka-metadata-shell.sh --snapshot PATH tree /image`` (``tests/kafka/shell/pom.xml``). Kafka's
    shell prints as soon as its loader has applied any offset, not the whole file (its ``waitUntilCaughtUp``), so
    under load it can print an earlier image: it runs again (a few times at most) until its provenance is the
    ``expected`` tree's, the file's last metadata batch."""
    provenance = expected.split("provenance:\n", 1)[1].splitlines()[0]
    for _ in range(4):
        done = subprocess.run(["java", *JVM_LIGHT, "-cp", os.path.join(kafka_libs("shell/pom.xml"), "*"),
                               "org.apache.kafka.shell.MetadataShell", "--snapshot", path, "tree", "/image"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        if f"provenance:\n{provenance}\n" in done.stdout:
            break
    return done.stdout


def listening(port: int) -> bool:
    """Whether something accepts connections on the loopback ``port``."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def add_voter_through(port: int, node_id: int, node_port: int, log_dir: str):
    """The AddRaftVoter v0 answer of the controller on ``port`` (itself, not the active controller as
    ``metadata-quorum add-controller`` would find it) for controller ``node_id``, listening on ``node_port``
    (CONTROLLER), its directory id from ``log_dir``."""
    body = add_voter_request(node_id, read_meta_properties(log_dir).directory_id,
                             [("CONTROLLER", "127.0.0.1", node_port)], ADD_TIMEOUT_MS)
    return asyncio.run(request_once("127.0.0.1", port, body, 0, timeout=ADD_TIMEOUT_MS / 1000 + 10))


def until_listed(port: int, topic: str) -> None:
    """Wait until the broker on ``port`` lists ``topic`` in its Metadata answer."""
    wait_until(lambda: topic in {t.name for t in metadata(port).topics}, f"{topic} listed by the broker on {port}")


def first_segment(directory: str) -> bytes:
    """The bytes of a partition directory's first segment."""
    with open(os.path.join(directory, "00000000000000000000.log"), "rb") as f:
        return f.read()


def reassign_away(port: int, old: int, new: int, work) -> None:
    """Move every partition with a replica on broker ``old`` (internal topics too) to broker ``new``, the replica
    list otherwise as it is, through the broker on ``port``; wait until the moves have completed."""
    moves = [{"topic": t.name, "partition": p.partition_index,
              "replicas": [new if r == old else r for r in p.replica_nodes]}
             for t in metadata(port).topics for p in t.partitions if old in p.replica_nodes]
    plan = work / f"move-{old}-{new}.json"
    plan.write_text(json.dumps({"version": 1, "partitions": moves}))
    bootstrap = f"127.0.0.1:{port}"
    processes.kw("reassign-partitions", "--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file",
                 str(plan))
    wait_until(lambda: "is still in progress" not in processes.kw(
        "reassign-partitions", "--bootstrap-server", bootstrap, "--verify", "--reassignment-json-file",
        str(plan)).stdout, f"the partitions of broker {old} moved to broker {new}")
