"""Durability configured the way Kafka operators configure it: in ``server.properties`` only (issue #35).

Three combined KRaft nodes whose files say ``min.insync.replicas=2``, ``unclean.leader.election.enable=false``,
``log.retention.ms``, ``log.segment.bytes`` and ``message.max.bytes``. A topic created without configs:

* DescribeConfigs shows each of those values with source STATIC_BROKER_CONFIG and the broker keys as synonyms, as
  Kafka 4.4 does for the same files (checked against a running Kafka: the synonyms list the layers strongest first,
  ``retention.ms`` through ``log.retention.ms`` then ``log.retention.hours``'s default);
* with its follower stopped, an acks=all produce is refused with NOT_ENOUGH_REPLICAS (before the fix it succeeded:
  the broker read ``min.insync.replicas`` from the topic's own settings only, logged the key as unused, and
  acknowledged writes that a single replica held);
* ``configs --alter --entity-type brokers --entity-default --add-config min.insync.replicas=1`` takes effect on the
  live partition without a restart, as Kafka's dynamic broker configs do; deleting it restores the file's 2.
"""

from __future__ import annotations

import asyncio

from harness import processes, roles

TOPIC = "durable"
STATIC = ("min.insync.replicas=2\nunclean.leader.election.enable=false\nlog.retention.ms=7200000\n"
          "log.segment.bytes=2097152\nmessage.max.bytes=500000\nreplica.lag.time.max.ms=2000\n")
# ConfigSource
STATIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, DEFAULT_CONFIG = 4, 3, 5


def _describe_topic(port: int) -> dict[str, tuple[str, int, list[tuple[str, str, int]]]]:
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import request_once

    Q = w.DescribeConfigsRequest
    req = Q(resources=[Q.DescribeConfigsResource(resource_type=2, resource_name=TOPIC, configuration_keys=None)],
            include_synonyms=True, include_documentation=False)
    resp = asyncio.run(request_once("127.0.0.1", port, req, 4, timeout=5.0))
    (result,) = resp.results
    assert result.error_code == 0, result.error_message
    return {c.name: (c.value, c.config_source, [(s.name, s.value, s.source) for s in c.synonyms])
            for c in result.configs}


def _partition(port: int):
    md = roles.metadata(port)
    for t in md.topics:
        if t.name == TOPIC and t.error_code == 0 and t.partitions:
            p = t.partitions[0]
            return p.leader_id, sorted(p.replica_nodes), sorted(p.isr_nodes)
    return None


def _produce(bootstrap: str):
    """One acks=all record without retries: None when acknowledged, else the error's class name."""
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=0, request_timeout_ms=10000)
    try:
        p.send(TOPIC, b"v").get(timeout=15)
        return None
    except Exception as exc:  # noqa: BLE001 - the refusal is what is checked
        return type(exc).__name__
    finally:
        p.close(timeout=5)


