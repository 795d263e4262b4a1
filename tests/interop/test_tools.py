"""``kraftwire producer-perf-test`` and ``kraftwire verifiable-producer`` against a 3-node quorum: Kafka's options,
Kafka's output formats; the verifiable producer's values come back in order from a consumer."""

from __future__ import annotations

import json
import re

from harness import processes
from harness import clients

SUMMARY = re.compile(r"^(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, "
                     r"[\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$")


def test_producer_perf_test_prints_kafkas_summary(quorum):
    out = processes.kw("producer-perf-test", "--topic", clients.TOPIC, "--num-records", "2000", "--throughput", "-1",
                 "--record-size", "10", "--producer-props", f"bootstrap.servers={quorum.bootstrap}", "acks=all",
                 timeout=120)
    last = out.stdout.strip().splitlines()[-1]
    m = SUMMARY.match(last)
    assert m and int(m.group(1)) == 2000, out.stdout


def test_verifiable_producer_json_lines(quorum):
    n = clients.RECORDS
    out = processes.kw("verifiable-producer", "--topic", clients.TOPIC, "--bootstrap-server", quorum.bootstrap,
                 "--max-messages", str(n), "--value-prefix", "7", timeout=180)
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert events[0]["name"] == "startup_complete"
    acks = [e for e in events if e["name"] == "producer_send_success"]
    assert [a["value"] for a in acks] == [f"7.{i}" for i in range(n)]
    offsets = [a["offset"] for a in acks]
    assert offsets == sorted(offsets) and len(set(offsets)) == n
    tool = [e for e in events if e["name"] == "tool_data"][-1]
    assert (tool["sent"], tool["acked"]) == (n, n)
    assert events[-2]["name"] == "shutdown_complete"

    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=quorum.servers, group_id=None, consumer_timeout_ms=2000)
    try:
        tp = TopicPartition(clients.TOPIC, 0)
        consumer.assign([tp])
        consumer.seek(tp, offsets[0])
        got: list = []
        deadline = clients.bounded(120)
        while len(got) < n and not deadline.expired():
            got.extend(m.value.decode() for m in consumer if m.offset <= offsets[-1])
    finally:
        consumer.close()
    assert got[:n] == [f"7.{i}" for i in range(n)]
