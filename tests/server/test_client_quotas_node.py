"""Client quotas on a real node: AlterClientQuotas through the wire, DescribeClientQuotas seeing it, a producer over
its ``producer_byte_rate`` throttled as Kafka throttles it — ``throttle_time_ms`` in the answers and, as KIP-219 has
it, its connection not read meanwhile, so a client that ignores the field (this one) is held back anyway — and a
consumer over its ``consumer_byte_rate``: each answer capped at what one quota span allows, and once over, answered
without records and with a throttle time.

The rate check is count-bounded and generous: Kafka's rate lets a client send ``quota.window.num - 1`` windows' worth
at once (the rate is measured over at least that span), so after sending sixteen seconds' worth the elapsed time must
be at least what brings the average back under the quota with that allowance — a node that does not throttle sends
it all in well under a second."""

from __future__ import annotations

import asyncio
import time

from harness import processes, roles
from harness.bad_input import batch, create_topic

from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from kraftwire.replica.quotas import DEFAULT_SAMPLES
from kraftwire.server.edge.client import KafkaConnection, request_once

AQ, DQ, P = w.AlterClientQuotasRequest, w.DescribeClientQuotasRequest, w.ProduceRequest
CLIENT = "throttled-producer"
QUOTA = 64 * 1024  # bytes per second
VALUE = b"x" * (32 * 1024)
REQUESTS = 32  # 1 MiB: sixteen seconds' worth


def _set_quota(port: int, client: str = CLIENT, key: str = "producer_byte_rate", value: float = QUOTA) -> None:
    answer = asyncio.run(request_once("127.0.0.1", port, AQ(entries=[AQ.EntryData(
        entity=[AQ.EntityData(entity_type="client-id", entity_name=client)],
        ops=[AQ.OpData(key=key, value=float(value), remove=False)])], validate_only=False), 1))
    assert [(e.error_code, e.error_message) for e in answer.entries] == [(0, None)]


def _described(port: int, client: str = CLIENT):
    answer = asyncio.run(request_once("127.0.0.1", port, DQ(components=[
        DQ.ComponentData(entity_type="client-id", match_type=0, match=client)], strict=True), 1))
    return [([(e.entity_type, e.entity_name) for e in r.entity], [(v.key, v.value) for v in r.values])
            for r in answer.entries]


async def _produce_all(port: int, topic: str) -> tuple[list[int], float, int]:
    """Send the requests one after the other on one connection, ignoring throttle_time_ms; the throttle times
    answered, the seconds it took and the bytes sent."""
    conn = await KafkaConnection.open("127.0.0.1", port, client_id=CLIENT)
    throttles, sent = [], 0
    start = time.monotonic()
    try:
        for _ in range(REQUESTS):
            records = batch(VALUE)
            answer = await conn.request(P(transactional_id=None, acks=1, timeout_ms=10_000, topic_data=[
                P.TopicProduceData(name=topic, partition_data=[P.PartitionProduceData(index=0, records=records)])]),
                9, timeout=60)
            assert answer.responses[0].partition_responses[0].error_code == 0
            throttles.append(answer.throttle_time_ms)
            sent += len(records)
    finally:
        await conn.close()
    return throttles, time.monotonic() - start, sent


def test_a_producer_over_its_quota_is_throttled(tmp_path):
    with processes.CombinedNode(tmp_path) as node:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
        create_topic(node.port, "quota-t", 1)
        _set_quota(node.port)
        roles.wait_until(lambda: _described(node.port) == [([("client-id", CLIENT)], [("producer_byte_rate",
                                                                                       float(QUOTA))])],
                         "the quota in the image")
        throttles, elapsed, sent = asyncio.run(_produce_all(node.port, "quota-t"))
    assert any(t > 0 for t in throttles), throttles
    assert throttles[0] == 0  # the first request is within the allowance of one quota span
    allowance_s = DEFAULT_SAMPLES - 1
    # at most the quota over the elapsed time plus the allowance, with a fifth to spare
    assert sent <= QUOTA * (elapsed + allowance_s) * 1.2, (sent, elapsed, throttles)


CONSUMER = "throttled-consumer"
CONSUMER_QUOTA = 16 * 1024
F = w.FetchRequest


async def _fetch_until_throttled(port: int, topic: str, attempts: int) -> list[tuple[int, int]]:
    """Fetches from offset 0 on, following what comes back, until one is throttled (at most ``attempts``):
    (throttle_time_ms, record bytes) of each answer."""
    conn = await KafkaConnection.open("127.0.0.1", port, client_id=CONSUMER)
    seen, offset = [], 0
    try:
        for _ in range(attempts):
            answer = await conn.request(F(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=4 * 1024 * 1024,
                                          isolation_level=0, session_id=0, session_epoch=-1, topics=[
                F.FetchTopic(topic=topic, partitions=[F.FetchPartition(
                    partition=0, current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
                    partition_max_bytes=4 * 1024 * 1024)])], forgotten_topics_data=[], rack_id=""), 11, timeout=60)
            parts = [p for t in answer.responses for p in t.partitions]
            size = sum(len(p.records or b"") for p in parts)
            seen.append((answer.throttle_time_ms, size))
            if answer.throttle_time_ms > 0:
                break
            assert parts[0].error_code == 0
            for b in read_batches(bytes(parts[0].records or b"")):
                offset = b.last_offset + 1
    finally:
        await conn.close()
    return seen


def test_a_consumer_over_its_quota_is_capped_and_throttled(tmp_path):
    with processes.CombinedNode(tmp_path) as node:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
        create_topic(node.port, "quota-c", 1)
        _set_quota(node.port, CONSUMER, "consumer_byte_rate", CONSUMER_QUOTA)
        roles.wait_until(lambda: _described(node.port, CONSUMER) != [], "the quota in the image")
        # 640 KiB in 8 KiB batches, four times what one quota span lets a consumer take
        for _ in range(80):
            answer = asyncio.run(request_once("127.0.0.1", node.port, P(
                transactional_id=None, acks=1, timeout_ms=10_000, topic_data=[P.TopicProduceData(
                    name="quota-c", partition_data=[P.PartitionProduceData(index=0, records=batch(b"y" * 8192))])]),
                9))
            assert answer.responses[0].partition_responses[0].error_code == 0
        seen = asyncio.run(_fetch_until_throttled(node.port, "quota-c", 10))
    cap = CONSUMER_QUOTA * (DEFAULT_SAMPLES - 1)
    assert seen[0][0] == 0 and 0 < seen[0][1] <= cap, seen  # the first answer: capped at one span's worth
    assert seen[-1][0] > 0 and seen[-1][1] == 0, seen  # throttled: no records
