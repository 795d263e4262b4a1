"""Kafka 4.4's offline tools reading a running kraftwire node's files: ``kafka-storage info`` (StorageTool) on its
``server.properties`` and log directory, and ``kafka-dump-log`` (DumpLogSegments) on its segments — a topic's
records, a rolled segment's ``.index``/``.timeindex`` (which the tool checks against the log) and producer snapshot,
``__cluster_metadata`` with ``--cluster-metadata-decoder`` (Kafka's metadata records, as kraftwire's controller
wrote them), ``bootstrap.checkpoint``, and the coordinators' ``__consumer_offsets`` and ``__transaction_state``
partitions with Kafka's own decoders. Every batch must read as valid (CRC and all)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from harness import roles

from kraftwire.metadata.features import kraftwire_defaults
from kraftwire.metadata.version import DEFAULT

pytestmark = pytest.mark.interop

SEGMENT = "00000000000000000000.log"


def java_partition(key: str, partitions: int) -> int:
    """The partition of a coordinator key (Kafka: ``Utils.abs(key.hashCode()) % partitions``, where ``Utils.abs``
    takes Integer.MIN_VALUE to 0)."""
    units = key.encode("utf-16-be")  # Java's String.hashCode is over UTF-16 code units
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def dump(tools, *args: str) -> tuple[list[str], list[str]]:
    """DumpLogSegments' batch lines and record lines; every batch valid."""
    lines = tools.ok("kafka-dump-log", *args).lines()
    batches = [line for line in lines if line.startswith("baseOffset:")]
    records = [line for line in lines if line.startswith("| ")]
    assert batches and all("isvalid: true" in b for b in batches), lines[:20]
    return batches, records


def payloads(records: list[str]) -> list[dict]:
    """The decoded JSON payloads (``payload: {...}``) of DumpLogSegments' record lines."""
    return [json.loads(r.split(" payload: ", 1)[1]) for r in records if " payload: {" in r]


def test_storage_info_reads_the_node_directory(tools, node):
    with open(os.path.join(node.log_dir, "meta.properties"), encoding="utf-8") as f:
        meta = dict(line.strip().split("=", 1) for line in f if "=" in line and not line.startswith("#"))
    out = tools.ok("kafka-storage", "info", "-c", node.config).lines()
    assert out == ["Found log directory:", f"  {node.log_dir}", "",
                   f"Found metadata: {{cluster.id={node.cluster.cluster_id}, directory.id={meta['directory.id']}, "
                   "node.id=1, version=1}", ""]


def test_dump_log_reads_a_topic_segment(tools, node):
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", "dump-topic",
             "--partitions", "1")
    lines = [f"key-{i}:payload-{i}" for i in range(20)]
    tools.ok("kafka-console-producer", "--bootstrap-server", node.bootstrap, "--topic", "dump-topic",
             "--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
             stdin="\n".join(lines) + "\n")
    path = os.path.join(node.partition_dir("dump-topic"), SEGMENT)
    batches, records = dump(tools, "--files", path, "--print-data-log")
    got = [re.search(r"offset: (\d+) .* key: (\S+) payload: (\S+)$", r).groups() for r in records]
    assert got == [(str(i), f"key-{i}", f"payload-{i}") for i in range(20)]
    # batch after batch, each starting where the previous one ended, at the file positions the tool walked
    starts = [int(re.search(r"^baseOffset: (\d+) lastOffset: (\d+)", b).group(1)) for b in batches]
    ends = [int(re.search(r"^baseOffset: (\d+) lastOffset: (\d+)", b).group(2)) for b in batches]
    assert starts == [0] + [e + 1 for e in ends[:-1]] and ends[-1] == 19
    sizes = [int(re.search(r" size: (\d+) ", b).group(1)) for b in batches]
    assert sum(sizes) == os.path.getsize(path)
    assert all("producerId: " in b and "magic: 2" in b for b in batches)


