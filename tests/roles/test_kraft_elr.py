"""Eligible leader replicas (KIP-966) with real processes: three controllers and three brokers (4, 5, 6) formatted at
the newest metadata.version (ELR on, as Kafka 4.4's default), a topic at replication factor 3 with
min.insync.replicas=2 on brokers 4, 5, 6 (ElrTest-style).

* acks=all records are acknowledged while two replicas are in sync;
* broker 4 crashes (SIGKILL): fenced, it leaves the ISR, which still holds min ISR: no ELR;
* broker 5 stops cleanly (SIGTERM: controlled shutdown, its clean shutdown marker written): the ISR drops to [6], so
  5 joins the ELR and acks=all is refused (NOT_ENOUGH_REPLICAS) — nothing acknowledged can be missing on 5;
* broker 6, the last ISR member, crashes: the ISR becomes empty, the leader -1, ELR [5, 6], LastKnownElr [6]
  (DescribeTopicPartitions shows it);
* broker 4 comes back (it left the ISR while the ISR still held min ISR, so it never was eligible): the partition
  stays leaderless, as no unclean election is allowed;
* broker 5 comes back: its registration names the epoch of its clean shutdown, so it stays eligible and the
  controller elects it from the ELR (a clean election): every acknowledged record is read back from it, in order;
* broker 6 comes back and the ISR is whole again (its removal from the ELR after an unclean restart is checked in
  ``tests/metadata/test_elr.py``: here 4 catching up refills the ISR first, which empties the ELR anyway).
"""

from __future__ import annotations

import asyncio

from harness import roles
from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once

TOPIC = "elr"


def describe(port: int):
    """This partition's (leader, ISR, ELR, LastKnownElr) by DescribeTopicPartitions, or None (no answer yet)."""
    DTP = w.DescribeTopicPartitionsRequest
    try:
        answer = asyncio.run(request_once("127.0.0.1", port, DTP(topics=[DTP.TopicRequest(name=TOPIC)],
                                                                  response_partition_limit=10, cursor=None), 0,
                                          timeout=3.0))
    except Exception:  # noqa: BLE001 - the broker may be starting or down
        return None
    (t,) = answer.topics
    if t.error_code != ec.NONE or not t.partitions:
        return None
    p = t.partitions[0]
    return p.leader_id, sorted(p.isr_nodes), sorted(p.eligible_leader_replicas or []), sorted(p.last_known_elr or [])


def produce(bootstrap: str, values: list[bytes]) -> list[tuple[int, bytes] | str]:
    """confluent-kafka, acks=all, one record at a time: (offset, value) when acknowledged, else the error's name."""
    from confluent_kafka import Producer

    out: list = []

    def delivered(err, msg) -> None:
        out.append(err.name() if err is not None else (msg.offset(), msg.value()))

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": False,
                         "retries": 0, "message.timeout.ms": 8000, "linger.ms": 0})
    for v in values:
        producer.produce(TOPIC, value=v, partition=0, on_delivery=delivered)
        producer.flush(15)
    assert producer.flush(15) == 0
    return out


def test_the_last_isr_member_crashes_and_a_cleanly_stopped_elr_member_is_elected_with_every_acked_record(
        make_roles_cluster):
    from kafka.admin import KafkaAdminClient, NewTopic

    cluster = make_roles_cluster(controllers=3, brokers=3, kraft=True)
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    ports = {n.node_id: n.port_of("BROKER") for n in cluster.brokers}
    roles.wait_until(lambda: all(roles.broker_ids(p) == [4, 5, 6] for p in ports.values()),
                     "three brokers Online", cluster)
    bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    try:
        admin.create_topics([NewTopic(TOPIC, num_partitions=-1, replication_factor=-1,
                                      replica_assignments={0: [4, 5, 6]},
                                      topic_configs={"min.insync.replicas": "2"})])
    finally:
        admin.close()
    roles.wait_until(lambda: describe(ports[5]) == (4, [4, 5, 6], [], []), "all in sync, 4 leading", cluster)

    first = produce(bootstrap, [f"a{i}".encode() for i in range(20)])
    assert all(isinstance(r, tuple) for r in first), first

    cluster.nodes[4].kill()  # a crash: fenced at its session timeout; ISR 2 is still min ISR
    roles.wait_until(lambda: describe(ports[5]) == (5, [5, 6], [], []), "4 out of the ISR, 5 leading", cluster)
    second = produce(f"127.0.0.1:{ports[5]},127.0.0.1:{ports[6]}", [f"b{i}".encode() for i in range(20)])
    assert all(isinstance(r, tuple) for r in second), second
    acked = first + second

    assert cluster.nodes[5].terminate() == 0  # a clean stop: controlled shutdown, the marker written
    roles.wait_until(lambda: describe(ports[6]) == (6, [6], [5], []), "5 in the ELR, 6 leading alone", cluster)
    refused = produce(f"127.0.0.1:{ports[6]}", [b"c0"])
    assert refused == ["NOT_ENOUGH_REPLICAS"], refused  # below min ISR nothing more is acknowledged

    cluster.nodes[6].kill()  # the last ISR member crashes
    cluster.nodes[4].start()  # back from its crash, never eligible: it must not be elected (no unclean election)
    port4 = ports[4]
    roles.wait_until(lambda: describe(port4) == (-1, [], [5, 6], [6]),
                     "ISR empty, no leader, 5 and 6 eligible, 6 the last known leader", cluster, timeout=60)
    cluster.nodes[5].start()  # registers with the epoch of its clean shutdown: still eligible, elected from the ELR
    roles.wait_until(lambda: (describe(port4) or (None, [], [], []))[0] == 5, "5 elected from the ELR", cluster,
                     timeout=60)
    leader, isr, elr_, _ = describe(port4)
    assert 5 in isr and 6 not in isr and 5 not in elr_
    got = roles.read_partitions(ports[5], TOPIC, 1)[0]
    assert got == acked, (len(got), len(acked))

    cluster.nodes[6].start()  # back from its crash: it catches up from 5 and the ISR is whole again
    roles.wait_until(lambda: describe(port4) == (5, [4, 5, 6], [], []), "every replica in sync", cluster, timeout=60)
