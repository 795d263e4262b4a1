"""Retries for real and failover, through a 3-node quorum.

* A fault proxy swallows Produce answers (closing the connection after the node appended), so kafka-python's
  idempotent producer resends the same batches: every record is in the log exactly once, in order.
* SIGKILL the leader while kafka-python produces with acks=all: every acknowledged record is present exactly once,
  in order, on the new leader; the consumer group resumes from the offset it committed before the crash.
"""

from __future__ import annotations

import time

from harness import clients

TIMEOUT_S = 120


def read_tag(quorum, tag, bootstrap=None, expect=0):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaTimeoutError

    consumer = KafkaConsumer(bootstrap_servers=(bootstrap or quorum.bootstrap).split(","), group_id=None,
                             consumer_timeout_ms=2000, request_timeout_ms=20000)
    got: list = []
    try:
        tp = TopicPartition("clients", 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + TIMEOUT_S
        end = None
        while end is None:  # right after a failover the client may still be finding the new leader
            try:
                end = consumer.end_offsets([tp])[tp]
            except KafkaTimeoutError:
                if time.monotonic() >= deadline:
                    raise
        pos = 0
        while pos < end and time.monotonic() < deadline:
            for m in consumer:
                pos = m.offset + 1
                if m.value.startswith(tag.encode() + b"-"):
                    got.append(m.value)
            pos = max(pos, consumer.position(tp))
    finally:
        consumer.close()
    return got


def test_dropped_produce_answers_are_resent_without_duplicates(quorum, fault_proxy):
    from kafka import KafkaProducer

    want = clients.values("proxy")
    producer = KafkaProducer(bootstrap_servers=fault_proxy.bootstrap.split(","), acks="all",
                             request_timeout_ms=10000, max_block_ms=10000, retry_backoff_ms=50, linger_ms=2)
    try:
        futures = []
        for i, v in enumerate(want):
            if i % 2000 == 500:
                fault_proxy.drop_produce(2)
            futures.append(producer.send(clients.TOPIC, value=v))
        producer.flush(TIMEOUT_S)
        offsets = [f.get(timeout=30).offset for f in futures]
    finally:
        producer.close(10)
    assert fault_proxy.dropped >= 2  # answers really were lost and batches resent
    assert offsets == sorted(offsets) and len(set(offsets)) == len(want)
    assert read_tag(quorum, "proxy") == want


def test_sigkill_leader_during_acks_all_production(quorum):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    cluster = quorum.cluster
    # a group commits an offset before the crash
    seed = clients.values("foseed", 200)
    producer = KafkaProducer(bootstrap_servers=quorum.servers, acks="all", request_timeout_ms=10000,
                             max_block_ms=20000, retry_backoff_ms=100, retries=2**31 - 1)
    for v in seed:
        producer.send(clients.TOPIC, value=v)
    producer.flush(30)
    consumer = KafkaConsumer(clients.TOPIC, bootstrap_servers=quorum.servers, group_id="fo-group",
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=3000,
                             request_timeout_ms=20000, session_timeout_ms=10000, heartbeat_interval_ms=1000)
    seen = 0
    committed_at = None
    deadline = clients.bounded(TIMEOUT_S)
    while committed_at is None and not deadline.expired():
        for m in consumer:
            if m.value.startswith(b"foseed-"):
                seen += 1
                if seen == 100:
                    consumer.commit()
                    committed_at = m.offset + 1
                    break
    consumer.close(autocommit=False)
    assert committed_at is not None

    leader = quorum.leader()
    old_epoch = cluster.wait_for_leader().leader_epoch
    want = clients.values("fo")
    futures = []
    killed = False
    for i, v in enumerate(want):
        futures.append(producer.send(clients.TOPIC, value=v))
        if i == 3000:
            producer.flush(30)
        if i == 3500 and not killed:
            leader.kill()  # SIGKILL while batches are in flight
            killed = True
    producer.flush(TIMEOUT_S)
    producer.close(10)
    acked = []
    for f in futures:
        try:
            acked.append(f.get(timeout=1).offset >= 0)
        except Exception:  # noqa: BLE001 - an unacknowledged record may or may not be there
            acked.append(False)
    new = cluster.wait_for_leader(exclude=(leader.node_id,), min_epoch=old_epoch + 1)
    survivors = ",".join(f"127.0.0.1:{n.port}" for n in cluster.nodes.values() if n.running)
    got = read_tag(quorum, "fo", bootstrap=survivors)
    assert len(got) == len(set(got)), "a record is in the log twice"
    assert got == sorted(got), "records are out of order"
    present = set(got)
    missing = [v for v, ok in zip(want, acked) if ok and v not in present]
    assert not missing, f"{len(missing)} acknowledged records lost (first {missing[:3]})"
    assert sum(acked) >= 3000

    # the group resumes from its committed offset under the new coordinator (offsets were in the log)
    consumer = KafkaConsumer(clients.TOPIC, bootstrap_servers=survivors.split(","), group_id="fo-group",
                             auto_offset_reset="earliest", consumer_timeout_ms=3000, request_timeout_ms=20000,
                             session_timeout_ms=10000, heartbeat_interval_ms=1000)
    try:
        first = None
        deadline = clients.bounded(TIMEOUT_S)
        while first is None and not deadline.expired():
            for m in consumer:
                first = m
                break
        assert first is not None and first.offset == committed_at
        assert first.value == seed[100]
    finally:
        consumer.close(autocommit=False)
    assert new.leader_id != leader.node_id
    leader.start()  # back as a follower; the module's quorum stays whole for later tests
    cluster.wait_for(lambda p: True, "a leader after the restart")
