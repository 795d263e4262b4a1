"""Consumer groups through a 3-node quorum (the Raft leader coordinates; offsets and generations are kraftwire
control records in the log): kafka-python group consumer (commit, then a new consumer resumes from the committed
offset), confluent-kafka ``subscribe``, KafkaJS producer and group consumer. ≥ 10,000 records each, checked for
content and order."""

from __future__ import annotations

import json
import os
import subprocess

from harness import clients

KAFKAJS_DIR = clients.KAFKAJS_DIR
TIMEOUT_S = 120


def produce_kafka_python(quorum, want):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=quorum.servers, request_timeout_ms=10000, max_block_ms=10000)
    try:
        futures = [producer.send("clients", value=v) for v in want]
        producer.flush(TIMEOUT_S)
        return [f.get(timeout=10).offset for f in futures]
    finally:
        producer.close(10)


def test_kafka_python_group_consumer_commits_and_resumes(quorum):
    from kafka import KafkaConsumer

    want = clients.values("kpg")
    offsets = produce_kafka_python(quorum, want)
    half = len(want) // 2
    got: list = []
    consumer = KafkaConsumer(clients.TOPIC, bootstrap_servers=quorum.servers, group_id="kp-group",
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=3000,
                             request_timeout_ms=20000, session_timeout_ms=10000, heartbeat_interval_ms=1000)
    try:
        deadline = clients.bounded(TIMEOUT_S)
        while len(got) < half and not deadline.expired():
            for msg in consumer:
                if msg.value.startswith(b"kpg-"):
                    got.append(msg.value)
                    if len(got) == half:
                        consumer.commit()
                        committed_at = msg.offset + 1
                        break
    finally:
        consumer.close(autocommit=False)
    assert got == want[:half]
    assert committed_at == offsets[half - 1] + 1

    rest: list = []
    consumer = KafkaConsumer(clients.TOPIC, bootstrap_servers=quorum.servers, group_id="kp-group",
                             auto_offset_reset="earliest", consumer_timeout_ms=3000, request_timeout_ms=20000,
                             session_timeout_ms=10000, heartbeat_interval_ms=1000)
    try:
        first_offset = None
        deadline = clients.bounded(TIMEOUT_S)
        while len(rest) < len(want) - half and not deadline.expired():
            for msg in consumer:
                if first_offset is None:
                    first_offset = msg.offset
                if msg.value.startswith(b"kpg-"):
                    rest.append(msg.value)
    finally:
        consumer.close()
    assert first_offset == committed_at  # resumed from the committed offset, nothing re-read
    assert rest == want[half:]


def test_confluent_kafka_subscribe(quorum):
    from confluent_kafka import Consumer, Producer

    want = clients.values("ckg")
    producer = Producer({"bootstrap.servers": quorum.bootstrap, "linger.ms": 5})
    for i, v in enumerate(want):
        producer.produce(clients.TOPIC, value=v)
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(TIMEOUT_S) == 0
    consumer = Consumer({"bootstrap.servers": quorum.bootstrap, "group.id": "ck-group",
                         "auto.offset.reset": "earliest", "session.timeout.ms": 10000})
    try:
        consumer.subscribe([clients.TOPIC])
        got: list = []
        last = None
        deadline = clients.bounded(TIMEOUT_S)
        while len(got) < len(want) and not deadline.expired():
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            if msg.value().startswith(b"ckg-"):
                got.append(msg.value())
                last = msg
        assert got == want
        consumer.commit(message=last, asynchronous=False)
        committed = consumer.committed(consumer.assignment(), timeout=10)
        assert committed[0].offset == last.offset() + 1
    finally:
        consumer.close()


def test_kafkajs_producer_and_group_consumer(quorum):
    clients.ensure_kafkajs()
    n = clients.RECORDS
    env = dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1")
    out = subprocess.run(["node", "clients.js", quorum.bootstrap, clients.TOPIC, "kjs", str(n), "kjs-group"],
                         cwd=KAFKAJS_DIR, capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stderr[-4000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["consumed"] == [v.decode() for v in clients.values("kjs", n)]
    assert result["offsets"] == sorted(result["offsets"])
    assert result["fetched"] == result["committed"]
