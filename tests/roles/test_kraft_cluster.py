"""KRaft nodes as real processes (``server-start``): three controllers and two brokers. Topics are created,
described, grown and deleted with kafka-python's and librdkafka's admin clients through the brokers (which forward
to the active controller); a SIGKILL of the active controller leaves every topic whole and a new one answers; an
idempotent producer with acks=all loses and repeats nothing when a partition leader is SIGKILLed under its load; a
broker stopped with SIGTERM hands its leaderships to the other broker first."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

from harness import roles


def _leaders(port: int, topic: str):
    md = roles.metadata(port)
    for t in md.topics:
        if t.name == topic and t.error_code == 0:
            return {p.partition_index: (p.leader_id, sorted(p.replica_nodes), sorted(p.isr_nodes))
                    for p in t.partitions}
    return None


def test_topics_through_the_brokers_survive_a_controller_kill(make_roles_cluster):
    from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic
    from confluent_kafka.admin import AdminClient, NewTopic as CNewTopic

    cluster = make_roles_cluster(controllers=3, brokers=2, kraft=True)
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    b4, b5 = (n.port_of("BROKER") for n in cluster.brokers)
    roles.wait_until(lambda: roles.broker_ids(b4) == [4, 5] and roles.broker_ids(b5) == [4, 5],
                     "both brokers Online in both brokers' images", cluster)

    admin = KafkaAdminClient(bootstrap_servers=[f"127.0.0.1:{b4}"], request_timeout_ms=20000)
    try:
        admin.create_topics([NewTopic("orders", num_partitions=6, replication_factor=2)])
        # answered once committed; each broker's image follows the quorum a moment later (as with Kafka)
        roles.wait_until(lambda: "orders" in admin.list_topics(), "orders listed", cluster)
        [desc] = admin.describe_topics(["orders"])
        assert desc["error_code"] == 0 and len(desc["partitions"]) == 6
        assert all(sorted(p["replica_nodes"]) == [4, 5] and p["leader_id"] in (4, 5) for p in desc["partitions"])
        # the striped placer spreads leaders over both brokers
        assert {p["leader_id"] for p in desc["partitions"]} == {4, 5}
        admin.create_partitions({"orders": NewPartitions(total_count=8)})
        roles.wait_until(lambda: (lambda ls: ls is not None and len(ls) == 8)(_leaders(b5, "orders")),
                         "orders grown to 8 partitions in broker 5's image", cluster)
    finally:
        admin.close()

    confluent = AdminClient({"bootstrap.servers": f"127.0.0.1:{b5}"})
    futures = confluent.create_topics([CNewTopic("payments", num_partitions=2, replication_factor=1)],
                                      operation_timeout=20)
    futures["payments"].result(30)
    roles.wait_until(lambda: "payments" in confluent.list_topics(timeout=20).topics, "payments listed", cluster)

    # SIGKILL the active controller in the middle of a burst of CreateTopics: a new one is elected, every topic
    # exists whole or not at all, and creation works again
    burst = [f"burst-{i:02d}" for i in range(40)]
    outcomes = {}

    def create_burst():
        from kraftwire.protocol import messages as w
        from kraftwire.server.edge.client import request_once

        CT = w.CreateTopicsRequest
        for name in burst:
            body = CT(topics=[CT.CreatableTopic(name=name, num_partitions=4, replication_factor=1, assignments=[],
                                                configs=[])], timeout_ms=5000, validate_only=False)
            try:
                outcomes[name] = asyncio.run(request_once("127.0.0.1", b4, body, 7, timeout=10)).topics[0].error_code
            except Exception as exc:  # noqa: BLE001 - a request cut off by the kill
                outcomes[name] = repr(exc)

    creator = threading.Thread(target=create_burst)
    creator.start()
    roles.wait_until(lambda: len(outcomes) >= 10, "the burst under way", cluster)
    leader = cluster.wait_for_leader().leader_id
    cluster.nodes[leader].proc.send_signal(signal.SIGKILL)
    cluster.nodes[leader].proc.wait(10)
    creator.join(120)
    assert not creator.is_alive()
    cluster.wait_for_leader(exclude=(leader,))
    assert any(code == 0 for code in outcomes.values())
    after = confluent.create_topics([CNewTopic("after-kill", num_partitions=3, replication_factor=2)],
                                    operation_timeout=20)
    after["after-kill"].result(60)
    for port in (b4, b5):
        roles.wait_until(lambda: (lambda ls: ls is not None and len(ls) == 3)(_leaders(port, "after-kill")),
                         f"after-kill in the image of the broker on {port}", cluster)
        assert len(_leaders(port, "orders")) == 8 and len(_leaders(port, "payments")) == 2
        for name in burst:
            parts = _leaders(port, name)
            assert parts is None or sorted(parts) == [0, 1, 2, 3], (name, parts)  # whole or not at all
            if outcomes[name] == 0:
                assert parts is not None, name  # acknowledged: committed, never lost

    deleted = confluent.delete_topics(["payments"], operation_timeout=20)
    deleted["payments"].result(30)
    roles.wait_until(lambda: _leaders(b4, "payments") is None, "payments deleted", cluster)

    _acks_all_survive_a_leader_kill(cluster, b4, b5)

    # SIGTERM broker 4: controlled shutdown moves its leaderships to broker 5 before it stops
    cluster.brokers[0].proc.send_signal(signal.SIGTERM)
    assert cluster.brokers[0].proc.wait(30) == 0
    leaders = _leaders(b5, "orders")
    assert leaders is not None and {leader for leader, _, _ in leaders.values()} == {5}, leaders
    assert all(isr == [5] for _, _, isr in leaders.values()), leaders
    assert roles.broker_ids(b5) == [5]

    # what the controllers' log holds, as Kafka's tools show it
    from harness import processes

    alive = next(n for n in cluster.controllers if n.running)
    partition_dir = os.path.join(cluster.base, f"kraft-logs-{alive.node_id}", "__cluster_metadata-0")
    shell = processes.kw("metadata-shell", "--snapshot", partition_dir, "ls", "/image/cluster/brokers").stdout
    assert shell.split() == ["4", "5"]
    topics = processes.kw("metadata-shell", "--snapshot", partition_dir, "ls", "/image/topics/byName").stdout.split()
    assert "orders" in topics and "payments" not in topics
    segment = sorted(f for f in os.listdir(partition_dir) if f.endswith(".log"))[0]
    dump = processes.kw("dump-log", "--cluster-metadata-decoder", "--files",
                        os.path.join(partition_dir, segment)).stdout
    for kind in ("REGISTER_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD", "PARTITION_CHANGE_RECORD",
                 "REMOVE_TOPIC_RECORD"):
        assert kind in dump, kind

    # kafka-cluster.sh: the cluster id, and unregistering the stopped broker
    assert processes.kw("cluster", "--bootstrap-server", f"localhost:{b5}", "cluster-id").stdout == \
        f"Cluster ID: {cluster.cluster_id}\n"
    gone = processes.kw("cluster", "--bootstrap-server", f"localhost:{b5}", "unregister", "--id", "4")
    assert gone.stdout == "Broker 4 is no longer registered.\n"
    missing = processes.kw("cluster", "--bootstrap-server", f"localhost:{b5}", "unregister", "--id", "4", check=False)
    assert missing.returncode == 1 and "Broker ID 4 is not currently registered" in missing.stderr
    roles.wait_until(lambda: processes.kw("metadata-shell", "--snapshot", partition_dir, "ls",
                                          "/image/cluster/brokers").stdout.split() == ["5"],
                     "broker 4 unregistered in the controller's log", cluster)


def _acks_all_survive_a_leader_kill(cluster, b4: int, b5: int, total: int = 3000) -> None:
    """confluent-kafka, idempotent, acks=all, into the 8 partitions (RF 2) of ``orders`` while broker 4 is SIGKILLed:
    every acknowledged record is read back from broker 5 exactly once, in the order acknowledged per partition."""
    leaders = _leaders(b5, "orders")
    assert {leader for leader, _, _ in leaders.values()} == {4, 5}, leaders
    # SIGKILL the leader of half the partitions, records in flight
    acked = roles.produce_through_a_kill(f"127.0.0.1:{b4},127.0.0.1:{b5}", "orders", cluster.brokers[0], total)
    roles.wait_until(lambda: {leader for leader, _, _ in _leaders(b5, "orders").values()} == {5},
                     "broker 5 leads every partition of orders", cluster)
    seen = roles.read_partitions(b5, "orders", 8)
    for p, records in acked.items():
        values = [v for _, v in seen.get(p, [])]
        assert len(values) == len(set(values)), f"partition {p} holds a record twice"
        assert [v for _, v in sorted(records)] == [v for v in values if v in {x for _, x in records}], p
        assert sorted(records) == [(o, v) for o, v in seen[p] if (o, v) in set(records)], p
    # broker 4 comes back as a follower of what broker 5 now leads
    cluster.brokers[0].start()
    roles.wait_until(lambda: roles.broker_ids(b5) == [4, 5], "broker 4 back", cluster)
