"""Group administration through a 3-node quorum with the admin clients people use (what kafka-consumer-groups.sh
does): list, describe, delete a group's offsets, delete a group — with Kafka's refusals for a group that has
members (NON_EMPTY_GROUP), a topic a member subscribes to (GROUP_SUBSCRIBED_TO_TOPIC) and an unknown group
(GROUP_ID_NOT_FOUND)."""

from __future__ import annotations

import time

from kraftwire.coordinator.group.shard import subscription_topics as subscribed_topics

from harness import clients

TIMEOUT_S = 60


def _produce(quorum, tag: str, n: int = 200) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=quorum.servers, request_timeout_ms=10000, max_block_ms=10000)
    try:
        for i in range(n):
            producer.send("clients", value=f"{tag}-{i:04d}".encode())
        producer.flush(TIMEOUT_S)
    finally:
        producer.close(10)


def _errors(result) -> dict:
    """kafka-python 3 answers {key: error name or 'OK'} (or an exception type); normalise to names."""
    return {k: (v if isinstance(v, str) else getattr(v, "__name__", type(v).__name__)) for k, v in result.items()}


def test_kafka_python_admin_lists_describes_and_deletes_a_group(quorum):
    from kafka import KafkaAdminClient, KafkaConsumer, OffsetAndMetadata, TopicPartition

    _produce(quorum, "adm")
    consumer = KafkaConsumer(clients.TOPIC, bootstrap_servers=quorum.servers, group_id="admin-kp",
                             client_id="adm-consumer", auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=3000, request_timeout_ms=20000, session_timeout_ms=10000,
                             heartbeat_interval_ms=1000)
    admin = KafkaAdminClient(bootstrap_servers=quorum.servers, request_timeout_ms=20000)
    tp = TopicPartition(clients.TOPIC, 0)
    try:
        seen = 0
        deadline = clients.bounded(TIMEOUT_S)
        while seen < 50 and not deadline.expired():
            for _ in consumer:
                seen += 1
                if seen == 50:
                    break
        consumer.commit({tp: OffsetAndMetadata(50, "", -1)})

        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert listed["admin-kp"]["group_state"] == "Stable" and listed["admin-kp"]["protocol_type"] == "consumer"
        described = admin.describe_groups(["admin-kp"])["admin-kp"]
        assert described["group_state"] == "Stable" and described["protocol_data"] == "range"
        [member] = described["members"]
        assert member["client_id"] == "adm-consumer"
        assert member["member_metadata"]["topics"] == [clients.TOPIC]
        assert member["member_assignment"]["assigned_partitions"] == [{"topic": clients.TOPIC, "partitions": [0]}]

        # a group with a member cannot be deleted, nor the offsets of a topic it subscribes to
        assert _errors(admin.delete_groups(["admin-kp"])) == {"admin-kp": "NonEmptyGroupError"}
        refused = admin.delete_group_offsets("admin-kp", [tp])
        assert "GroupSubscribedToTopic" in str(refused), refused
        assert admin.list_group_offsets({"admin-kp": None})["admin-kp"][tp].offset == 50
    finally:
        consumer.close(autocommit=False)
    try:
        described = admin.describe_groups(["admin-kp"])["admin-kp"]
        assert described["group_state"] == "Empty" and described["members"] == []
        admin.delete_group_offsets("admin-kp", [tp])
        assert admin.list_group_offsets({"admin-kp": None})["admin-kp"] == {}
        # an empty group without offsets still exists (Kafka removes it at its next offset expiration pass) until
        # it is deleted
        assert {g["group_id"]: g["group_state"] for g in admin.list_groups()}.get("admin-kp") == "Empty"
        assert _errors(admin.delete_groups(["admin-kp", "never-was"])) == {"admin-kp": "OK",
                                                                         "never-was": "GroupIdNotFoundError"}
        assert "admin-kp" not in {g["group_id"] for g in admin.list_groups()}
        assert _errors(admin.delete_groups(["admin-kp"])) == {"admin-kp": "GroupIdNotFoundError"}
        assert admin.describe_groups(["never-was"])["never-was"]["group_state"] == "Dead"
    finally:
        admin.close()


