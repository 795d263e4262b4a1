"""Kafka Streams against kraftwire: a word count (``WordCount.java``: the Streams DSL, a repartition topic, a
changelogged count store) with ``processing.guarantee=exactly_once_v2`` on three combined kraftwire nodes, input
produced by confluent-kafka at a steady pace, through a SIGKILL of the broker that leads the most of the application's
partitions once the first counts are out (restarted two seconds later), then through a SIGKILL of the application
itself (a new instance on the same state directory takes over), while the input still arrives.

The store's cache is off, so every increment reaches the output: read ``read_committed``, the output holds, per
word, the counts 1, 2, ..., n exactly once each and in order (n the number of times the word was sent). A lost
increment leaves a gap, a duplicated one (processing repeated outside a transaction, or an aborted transaction's
records visible) repeats a count or goes past n.
"""

from __future__ import annotations

import os
import struct
import threading
import time

from harness import roles
from harness.kafka import start_java, stop_java

APP_ID = "word-count"
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima")
LINES = [" ".join(WORDS[(i * k + k) % len(WORDS)] for k in (1, 2, 3, 5)) for i in range(600)]
PROPS = ("offsets.topic.num.partitions=3\ntransaction.state.log.num.partitions=3\n"
         "group.initial.rebalance.delay.ms=0\nreplica.lag.time.max.ms=2000\n"
         "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000\n")
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "WordCount.java")


def _expected() -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in LINES:
        for word in line.split():
            counts[word] = counts.get(word, 0) + 1
    return counts


class OutputReader:
    """A reader (``read_committed`` unless told) of every partition of ``topic`` from the start: ``poll`` gathers what is visible,
    as (word, count) in offset order per partition."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, isolation: str = "read_committed") -> None:
        from confluent_kafka import Consumer, TopicPartition

        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "word-count-reader",
                                  "enable.auto.commit": False, "isolation.level": isolation,
                                  "topic.metadata.refresh.interval.ms": 1000})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.seen: dict[str, list[int]] = {}

    def poll(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for m in self.consumer.consume(500, 0.2):
                if m.error() is None:
                    self.seen.setdefault(m.key().decode(), []).append(struct.unpack(">q", m.value())[0])

    def total(self) -> int:
        return sum(map(len, self.seen.values()))

    def close(self) -> None:
        self.consumer.close()


def _produce(bootstrap: str, lines, failed: list) -> None:
    """Every line into ``lines`` (idempotent, acks=all), ten every 0.2 s: the input keeps arriving while a broker and
    the application are killed and restarted. Delivery errors go to ``failed``."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                  "message.timeout.ms": 60000})
    for i, line in enumerate(lines):
        p.produce("lines", key=str(i).encode(), value=line.encode(),
                  on_delivery=lambda err, _m: failed.append(err) if err else None)
        p.poll(0)
        if i % 10 == 9:
            time.sleep(0.2)
    if p.flush(90) != 0:
        failed.append("records still in flight after 90 s")


def _leaders(port: int) -> dict[tuple[str, int], int]:
    return {(t.name, p.partition_index): p.leader_id for t in roles.metadata(port).topics if t.error_code == 0
            for p in t.partitions}


def _wait_log(path: str, text: str, proc, timeout: float = 120) -> None:
    def seen() -> bool:
        assert proc.poll() is None, f"the Streams application exited {proc.returncode}:\n{_tail(path)}"
        with open(path, encoding="utf-8", errors="replace") as f:
            return text in f.read()

    roles.wait_until(seen, f"{text!r} in the application's output", timeout=timeout)


def _tail(path: str, n: int = 6000) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()[-n:]


