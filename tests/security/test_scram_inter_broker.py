"""Brokers log in to each other with SCRAM-SHA-512 (KIP-900's KRaft setup), as real processes (``server-start``):
one controller on a PLAINTEXT controller listener and three brokers replicating over the SASL_PLAINTEXT listener
``INTERNAL`` (``sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512``, the login from
``listener.name.internal.scram-sha-512.sasl.jaas.config``), every node formatted with ``storage format --add-scram``.

The credentials reach the brokers only with the metadata log, so a broker's first logins to another may be refused
until that one's image holds them; its replica fetchers try again after their backoff. A topic at replication factor 3
(every replica in the ISR) takes acks=all writes (from confluent-kafka logging in with SCRAM too) only once both
followers of each partition have fetched them over ``INTERNAL``; after the leader of a partition is killed, its new
leader, a former follower, serves every record back (min.insync.replicas=2, so that the two left may advance the high
watermark). ``BROKER`` (PLAINTEXT) is only for the test's Metadata probes."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.interop

TOPIC = "scrammed"
BROKERS = (2, 3, 4)
RECORDS = 200
MECHANISM = "SCRAM-SHA-512"
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required"


def _broker_props(node_id: int, socks: dict) -> str:
    if node_id not in BROKERS:
        return ""
    return ("inter.broker.listener.name=INTERNAL\n"
            f"sasl.mechanism.inter.broker.protocol={MECHANISM}\n"
            f"listener.name.internal.sasl.enabled.mechanisms={MECHANISM}\n"
            f"listener.name.internal.scram-sha-512.sasl.jaas.config={SCRAM_JAAS} "
            'username="admin" password="admin-secret";\n')


def _client(internal_ports) -> dict:
    return {"bootstrap.servers": ",".join(f"localhost:{p}" for p in internal_ports),
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": MECHANISM,
            "sasl.username": "alice", "sasl.password": "alice-secret"}


def _partitions(port: int):
    from harness import roles

    try:
        md = roles.metadata(port)
    except Exception:  # noqa: BLE001 - the broker may be starting or down
        return None
    for t in md.topics:
        if t.name == TOPIC and t.error_code == 0:
            return {p.partition_index: (p.leader_id, sorted(p.isr_nodes)) for p in t.partitions}
    return None


def test_brokers_replicate_logging_in_to_each_other_with_scram(tmp_path):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    from harness import roles

    cluster = roles.RolesCluster(
        str(tmp_path), controllers=1, brokers=3, kraft=True, extra_listeners=("INTERNAL",),
        extra_props="listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT,INTERNAL:SASL_PLAINTEXT\n",
        node_props=_broker_props,
        format_args=("--add-scram", f"{MECHANISM}=[name=admin,password=admin-secret]",
                     "--add-scram", f"{MECHANISM}=[name=alice,password=alice-secret]"))
    try:
        cluster.start_all()
        cluster.wait_for_leader()
        plain = {n.node_id: n.port_of("BROKER") for n in cluster.brokers}
        internal = {n.node_id: n.port_of("INTERNAL") for n in cluster.brokers}
        roles.wait_until(lambda: all(roles.broker_ids(p) == list(BROKERS) for p in plain.values()),
                         "three brokers in every broker's image", cluster)

        admin = AdminClient(_client(internal.values()))
        futures = admin.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=3,
                                                config={"min.insync.replicas": "2"})], request_timeout=30)
        futures[TOPIC].result(timeout=30)
        probe = plain[BROKERS[0]]
        roles.wait_until(lambda: (lambda parts: parts is not None and len(parts) == 3
                                  and all(isr == list(BROKERS) for _, isr in parts.values()))(_partitions(probe)),
                         "every replica in sync", cluster)

        # acks=all with the ISR full: each write is answered once both followers fetched it, logged in with SCRAM
        failed = []
        producer = Producer({**_client(internal.values()), "acks": "all", "enable.idempotence": True,
                             "message.timeout.ms": 60000})
        for i in range(RECORDS):
            producer.produce(TOPIC, key=f"k{i}".encode(), value=f"v{i:04d}".encode(), partition=i % 3,
                             on_delivery=lambda err, msg: failed.append(err) if err is not None else None)
        assert producer.flush(60) == 0
        assert not failed, failed[:3]
        for n in cluster.brokers:
            assert f"User:admin authenticated with SASL {MECHANISM}" in n.stderr(), n.node_id

        # the leader of partition 0 dies: a former follower leads it and serves every record it fetched
        old_leader = _partitions(probe)[0][0]
        cluster.nodes[old_leader].kill()
        alive = [b for b in BROKERS if b != old_leader]
        new = roles.wait_until(lambda: (lambda parts: parts is not None and parts[0][0] in alive
                                        and parts[0][0])(_partitions(plain[alive[0]])),
                               "a new leader of partition 0", cluster)
        consumer = Consumer({**_client(internal[b] for b in alive), "group.id": "scram-readers",
                             "enable.auto.commit": False})
        try:
            consumer.assign([TopicPartition(TOPIC, 0, 0)])
            values = []
            roles.wait_until(lambda: _poll_into(consumer, values) >= len(range(0, RECORDS, 3)),
                             f"partition 0 read back from broker {new}", cluster)
        finally:
            consumer.close()
        assert values == [f"v{i:04d}".encode() for i in range(0, RECORDS, 3)]
    finally:
        cluster.close()


def _poll_into(consumer, values: list) -> int:
    msg = consumer.poll(0.5)
    if msg is not None and msg.error() is None:
        values.append(msg.value())
    return len(values)