def test_confluent_admin_lists_describes_and_deletes_a_group(quorum):
    from confluent_kafka import Consumer, ConsumerGroupState, KafkaException
    from confluent_kafka.admin import AdminClient

    _produce(quorum, "cadm")
    consumer = Consumer({"bootstrap.servers": quorum.bootstrap, "group.id": "admin-ck", "client.id": "ck-consumer",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    admin = AdminClient({"bootstrap.servers": quorum.bootstrap})
    consumer.subscribe([clients.TOPIC])
    got = 0
    deadline = time.monotonic() + TIMEOUT_S
    while got < 20 and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and not msg.error():
            got += 1
    consumer.commit(asynchronous=False)
    try:
        listed = admin.list_consumer_groups().result(TIMEOUT_S)
        assert not listed.errors
        assert {g.group_id: g.state for g in listed.valid}["admin-ck"] == ConsumerGroupState.STABLE
        desc = admin.describe_consumer_groups(["admin-ck"])["admin-ck"].result(TIMEOUT_S)
        assert desc.state == ConsumerGroupState.STABLE and desc.partition_assignor == "range"
        [member] = desc.members
        assert member.client_id == "ck-consumer"
        assert [(p.topic, p.partition) for p in member.assignment.topic_partitions] == [(clients.TOPIC, 0)]
        error = admin.delete_consumer_groups(["admin-ck"])["admin-ck"].exception(TIMEOUT_S)
        assert error is not None and "NON_EMPTY_GROUP" in str(error)
    finally:
        consumer.close()
    assert admin.delete_consumer_groups(["admin-ck"])["admin-ck"].result(TIMEOUT_S) is None
    listed = admin.list_consumer_groups().result(TIMEOUT_S)
    assert "admin-ck" not in {g.group_id for g in listed.valid}
    try:
        admin.delete_consumer_groups(["admin-ck"])["admin-ck"].result(TIMEOUT_S)
        raise AssertionError("deleting a deleted group succeeded")
    except KafkaException as exc:
        assert "GROUP_ID_NOT_FOUND" in str(exc)


def test_subscriptions_are_read_from_the_consumer_protocol_metadata():
    # version 1, topics ["a", "bb"], then user data: what every Java-protocol consumer sends
    metadata = b"\x00\x01" + b"\x00\x00\x00\x02" + b"\x00\x01a" + b"\x00\x02bb" + b"\xff\xff\xff\xff"
    assert subscribed_topics(metadata) == {"a", "bb"}
    assert subscribed_topics(b"\x00\x01\x00\x00\x00\x05\x00\x01a") is None  # truncated: unreadable
    assert subscribed_topics(b"") is None


def test_a_static_member_restarts_without_a_rebalance(quorum):
    """KIP-345 with librdkafka's group.instance.id: the group leader and a second static member share the topic's
    one partition; the second restarts within its session timeout (librdkafka sends no LeaveGroup for a static
    member) and gets its place back without a rebalance — the leader sees no revocation — while the old member id
    is fenced."""
    from confluent_kafka import Consumer
    from kafka import KafkaAdminClient

    events: dict[str, list] = {"a": [], "b": []}

    def consumer(name: str) -> Consumer:
        c = Consumer({"bootstrap.servers": quorum.bootstrap, "group.id": "static-g", "group.instance.id": name,
                      "client.id": name, "session.timeout.ms": 30000, "auto.offset.reset": "earliest",
                      "enable.auto.commit": False})
        c.subscribe([clients.TOPIC], on_assign=lambda _c, parts: events[name].append(("assign", len(parts))),
                    on_revoke=lambda _c, parts: events[name].append(("revoke", len(parts))))
        return c

    def pump(consumers, until, seconds=TIMEOUT_S):
        deadline = time.monotonic() + seconds
        while not until() and time.monotonic() < deadline:
            for c in consumers:
                c.poll(0.1)
        assert until(), events

    admin = KafkaAdminClient(bootstrap_servers=quorum.servers, request_timeout_ms=20000)
    a = consumer("a")
    pump([a], lambda: events["a"] == [("assign", 1)])  # alone: the leader, holding the partition
    b = consumer("b")
    pump([a, b], lambda: events["b"] and events["b"][-1][0] == "assign" and events["a"][-1][0] == "assign"
         and len(events["a"]) >= 3)
    # after the rebalance for b: a revoked and was assigned again; one of them holds the partition
    held = {n: events[n][-1][1] for n in "ab"}
    assert sorted(held.values()) == [0, 1], events
    before = admin.describe_groups(["static-g"])["static-g"]
    old_b = next(m["member_id"] for m in before["members"] if m["group_instance_id"] == "b")
    b.close()  # static: no LeaveGroup, b keeps its place until its session timeout
    seen_a = list(events["a"])
    events["b"] = []
    b2 = consumer("b")
    try:
        pump([a, b2], lambda: events["b"] == [("assign", held["b"])])
        for _ in range(20):  # a keeps polling: a rebalance would revoke its assignment
            a.poll(0.1)
        assert events["a"] == seen_a, events
        after = admin.describe_groups(["static-g"])["static-g"]
        assert after["group_state"] == "Stable"
        ids = {m["group_instance_id"]: m["member_id"] for m in after["members"]}
        assert set(ids) == {"a", "b"} and ids["b"] != old_b
    finally:
        b2.close()
        a.close()
        admin.close()
