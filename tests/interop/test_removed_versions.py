"""The versions Kafka 4.0 removed are not served (kraftwire.protocol.served), so a client must negotiate up to the
ones left: kafka-python's admin (which still knows CreateTopics v0-1, DeleteTopics v0 and DescribeConfigs v0) creates,
describes and deletes a topic on a kraftwire node, picking the versions from its ApiVersions answer."""

from __future__ import annotations

import time

from harness.processes import CombinedNode


def test_kafka_python_admin_negotiates_above_the_removed_versions(tmp_path):
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

    with CombinedNode(tmp_path, "offsets.topic.replication.factor=1\n") as node:
        deadline = time.monotonic() + 60
        while True:  # bounded: the node is formatted and starting
            try:
                admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{node.port}", request_timeout_ms=20000)
                break
            except Exception:
                assert time.monotonic() < deadline, "no kraftwire node after 60 s"
                time.sleep(0.5)
        try:
            admin.create_topics([NewTopic("negotiated", 2, 1, topic_configs={"retention.ms": "1000"})])
            got = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "negotiated",
                                                         configs={"retention.ms": None})])
            assert "1000" in str(got), got
            assert "negotiated" in admin.list_topics()
            admin.delete_topics(["negotiated"])
        finally:
            admin.close()