def test_word_count_exactly_once_through_broker_and_application_kills(tmp_path):
    from confluent_kafka.admin import AdminClient, NewTopic

    (tmp_path / "cluster").mkdir()
    cluster = roles.RolesCluster(str(tmp_path / "cluster"), controllers=3, brokers=0, combined=True, kraft=True,
                                 extra_props=PROPS)
    app = reader = None
    logs = [str(tmp_path / f"word-count.{i}.log") for i in (1, 2)]

    def start_app(log: str):
        proc = start_java(SOURCE, bootstrap, APP_ID, "lines", "counts", str(tmp_path / "state"), log=log)
        _wait_log(log, "STATE RUNNING", proc)
        return proc

    try:
        cluster.start_all()
        ports = {n.node_id: n.port_of("BROKER") for n in cluster.controllers}
        bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports.values())
        roles.wait_until(lambda: all(roles.broker_ids(p) == [1, 2, 3] for p in ports.values()),
                         "three brokers in every broker's image", cluster)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics([NewTopic(t, 3, 3, config={"min.insync.replicas": "2"})
                                      for t in ("lines", "counts")]).values():
            f.result(30)

        app = start_app(logs[0])
        reader = OutputReader(bootstrap, "counts", 3)
        failed: list = []
        producer = threading.Thread(target=_produce, args=(bootstrap, LINES, failed))
        producer.start()
        roles.wait_until(lambda: reader.poll(0.2) or reader.total() >= 200, "the first counts in the output",
                         cluster, timeout=90)
        progress = [reader.total()]

        # the broker leading the most partitions of the application (its input, output and internal topics)
        leaders = _leaders(ports[1])
        mine = [b for (t, _), b in leaders.items() if t in ("lines", "counts") or t.startswith(APP_ID)]
        victim = max(sorted(set(mine)), key=mine.count)
        led = sorted(f"{t}-{p}" for (t, p), b in leaders.items() if b == victim)
        cluster.nodes[victim].kill()
        # back two seconds later, within its broker session (the harness keeps its listening socket, so clients'
        # connections meanwhile wait for it rather than being refused: a long outage would only stall the Java
        # clients for their request.timeout.ms on those connections)
        time.sleep(2)
        cluster.nodes[victim].start()
        roles.wait_until(lambda: roles.broker_ids(ports[victim]) == [1, 2, 3], "the victim serving again", cluster)

        # then the application itself dies mid-transaction; the next instance (same state directory, so the same
        # transactional id) fences it, its open transaction is aborted and the store is restored from the changelog
        reader.poll(0.2)
        progress.append(reader.total())
        app.kill()
        app.wait(10)
        app = start_app(logs[1])
        producer.join(120)
        assert not producer.is_alive() and not failed, failed[:3]

        want = _expected()

        def complete() -> bool:
            reader.poll(0.5)
            assert app.poll() is None, f"the Streams application exited {app.returncode}:\n{_tail(logs[1])}"
            return all(reader.seen.get(w, [0])[-1] >= n for w, n in want.items())

        roles.wait_until(complete, "every word's final count", cluster, timeout=180)
        reader.poll(2)  # anything written after the final counts would show here
        for word, n in want.items():
            assert reader.seen[word] == list(range(1, n + 1)), (
                f"{word!r}: read_committed counts {reader.seen[word]} (want 1..{n}); broker {victim} was killed "
                f"leading {led}\n{_tail(logs[0])}\n{_tail(logs[1])}")
        assert set(reader.seen) == set(want)
        everything = OutputReader(bootstrap, "counts", 3, "read_uncommitted")
        everything.poll(3)
        everything.close()
        print(f"exactly once through kills of broker {victim} (leading {led}) and of the application, with "
              f"{progress} of {sum(want.values())} increments out; {everything.total() - reader.total()} aborted "
              "increments in the log")
    finally:
        if reader is not None:
            reader.close()
        if app is not None:
            stop_java(app)
        cluster.close()
    with open(logs[1], encoding="utf-8", errors="replace") as f:
        assert "CLOSED" in f.read(), f"the application did not close cleanly:\n{_tail(logs[1])}"
