"""request_percentage (KIP-124) on a real node, mirrored from Kafka's RequestQuotaTest: with a tiny default
client-id request quota every client API is throttled after a few requests — ``throttle_time_ms`` in its answer,
at most one quota window (ClientRequestQuotaManager caps it) — while a client id with a large quota of its own is
never throttled (testUnthrottledClient). librdkafka (confluent-kafka) reports the throttle to its ``throttle_cb``.
Loops are bounded by request counts; nothing is timed."""

from __future__ import annotations

import asyncio

import confluent_kafka
from confluent_kafka.admin import AdminClient
from harness import processes, roles

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection, request_once

AQ, DQ = w.AlterClientQuotasRequest, w.DescribeClientQuotasRequest
UNTHROTTLED = "unthrottled-client"


def _set_request_quota(port: int, client: str | None, value: float) -> None:
    answer = asyncio.run(request_once("127.0.0.1", port, AQ(entries=[AQ.EntryData(
        entity=[AQ.EntityData(entity_type="client-id", entity_name=client)],
        ops=[AQ.OpData(key="request_percentage", value=value, remove=False)])], validate_only=False), 1,
        client_id=UNTHROTTLED))
    assert [(e.error_code, e.error_message) for e in answer.entries] == [(0, None)]


def _quota_entities(port: int) -> int:
    answer = asyncio.run(request_once("127.0.0.1", port, DQ(components=[
        DQ.ComponentData(entity_type="client-id", match_type=2, match=None)], strict=False), 1,
        client_id=UNTHROTTLED))
    return len(answer.entries)


async def _throttles(port: int, client_id: str, body, version: int, requests: int) -> list[int]:
    """``throttle_time_ms`` of up to ``requests`` answers on one connection, stopping at the first throttled one."""
    conn = await KafkaConnection.open("127.0.0.1", port, client_id=client_id)
    seen = []
    try:
        for _ in range(requests):
            answer = await conn.request(body, version, timeout=30)
            seen.append(answer.throttle_time_ms)
            if answer.throttle_time_ms > 0:
                break
    finally:
        await conn.close()
    return seen


def test_client_apis_are_throttled_by_request_percentage(tmp_path):
    """RequestQuotaTest.testResponseThrottleTime (Metadata, ApiVersions, DescribeCluster) and testUnthrottledClient."""
    with processes.CombinedNode(tmp_path) as node:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
        _set_request_quota(node.port, UNTHROTTLED, 2000.0)
        _set_request_quota(node.port, None, 0.01)
        roles.wait_until(lambda: _quota_entities(node.port) == 2, "both quotas in the image")
        metadata = w.MetadataRequest(topics=None, allow_auto_topic_creation=False)
        cluster = w.DescribeClusterRequest(include_cluster_authorized_operations=False)
        versions = w.ApiVersionsRequest(client_software_name="t", client_software_version="1")
        for body, version in ((metadata, 12), (cluster, 0), (versions, 3)):
            seen = asyncio.run(_throttles(node.port, f"throttled-{type(body).__name__}", body, version, 200))
            assert 0 < seen[-1] <= 1000, (type(body).__name__, seen)
            unthrottled = asyncio.run(_throttles(node.port, UNTHROTTLED, body, version, 20))
            assert unthrottled == [0] * 20, (type(body).__name__, unthrottled)

        throttled: list = []
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{node.port}", "client.id": "librdkafka-admin",
                             "throttle_cb": throttled.append})
        for _ in range(200):
            admin.list_topics(timeout=10)
            admin.poll(0)
            if throttled:
                break
        assert throttled and isinstance(throttled[0], confluent_kafka.ThrottleEvent), throttled
        assert 0 < throttled[0].throttle_time <= 1.0, throttled[0]
