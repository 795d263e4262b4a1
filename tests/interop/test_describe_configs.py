"""DescribeConfigs (kafka-configs.sh --describe) with both admin clients through a 3-node quorum: the topic's
settings as the log keeps them, each node's own keys with where the value came from (its file or the default), the
broker key a topic key is read from, and Kafka's error for another topic."""

from __future__ import annotations

from harness import clients

TIMEOUT_S = 30
STATIC, DEFAULT = 4, 5  # ConfigSource: STATIC_BROKER_CONFIG, DEFAULT_CONFIG


def test_confluent_admin_describes_the_topic_and_each_node(quorum):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": quorum.bootstrap})
    topic = ConfigResource(ResourceType.TOPIC, clients.TOPIC)
    configs = admin.describe_configs([topic])[topic].result(TIMEOUT_S)
    assert configs["cleanup.policy"].value == "delete"
    assert configs["segment.bytes"].value == str(1 << 30) and configs["segment.bytes"].source == DEFAULT
    assert configs["max.message.bytes"].value == str(8 * 1024 * 1024)
    assert configs["min.insync.replicas"].value == "2"  # acks=all waits for a majority of the three voters
    assert all(c.is_read_only and not c.is_sensitive for c in configs.values())

    for node_id, node in quorum.cluster.nodes.items():
        broker = ConfigResource(ResourceType.BROKER, str(node_id))
        own = admin.describe_configs([broker])[broker].result(TIMEOUT_S)
        assert own["node.id"].value == str(node_id) and own["node.id"].source == STATIC
        assert own["kraftwire.metadata.log.topic"].value == clients.TOPIC and own["kraftwire.metadata.log.topic"].source == STATIC
        assert own["controller.quorum.election.timeout.ms"].source in (STATIC, DEFAULT)
        assert own["listeners"].value.endswith(f":{node.port}")

    other = ConfigResource(ResourceType.TOPIC, "no-such-topic")
    try:
        admin.describe_configs([other])[other].result(TIMEOUT_S)
        raise AssertionError("an unknown topic was described")
    except KafkaException as exc:
        assert exc.args[0].code() == 3  # UNKNOWN_TOPIC_OR_PARTITION


def test_kafka_python_admin_describes_with_synonyms(quorum):
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = KafkaAdminClient(bootstrap_servers=quorum.servers, request_timeout_ms=20000)
    try:
        got = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, clients.TOPIC, configs=None)],
                                     include_synonyms=True, config_filter="all")
        segment = got["topic"][clients.TOPIC]["segment.bytes"]
        assert str(segment["value"]) == str(1 << 30), segment
        assert "metadata.log.segment.bytes" in str(segment), segment  # the broker key it is read from
        picked = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, clients.TOPIC,
                                                        configs={"retention.ms": None})], config_filter="all")
        assert set(picked["topic"][clients.TOPIC]) == {"retention.ms"}
    finally:
        admin.close()


def test_confluent_admin_lists_topics_though_librdkafka_pads_its_metadata_request(quorum):
    """librdkafka 2.x's all-topics Metadata v12 carries three bytes after its body (librdkafka #5049); Kafka ignores
    them, and so must the node, instead of closing the connection ("Broker transport failure")."""
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": quorum.bootstrap}).list_topics(timeout=TIMEOUT_S)
    assert clients.TOPIC in md.topics and md.topics[clients.TOPIC].error is None
    assert list(md.topics[clients.TOPIC].partitions) == [0]
    assert set(md.brokers) == set(quorum.cluster.nodes)
    for node in quorum.cluster.nodes.values():
        assert "unexpected trailing bytes" not in node.stderr()