def test_dump_log_checks_a_rolled_segment_indexes_and_reads_its_producer_snapshot(tools, node):
    topic = "dump-rolled"
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", topic, "--partitions", "1",
             "--config", "segment.ms=300")
    # small batches (so that the sparse index has entries every 4096 bytes), then a write past segment.ms rolls
    tools.ok("kafka-producer-perf-test", "--topic", topic, "--num-records", "300", "--record-size", "100",
             "--throughput", "-1", "--command-property", f"bootstrap.servers={node.bootstrap}", "acks=all",
             "batch.size=1000")
    time.sleep(0.5)
    tools.ok("kafka-console-producer", "--bootstrap-server", node.bootstrap, "--topic", topic, stdin="roll\n")
    directory = node.partition_dir(topic)
    roles.wait_until(lambda: os.path.exists(os.path.join(directory, "00000000000000000300.log")), "the roll at 300")
    index = tools.ok("kafka-dump-log", "--files", os.path.join(directory, "00000000000000000000.index")).lines()
    entries = [tuple(map(int, re.match(r"offset: (\d+) position: (\d+)$", line).groups()))
               for line in index if line.startswith("offset:")]
    # DumpLogSegments checks each entry against the log and prints any mismatch; 300 records of ~117 bytes
    assert not [line for line in index if "ismatch" in line] and len(entries) >= 5
    assert [o for o, _ in entries] == sorted(o for o, _ in entries) and all(0 < o < 300 for o, _ in entries)
    batches, _ = dump(tools, "--files", os.path.join(directory, SEGMENT))
    positions = {int(re.search(r" position: (\d+) ", b).group(1)) for b in batches}
    assert {p for _, p in entries} <= positions  # each entry points at a batch
    sane = tools.ok("kafka-dump-log", "--files", os.path.join(directory, "00000000000000000000.index"),
                    "--index-sanity-check").lines()
    assert f"{directory}/00000000000000000000.index passed sanity check." in sane
    times = tools.ok("kafka-dump-log", "--files", os.path.join(directory, "00000000000000000000.timeindex")).lines()
    assert [line for line in times if line.startswith("timestamp:")] and not [
        line for line in times if "ismatch" in line or "not matching" in line]

    snapshot = tools.ok("kafka-dump-log", "--files", os.path.join(directory, "00000000000000000300.snapshot")).lines()
    [producer] = [line for line in snapshot if line.startswith("producerId:")]
    assert re.search(r"producerEpoch: 0 .* firstSequence: \d+ lastSequence: 299 lastOffset: 299 ", producer), producer


def test_dump_log_decodes_the_cluster_metadata_log(tools, node):
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", "dump-metadata",
             "--partitions", "2", "--config", "retention.ms=555000")
    topic_id = tools.described(node.bootstrap, "dump-metadata")[0].split("\t")[1].split(": ")[1]

    def decoded() -> list[dict]:
        _, records = dump(tools, "--files", os.path.join(node.log_dir, "__cluster_metadata-0", SEGMENT),
                          "--cluster-metadata-decoder")
        assert any("LeaderChange: {" in r for r in records)  # the control records decode too
        return payloads(records)

    def of(kind: str, records) -> list[dict]:
        return [r["data"] for r in records if r["type"] == kind]

    records = roles.wait_until(lambda: (lambda rs: rs if of("PARTITION_RECORD", rs) and any(
        t["name"] == "dump-metadata" for t in of("TOPIC_RECORD", rs)) else None)(decoded()), "the topic's records")
    assert {"name": "metadata.version", "featureLevel": DEFAULT.level} in of("FEATURE_LEVEL_RECORD", records)
    [broker] = of("REGISTER_BROKER_RECORD", records)
    assert (broker["brokerId"], [e["name"] for e in broker["endPoints"]]) == (1, ["BROKER"])
    assert of("TOPIC_RECORD", records).count({"name": "dump-metadata", "topicId": topic_id}) == 1
    parts = [p for p in of("PARTITION_RECORD", records) if p["topicId"] == topic_id]
    assert sorted(p["partitionId"] for p in parts) == [0, 1]
    assert all((p["replicas"], p["isr"], p["leader"]) == ([1], [1], 1) for p in parts)
    assert {"resourceType": 2, "resourceName": "dump-metadata", "name": "retention.ms", "value": "555000"} in of(
        "CONFIG_RECORD", records)

    _, boot = dump(tools, "--files", os.path.join(node.log_dir, "bootstrap.checkpoint"), "--cluster-metadata-decoder")
    assert any("SnapshotHeader {" in r for r in boot) and any("SnapshotFooter {" in r for r in boot)
    # what `storage format` writes by default: the default level and its features (kraftwire.metadata.features)
    assert of("FEATURE_LEVEL_RECORD", payloads(boot)) == [{"name": "metadata.version", "featureLevel": DEFAULT.level},
                                                          *({"name": name, "featureLevel": level} for name, level in
                                                            sorted(kraftwire_defaults(DEFAULT)[0].items()) if level)]