def test_min_insync_replicas_from_server_properties_refuses_acks_all_below_it(make_roles_cluster):
    from kafka.admin import KafkaAdminClient, NewTopic

    # ELR off: with it on (the default) min.insync.replicas is cluster-level, written at bootstrap from this file
    # and not removable (tests/kafka/test_features_oracle.py), so the file's value would not show as STATIC
    cluster = make_roles_cluster(controllers=3, brokers=0, combined=True, kraft=True, extra_props=STATIC,
                                 format_args=("--feature", "eligible.leader.replicas.version=0"))
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    ports = {n.node_id: n.port_of("BROKER") for n in cluster.nodes.values()}
    roles.wait_until(lambda: all(roles.broker_ids(p) == [1, 2, 3] for p in ports.values()),
                     "three brokers Online in every image", cluster)
    bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    try:
        admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=2)])
    finally:
        admin.close()
    # every node's image, not only node 1's: the partition is created with both replicas in its ISR, so node 1 can
    # show that before the leader's own image holds the topic (the leader then answers UNKNOWN_TOPIC_OR_PARTITION)
    def in_sync_everywhere():
        seen = [_partition(p) for p in ports.values()]
        return seen[0] if seen[0] and len(seen[0][2]) == 2 and all(s == seen[0] for s in seen) else None

    leader, replicas, _ = roles.wait_until(in_sync_everywhere, "both replicas in sync in every node's image", cluster)

    configs = _describe_topic(ports[leader])
    assert configs["min.insync.replicas"] == ("2", STATIC_BROKER_CONFIG, [
        ("min.insync.replicas", "2", STATIC_BROKER_CONFIG), ("min.insync.replicas", "1", DEFAULT_CONFIG)])
    assert configs["retention.ms"] == ("7200000", STATIC_BROKER_CONFIG, [
        ("log.retention.ms", "7200000", STATIC_BROKER_CONFIG), ("log.retention.hours", "168", DEFAULT_CONFIG)])
    assert configs["segment.bytes"][:2] == ("2097152", STATIC_BROKER_CONFIG)
    assert configs["max.message.bytes"][:2] == ("500000", STATIC_BROKER_CONFIG)
    assert configs["unclean.leader.election.enable"][:2] == ("false", STATIC_BROKER_CONFIG)
    assert configs["cleanup.policy"] == ("delete", DEFAULT_CONFIG, [("log.cleanup.policy", "delete", DEFAULT_CONFIG)])
    for node in cluster.nodes.values():  # the keys are read, so no node calls them unused
        assert "min.insync.replicas" not in open(node.stderr_path, encoding="utf-8", errors="replace").read()

    assert _produce(bootstrap) is None  # both replicas in sync: acknowledged
    follower = next(r for r in replicas if r != leader)
    cluster.nodes[follower].kill()
    roles.wait_until(lambda: (lambda p: p is not None and p[2] == [leader])(_partition(ports[leader])),
                     "the ISR shrunk to the leader", cluster)
    assert _produce(f"127.0.0.1:{ports[leader]}") == "NotEnoughReplicasError"

    # a dynamic cluster-wide default takes effect on the live partition, and its removal restores the file's value
    processes.kw("configs", "--bootstrap-server", f"127.0.0.1:{ports[leader]}", "--alter", "--entity-type",
                 "brokers", "--entity-default", "--add-config", "min.insync.replicas=1")
    roles.wait_until(lambda: _describe_topic(ports[leader])["min.insync.replicas"][:2] == (
        "1", DYNAMIC_DEFAULT_BROKER_CONFIG), "the dynamic default in the leader's DescribeConfigs", cluster)
    assert _produce(f"127.0.0.1:{ports[leader]}") is None
    processes.kw("configs", "--bootstrap-server", f"127.0.0.1:{ports[leader]}", "--alter", "--entity-type",
                 "brokers", "--entity-default", "--delete-config", "min.insync.replicas")
    roles.wait_until(lambda: _describe_topic(ports[leader])["min.insync.replicas"][:2] == (
        "2", STATIC_BROKER_CONFIG), "the file's value back", cluster)
    assert _produce(f"127.0.0.1:{ports[leader]}") == "NotEnoughReplicasError"


def test_the_controllers_own_file_decides_unclean_leader_election(make_roles_cluster):
    """Three controllers and three brokers; only the controllers' files say unclean.leader.election.enable=true.
    As in Kafka, the controller resolves a topic's unclean election through its own static config: a partition whose
    only in-sync replica died is led again by the out-of-sync replica when it comes back, unless the topic itself
    says false."""
    from kafka.admin import KafkaAdminClient, NewTopic

    def controllers_only(node_id, socks) -> str:
        return "unclean.leader.election.enable=true\n" if "CONTROLLER" in socks else ""

    cluster = make_roles_cluster(controllers=3, brokers=3, kraft=True, node_props=controllers_only,
                                 extra_props="replica.lag.time.max.ms=2000\n")
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    port = cluster.nodes[6].port_of("BROKER")
    roles.wait_until(lambda: roles.broker_ids(port) == [4, 5, 6], "three brokers Online", cluster)
    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=20000)
    try:
        admin.create_topics([NewTopic("unclean", num_partitions=-1, replication_factor=-1,
                                      replica_assignments={0: [4, 5]}),
                             NewTopic("clean", num_partitions=-1, replication_factor=-1,
                                      replica_assignments={0: [4, 5]},
                                      topic_configs={"unclean.leader.election.enable": "false"})])
    finally:
        admin.close()

    def state(topic):
        for t in roles.metadata(port).topics:
            if t.name == topic and t.error_code == 0 and t.partitions:
                p = t.partitions[0]
                return p.leader_id, sorted(p.isr_nodes)
        return None

    roles.wait_until(lambda: all(state(t) == (4, [4, 5]) for t in ("unclean", "clean")), "4 leading, both in sync",
                     cluster)
    cluster.nodes[5].kill()
    roles.wait_until(lambda: all(state(t) == (4, [4]) for t in ("unclean", "clean")), "the ISRs shrunk to 4", cluster)
    cluster.nodes[4].kill()
    roles.wait_until(lambda: all(state(t) is not None and state(t)[0] == -1 for t in ("unclean", "clean")),
                     "both partitions leaderless", cluster)
    cluster.nodes[5].start()
    roles.wait_until(lambda: state("unclean") == (5, [5]), "5 elected uncleanly by the controllers' own config",
                     cluster)
    assert state("clean")[0] == -1, "the topic's own false keeps the partition leaderless"
