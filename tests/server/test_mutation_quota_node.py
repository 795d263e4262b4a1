"""The controller mutation quota (KIP-599) on a real node, as Kafka's ControllerMutationQuotaTest has it: a client id
with ``controller_mutation_rate`` 1 (11 one-second samples: an 11-token burst) creating two topics of 12 partitions.
At CreateTopics v7 (strict) one is created and the other refused THROTTLING_QUOTA_EXCEEDED with Kafka's message and
a throttle time; librdkafka (confluent-kafka's AdminClient, an older, permissive CreateTopics) gets both created and
is told to wait (its ``throttle_cb``)."""

from __future__ import annotations

import asyncio

from confluent_kafka.admin import AdminClient, NewTopic
from harness import processes, roles

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once

AQ, DQ, CT = w.AlterClientQuotasRequest, w.DescribeClientQuotasRequest, w.CreateTopicsRequest
STRICT, PERMISSIVE = "strict-admin", "permissive-admin"


def _set_mutation_rate(port: int, client: str) -> None:
    answer = asyncio.run(request_once("127.0.0.1", port, AQ(entries=[AQ.EntryData(
        entity=[AQ.EntityData(entity_type="client-id", entity_name=client)],
        ops=[AQ.OpData(key="controller_mutation_rate", value=1.0, remove=False)])], validate_only=False), 1))
    assert [(e.error_code, e.error_message) for e in answer.entries] == [(0, None)]


def _quota_entities(port: int) -> int:
    answer = asyncio.run(request_once("127.0.0.1", port, DQ(components=[
        DQ.ComponentData(entity_type="client-id", match_type=2, match=None)], strict=False), 1))
    return len(answer.entries)


def test_create_topics_over_the_controller_mutation_rate(tmp_path):
    with processes.CombinedNode(tmp_path) as node:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
        for client in (STRICT, PERMISSIVE):
            _set_mutation_rate(node.port, client)
        roles.wait_until(lambda: _quota_entities(node.port) == 2, "both quotas in the image")

        answer = asyncio.run(request_once("127.0.0.1", node.port, CT(topics=[
            CT.CreatableTopic(name=name, num_partitions=12, replication_factor=1, assignments=[], configs=[])
            for name in ("strict-1", "strict-2")], timeout_ms=30000, validate_only=False), 7, client_id=STRICT))
        assert sorted((t.error_code, t.error_message) for t in answer.topics) == [
            (0, None), (89, "The throttling quota has been exceeded.")]
        assert 0 < answer.throttle_time_ms <= 1000, answer.throttle_time_ms  # -1 token at 1/s

        throttled: list = []
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{node.port}", "client.id": PERMISSIVE,
                             "throttle_cb": throttled.append})
        futures = admin.create_topics([NewTopic(name, 12, 1) for name in ("permissive-1", "permissive-2")])
        for future in futures.values():
            future.result(timeout=30)  # both created: a permissive quota refuses nothing
        for _ in range(50):
            if throttled:
                break
            admin.poll(0.1)
        assert throttled and throttled[0].throttle_time > 1.0, throttled  # -13 tokens at 1/s, less the time since