def test_dump_log_decodes_the_coordinators_partitions(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    tools.ok("kafka-topics", *b, "--create", "--topic", "dump-coordinated", "--partitions", "1")
    tools.ok("kafka-console-producer", *b, "--topic", "dump-coordinated", stdin="a\nb\nc\n")
    tools.ok("kafka-console-consumer", *b, "--topic", "dump-coordinated", "--group", "dump-group", "--from-beginning",
             "--max-messages", "3")
    tools.ok("kafka-clients", "transactions", node.bootstrap, "dump-coordinated", "dump-txn")

    offsets_dir = os.path.join(node.log_dir, f"__consumer_offsets-{java_partition('dump-group', 3)}")
    _, records = dump(tools, "--files", os.path.join(offsets_dir, SEGMENT), "--offsets-decoder")
    keyed = [(json.loads(r.split(" key: ", 1)[1].split(" payload: ")[0]), r.split(" payload: ", 1)[1])
             for r in records if " key: " in r]
    commit_key = {"type": "1", "data": {"group": "dump-group", "topic": "dump-coordinated", "partition": 0}}
    commits = [json.loads(v)["data"]["offset"] for k, v in keyed if k == commit_key]
    assert commits and commits[-1] == 3
    groups = [json.loads(v)["data"] for k, v in keyed if k == {"type": "2", "data": {"group": "dump-group"}}]
    assert groups and groups[0]["protocolType"] == "consumer" and groups[0]["members"][0]["clientId"] == \
        "console-consumer"

    txn_dir = os.path.join(node.log_dir, f"__transaction_state-{java_partition('dump-txn', 3)}")
    _, records = dump(tools, "--files", os.path.join(txn_dir, SEGMENT), "--transaction-log-decoder")
    states = [json.loads(r.split(" payload: ", 1)[1])["data"]["transactionStatus"] for r in records
              if '"transactionalId":"dump-txn"' in r]
    # three transactions (commit, abort, commit), each through its prepare and complete state
    assert [s for s in states if s.startswith(("Prepare", "Complete"))] == [
        "PrepareCommit", "CompleteCommit", "PrepareAbort", "CompleteAbort", "PrepareCommit", "CompleteCommit"]


def test_dump_log_prints_a_txnindex_and_a_producer_snapshot_as_kafka(tools, tmp_path):
    """kraftwire's dump-log and Kafka's DumpLogSegments on the same ``.txnindex`` (two aborted transactions) and
    producer snapshot (a producer with a batch, one whose sequence wrapped, one with an
    open transaction, one with only a marker since its epoch began): the same lines."""
    from kraftwire.replica import producer_snapshot
    from kraftwire.replica.producers import ProducerEntry, ProducerTable
    from kraftwire.replica.transactions import AbortedTxn, encode_txn_index

    txn_index = tmp_path / "00000000000000000100.txnindex"
    txn_index.write_bytes(encode_txn_index([AbortedTxn(7000, 100, 130, 100), AbortedTxn(7001, 120, 140, 131)]))
    table = ProducerTable()
    table.apply(5, 3, 0, 10, 200, 209, timestamp=1_700_000_000_000)
    table.apply(6, 0, (1 << 31) - 2, 4, 210, 213, timestamp=1_700_000_000_001)  # sequences 2^31-2 .. 1
    table.apply(8, 2, 40, 1, 214, 214, timestamp=1_700_000_000_002)
    table[8].coordinator_epoch = 4
    table[9] = ProducerEntry(1, timestamp=1_700_000_000_003, coordinator_epoch=5, marker_offset=215)
    snapshot = tmp_path / "00000000000000000216.snapshot"
    snapshot.write_bytes(producer_snapshot.encode(table, {8: 214}))

    for path in (txn_index, snapshot):
        kafka = tools.ok("kafka-dump-log", "--files", str(path)).out.splitlines()
        ours = subprocess.run([sys.executable, "-m", "kraftwire", "dump-log", "--files", str(path)],
                              capture_output=True, text=True, check=True).stdout.splitlines()
        assert len(kafka) > 2 and ours == kafka, (path.name, kafka, ours)
