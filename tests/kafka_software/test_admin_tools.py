"""Kafka 4.4's admin tools, run as Kafka ships them (their main classes on Kafka's classpath), against a kraftwire
node: what each prints is parsed and checked against what the node holds — kafka-topics, kafka-configs,
kafka-features, kafka-metadata-quorum, kafka-get-offsets, kafka-delete-records, kafka-log-dirs and
kafka-transactions. Where a message or a line is checked whole, it is the one Kafka 4.4 prints for the same
command against Kafka itself (compared by running both)."""

from __future__ import annotations

import json
import os

import pytest

from harness import roles

pytestmark = pytest.mark.interop


def fields(line: str) -> dict[str, str]:
    """``Key: value`` pairs of one tab-separated line of kafka-topics --describe."""
    return {k.strip(): v.strip() for k, _, v in (part.partition(":") for part in line.strip().split("\t") if part)}


def describe_topic(tools, node, topic: str) -> tuple[dict, list[dict]]:
    lines = tools.described(node.bootstrap, topic)
    return fields(lines[0]), [fields(line) for line in lines[1:]]


def listed(tools, node) -> set[str]:
    return set(tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--list").lines())


def table(result) -> list[dict[str, str]]:
    """A whitespace-aligned table (kafka-consumer-groups, kafka-transactions): rows as {column: value}."""
    rows = [line.split() for line in result.out.splitlines() if line.strip()]
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def settles(read, expected, what: str):
    """``read()`` until it returns ``expected`` (10 s at most), then asserts it does: a broker describes from its
    metadata image, which follows the controller's answer to a change by a moment (in Kafka as in kraftwire)."""
    seen = []
    try:
        roles.wait_until(lambda: seen.append(read()) or seen[-1] == expected, what, timeout=10)
    except AssertionError:
        pass
    assert seen[-1] == expected


def produce(tools, node, topic: str, n: int) -> list[dict]:
    """``n`` records from Kafka's idempotent producer (tests/kafka/KafkaClients.java): one {value, partition,
    offset} per record."""
    return tools.ok("kafka-clients", "produce", node.bootstrap, topic, str(n)).json_lines()


def test_kafka_topics_create_describe_alter_delete_list(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    created = tools.ok("kafka-topics", *b, "--create", "--topic", "tools-topic", "--partitions", "3",
                       "--replication-factor", "1", "--config", "retention.ms=100000")
    assert created.out == "Created topic tools-topic.\n"
    head, parts = describe_topic(tools, node, "tools-topic")
    # with eligible leader replicas (on by default, as in Kafka 4.4) min.insync.replicas is a cluster-level config,
    # which kafka-topics lists first, as it does against Kafka 4.4
    assert (head["Topic"], head["PartitionCount"], head["ReplicationFactor"], head["Configs"]) == (
        "tools-topic", "3", "1", "min.insync.replicas=1,retention.ms=100000")
    assert len(head["TopicId"]) == 22  # a base64 uuid
    assert [(p["Partition"], p["Leader"], p["Replicas"], p["Isr"]) for p in parts] == [
        (str(i), "1", "1", "1") for i in range(3)]

    assert tools.ok("kafka-topics", *b, "--alter", "--topic", "tools-topic", "--partitions", "5").out == ""
    head, parts = roles.wait_until(lambda: (lambda d: d if d[0]["PartitionCount"] == "5" else None)(
        describe_topic(tools, node, "tools-topic")), "five partitions described")
    assert [(p["Partition"], p["Leader"]) for p in parts] == [(str(i), "1") for i in range(5)]

    again = tools.run("kafka-topics", *b, "--create", "--topic", "tools-topic", "--partitions", "1")
    assert (again.exit, again.out) == (1, "Error while executing topic command : Topic 'tools-topic' already exists.\n")
    too_many = tools.run("kafka-topics", *b, "--create", "--topic", "tools-rf3", "--replication-factor", "3")
    assert (too_many.exit, too_many.out) == (
        1, "Error while executing topic command : Unable to replicate the partition 3 time(s): The target replication "
           "factor of 3 cannot be reached because only 1 broker(s) are registered or some brokers have all their log "
           "directories cordoned.\n")
    missing = tools.run("kafka-topics", *b, "--describe", "--topic", "tools-nope")
    assert (missing.exit, missing.out) == (
        1, "Error while executing topic command : Topic 'tools-nope' does not exist as expected\n")

    assert "tools-topic" in listed(tools, node) and "tools-rf3" not in listed(tools, node)
    assert tools.ok("kafka-topics", *b, "--delete", "--topic", "tools-topic").out == ""
    roles.wait_until(lambda: "tools-topic" not in listed(tools, node), "tools-topic gone from --list")
    roles.wait_until(lambda: not os.path.exists(node.partition_dir("tools-topic")), "tools-topic's directories gone")


def test_kafka_configs_for_a_topic_a_broker_and_the_broker_default(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    tools.ok("kafka-topics", *b, "--create", "--topic", "configs-topic", "--partitions", "1")
    topic = ("--entity-type", "topics", "--entity-name", "configs-topic")
    assert tools.ok("kafka-configs", *b, "--describe", *topic).lines() == [
        "Dynamic configs for topic configs-topic are:"]
    assert tools.ok("kafka-configs", *b, "--alter", *topic, "--add-config",
                    "retention.ms=12345,cleanup.policy=[compact,delete]").out == \
        "Completed updating config for topic configs-topic.\n"

    def described(*entity) -> list[str]:
        return tools.ok("kafka-configs", *b, "--describe", *entity).lines()

    settles(lambda: described(*topic), [
        "Dynamic configs for topic configs-topic are:",
        "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, "
        "DEFAULT_CONFIG:log.cleanup.policy=delete}",
        "  retention.ms=12345 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=12345}"],
        "the topic's configs")
    tools.ok("kafka-configs", *b, "--alter", *topic, "--delete-config", "retention.ms")
    settles(lambda: [line.split("=")[0].strip() for line in described(*topic)[1:]], ["cleanup.policy"],
            "retention.ms deleted")

    broker = ("--entity-type", "brokers", "--entity-name", "1")
    assert tools.ok("kafka-configs", *b, "--alter", *broker, "--add-config", "log.cleaner.threads=2").out == \
        "Completed updating config for broker 1.\n"
    settles(lambda: described(*broker), [
        "Dynamic configs for broker 1 are:",
        "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
        "DEFAULT_CONFIG:log.cleaner.threads=1}"], "broker 1's configs")
    every_broker = tools.ok("kafka-configs", *b, "--describe", *broker, "--all").lines()
    assert every_broker[0] == "All configs for broker 1 are:"
    for line in ("node.id=1 sensitive=false synonyms={STATIC_BROKER_CONFIG:node.id=1}",
                 "broker.id=1 sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.id=1, DEFAULT_CONFIG:broker.id=-1}",
                 "log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
                 "DEFAULT_CONFIG:log.cleaner.threads=1}"):
        assert f"  {line}" in every_broker

    default = ("--entity-type", "brokers", "--entity-default")
    try:
        assert tools.ok("kafka-configs", *b, "--alter", *default, "--add-config", "log.retention.ms=86400000").out == \
            "Completed updating default config for brokers in the cluster.\n"
        settles(lambda: described(*default), [
            "Default configs for brokers in the cluster are:",
            "  log.retention.ms=86400000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms="
            "86400000}",
            # the cluster-level min.insync.replicas of eligible leader replicas (KIP-966)
            "  min.insync.replicas=1 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1}"],
            "the cluster default")
        # the cluster default reaches the topic through its synonym, as Kafka's LogConfig resolves it
        inherited = ("  retention.ms=86400000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
                     "log.retention.ms=86400000, DEFAULT_CONFIG:log.retention.hours=168}")
        every = roles.wait_until(lambda: (lambda lines: lines if inherited in lines else None)(
            described(*topic, "--all")), "the default in the topic's --all")
        assert every[0] == "All configs for topic configs-topic are:"
        assert len(every) > 30 and all(" sensitive=false synonyms={" in line for line in every[1:])
    finally:
        tools.ok("kafka-configs", *b, "--alter", *default, "--delete-config", "log.retention.ms")
        tools.ok("kafka-configs", *b, "--alter", *broker, "--delete-config", "log.cleaner.threads")

    refused = tools.run("kafka-configs", *b, "--alter", *topic, "--add-config", "retention.ms=abc")
    assert refused.exit == 1
    assert "InvalidConfigurationException: Invalid value abc for configuration retention.ms: Not a number of type " \
           "LONG" in refused.err


def test_kafka_features_describe(tools, node):
    lines = tools.ok("kafka-features", "--bootstrap-server", node.bootstrap, "describe").lines()
    rows = [dict(zip((k.rstrip(":") for k in line.split()[::2]), line.split()[1::2])) for line in lines]
    described = {row["Feature"]: row for row in rows}
    assert described["metadata.version"] == {
        "Feature": "metadata.version", "SupportedMinVersion": "3.3-IV3", "SupportedMaxVersion": "4.4-IV2",
        "FinalizedVersionLevel": "4.4-IV2", "Epoch": described["metadata.version"]["Epoch"]}
    assert (described["kraft.version"]["SupportedMaxVersion"], described["kraft.version"]["FinalizedVersionLevel"]) \
        == ("1", "0")
    assert len({row["Epoch"] for row in rows}) == 1 and int(rows[0]["Epoch"]) > 0


def test_kafka_metadata_quorum_describe(tools, node):
    for bootstrap in (("--bootstrap-server", node.bootstrap), ("--bootstrap-controller", node.controller)):
        status = dict(line.split(":", 1) for line in
                      tools.ok("kafka-metadata-quorum", *bootstrap, "describe", "--status").lines())
        status = {k: v.strip() for k, v in status.items()}
        assert (status["ClusterId"], status["LeaderId"], status["MaxFollowerLag"]) == (
            node.cluster.cluster_id, "1", "0")
        assert int(status["HighWatermark"]) > 0 and int(status["LeaderEpoch"]) >= 1
        # static voters: Kafka's leader names no directory id for them, and the tool then prints none
        assert json.loads(status["CurrentVoters"]) == [
            {"id": 1, "endpoints": [f"CONTROLLER://{node.controller}"]}]
        assert json.loads(status["CurrentObservers"]) == []
        rows = [line.split("\t") for line in
                tools.ok("kafka-metadata-quorum", *bootstrap, "describe", "--replication").lines()]
        assert [c.strip() for c in rows[0]][:7] == ["NodeId", "DirectoryId", "LogEndOffset", "Lag",
                                                    "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"]
        assert [(r[0].strip(), r[1].strip(), r[3].strip(), r[6].strip()) for r in rows[1:]] == [
            ("1", "AAAAAAAAAAAAAAAAAAAAAA", "0", "Leader")]


def test_get_offsets_delete_records_and_log_dirs(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    tools.ok("kafka-topics", *b, "--create", "--topic", "offsets-topic", "--partitions", "2")
    sent = produce(tools, node, "offsets-topic", 30)
    ends = {p: 1 + max(r["offset"] for r in sent if r["partition"] == p) for p in (0, 1)}
    assert sum(ends.values()) == 30

    def offsets(*extra) -> dict[str, int]:
        out = tools.ok("kafka-get-offsets", *b, *extra).lines()
        return {k: int(v) for k, _, v in (line.rpartition(":") for line in out)}

    assert offsets("--topic", "offsets-topic") == {f"offsets-topic:{p}": ends[p] for p in (0, 1)}
    assert offsets("--topic", "offsets-topic", "--time", "-2") == {"offsets-topic:0": 0, "offsets-topic:1": 0}

    spec = os.path.join(tools.base, "delete-records.json")
    with open(spec, "w", encoding="utf-8") as f:
        json.dump({"version": 1, "partitions": [{"topic": "offsets-topic", "partition": 0, "offset": 2}]}, f)
    assert tools.ok("kafka-delete-records", *b, "--offset-json-file", spec).lines() == [
        "Executing records delete operation", "Records delete operation completed:",
        "partition: offsets-topic-0\tlow_watermark: 2"]
    assert offsets("--topic", "offsets-topic", "--time", "-2") == {"offsets-topic:0": 2, "offsets-topic:1": 0}
    assert offsets("--topic-partitions", "offsets-topic:0", "--time", "-1") == {"offsets-topic:0": ends[0]}

    out = tools.ok("kafka-log-dirs", *b, "--describe", "--topic-list", "offsets-topic").lines()
    assert out[:2] == ["Querying brokers for log directories information",
                       "Received log directory information from brokers 1"]
    [broker] = json.loads(out[2])["brokers"]
    [log_dir] = broker["logDirs"]
    assert (broker["broker"], log_dir["logDir"], log_dir["error"]) == (1, node.log_dir, None)
    sizes = {p["partition"]: p["size"] for p in log_dir["partitions"]}
    assert sizes == {f"offsets-topic-{p}": os.path.getsize(os.path.join(node.partition_dir("offsets-topic", p),
                                                                        "00000000000000000000.log"))
                     for p in (0, 1)}
    assert all(s > 0 for s in sizes.values())


def test_kafka_transactions_list_and_describe(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    tools.ok("kafka-topics", *b, "--create", "--topic", "txn-tool-topic", "--partitions", "1")
    steps = tools.ok("kafka-clients", "transactions", node.bootstrap, "txn-tool-topic", "txn-tool").json_lines()
    assert [s["event"] for s in steps] == ["commit", "abort", "commit"]

    [listed_txn] = [row for row in table(tools.ok("kafka-transactions", *b, "list"))
                    if row["TransactionalId"] == "txn-tool"]
    assert (listed_txn["Coordinator"], listed_txn["TransactionState"]) == ("1", "CompleteCommit")
    [described] = table(tools.ok("kafka-transactions", *b, "describe", "--transactional-id", "txn-tool"))
    # transaction.version 2 (the default level's): each of the three ends bumped the producer's epoch
    assert (described["CoordinatorId"], described["ProducerId"], described["ProducerEpoch"],
            described["TransactionState"], described["TransactionTimeoutMs"]) == (
        "1", listed_txn["ProducerId"], "3", "CompleteCommit", "60000")
    [producer] = table(tools.ok("kafka-transactions", *b, "describe-producers", "--topic", "txn-tool-topic",
                                "--partition", "0"))
    # 15 records (5 aborted) and three markers; the last marker came at the bumped epoch 3, which starts the
    # producer's entry afresh without batches (Kafka's ProducerStateEntry.maybeUpdateProducerEpoch): no last sequence
    assert (producer["ProducerId"], producer["ProducerEpoch"], producer["LastSequence"],
            producer["CurrentTransactionStartOffset"]) == (listed_txn["ProducerId"], "3", "-1", "None")
