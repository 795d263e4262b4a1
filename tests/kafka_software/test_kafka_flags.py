"""Kafka's flags and subcommand orders that users type by reflex (issue 41), each run through kraftwire's tool and
Kafka 4.4's own against the same kraftwire node, their outputs compared: ``cluster cluster-id --bootstrap-server``
and ``list-endpoints``, ``topics --describe`` with the min-ISR filters, ``--topics-with-overrides`` and
``--topic-id``, ``configs --topic`` and the other entity types (with ``--bootstrap-controller``), ``storage info /
version-mapping / feature-dependencies``, ``dump-log`` with Kafka's four flags and ``producer-perf-test`` with
transactions and monotonic payloads. Where the two differ on purpose the test says why."""

from __future__ import annotations

import os
import re

import pytest

from harness.processes import kw

pytestmark = pytest.mark.interop

SEGMENT = "00000000000000000000.log"


def same(tools, kafka_tool: str, *args: str, ours: tuple[str, ...] | None = None, exit: int = 0) -> str:
    """Kafka's tool and kraftwire's (``ours``: its arguments, when they differ from Kafka's) print the same standard
    output and exit with ``exit``; that output."""
    theirs = tools.run(kafka_tool, *args)
    mine = kw(*(ours or (kafka_tool.removeprefix("kafka-"), *args)), check=False)
    assert (mine.returncode, mine.stdout) == (theirs.exit, theirs.out), (mine.stderr, theirs.err)
    assert theirs.exit == exit, theirs.err
    return mine.stdout


def same_error(tools, kafka_tool: str, *args: str, lines: int = 2) -> str:
    """Both tools fail (exit 1) with the same first ``lines`` on stderr (Kafka's goes on with a stack trace, which
    kraftwire's tool leaves out)."""
    theirs = tools.run(kafka_tool, *args)
    mine = kw(kafka_tool.removeprefix("kafka-"), *args, check=False)
    first = [line for line in theirs.err.splitlines() if line and not line.startswith("SLF4J")][:lines]
    assert theirs.exit == mine.returncode == 1, (theirs, mine.stderr)
    assert mine.stderr.splitlines()[:len(first)] == first, (mine.stderr, theirs.err)
    return mine.stderr


def create(tools, node, topic: str, *extra: str) -> None:
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", topic, *extra)
    tools.described(node.bootstrap, topic)


# ---------------------------------------------------------------------------------------------------- cluster
def test_cluster_takes_kafkas_order_and_lists_endpoints(tools, node):
    for order in (("cluster-id", "--bootstrap-server", node.bootstrap),
                  ("cluster-id", "--bootstrap-controller", node.controller)):
        out = same(tools, "kafka-cluster", *order)
        assert out == f"Cluster ID: {node.cluster.cluster_id}\n"
    # kraftwire's older order (the flags first) is still taken
    assert kw("cluster", "--bootstrap-server", node.bootstrap, "cluster-id").stdout == \
        f"Cluster ID: {node.cluster.cluster_id}\n"

    brokers = same(tools, "kafka-cluster", "list-endpoints", "--bootstrap-server", node.bootstrap)
    port = node.bootstrap.rsplit(":", 1)[1]
    assert brokers.splitlines()[1].split() == ["1", "localhost", port, "null", "unfenced", "broker"]
    same(tools, "kafka-cluster", "list-endpoints", "--bootstrap-server", node.bootstrap, "--include-fenced-brokers")
    controllers = same(tools, "kafka-cluster", "list-endpoints", "--bootstrap-controller", node.controller)
    assert controllers.splitlines()[0].split() == ["ID", "HOST", "PORT", "RACK", "ENDPOINT_TYPE"]
    same_error(tools, "kafka-cluster", "list-endpoints", "--bootstrap-controller", node.controller,
               "--include-fenced-brokers", lines=1)


# ---------------------------------------------------------------------------------------------------- topics
def test_topics_min_isr_filters_overrides_and_topic_id(tools, node):
    create(tools, node, "flags-under", "--partitions", "2", "--config", "min.insync.replicas=2")
    create(tools, node, "flags-at", "--config", "min.insync.replicas=1")
    create(tools, node, "flags-plain")
    b = ("--bootstrap-server", node.bootstrap, "--describe", "--topic", "flags-.*")
    under = same(tools, "kafka-topics", *b, "--under-min-isr-partitions")
    assert [line.split("\t")[1:3] for line in under.splitlines()] == [
        ["Topic: flags-under", "Partition: 0"], ["Topic: flags-under", "Partition: 1"]]
    # several topics: in the order of the map Kafka's admin client answers with
    assert same(tools, "kafka-topics", *b, "--at-min-isr-partitions").count("\n") == 2
    assert same(tools, "kafka-topics", *b).count("Topic: flags-") == 3 + 4
    same(tools, "kafka-topics", "--bootstrap-server", node.bootstrap, "--describe")
    at = same(tools, "kafka-topics", *b[:-1], "flags-at", "--at-min-isr-partitions")
    assert at.count("\n") == 1 and "Topic: flags-at\tPartition: 0" in at
    assert same(tools, "kafka-topics", *b[:-1], "flags-plain", "--at-min-isr-partitions").count("\n") == 1
    overrides = same(tools, "kafka-topics", *b[:-1], "flags-under", "--topics-with-overrides")
    assert overrides.startswith("Topic: flags-under\t") and overrides.endswith("Configs: min.insync.replicas=2\n")
    # with eligible leader replicas on (Kafka 4.4's default) min.insync.replicas is cluster-level, a config that is not
    # a default, so both tools count every topic as overridden
    assert same(tools, "kafka-topics", *b[:-1], "flags-plain", "--topics-with-overrides").endswith(
        "Configs: min.insync.replicas=1\n")
    # the first partition filter given decides, as in Kafka's tool
    same(tools, "kafka-topics", *b[:-1], "flags-under", "--at-min-isr-partitions", "--under-min-isr-partitions")

    topic_id = re.search(r"TopicId: (\S+)", overrides).group(1)
    by_id = same(tools, "kafka-topics", "--bootstrap-server", node.bootstrap, "--describe", "--topic-id", topic_id)
    assert by_id.startswith("Topic: flags-under\t") and "\tElr: N/A\t" in by_id  # from Metadata, as Kafka's
    missing = "A" * 21 + "Q"
    assert same(tools, "kafka-topics", "--bootstrap-server", node.bootstrap, "--describe", "--topic-id", missing,
                exit=1) == f"Error while executing topic command : TopicId '{missing}' does not exist as expected\n"
    same(tools, "kafka-topics", "--bootstrap-server", node.bootstrap, "--describe", "--topic-id", missing,
         "--if-exists")
    same(tools, "kafka-topics", "--bootstrap-server", node.bootstrap, "--describe", "--topic-id", "nonsense", exit=1)

    conflict = tools.run("kafka-topics", *b, "--under-replicated-partitions", "--topics-with-overrides")
    mine = kw("topics", *b, "--under-replicated-partitions", "--topics-with-overrides", check=False)
    assert conflict.exit == mine.returncode == 1
    assert mine.stderr.splitlines()[0] == conflict.err.splitlines()[0] == \
        'Option "[under-replicated-partitions]" can\'t be used with option "[topics-with-overrides]"'


# ---------------------------------------------------------------------------------------------------- configs
def test_configs_shorthands_entity_types_and_bootstrap_controller(tools, node):
    create(tools, node, "flags-configs", "--config", "retention.ms=123456")
    b = ("--bootstrap-server", node.bootstrap)
    out = same(tools, "kafka-configs", *b, "--describe", "--topic", "flags-configs")
    assert out.startswith("Dynamic configs for topic flags-configs are:\n  retention.ms=123456 ")
    same(tools, "kafka-configs", *b, "--describe", "--broker-defaults")
    same(tools, "kafka-configs", *b, "--describe", "--broker", "1")
    same(tools, "kafka-configs", "--bootstrap-controller", node.controller, "--describe", "--broker", "1")
    same(tools, "kafka-configs", "--bootstrap-controller", node.controller, "--describe", "--entity-type", "brokers")
    # through a controller, Kafka's tool cannot list topics or groups first
    same_error(tools, "kafka-configs", "--bootstrap-controller", node.controller, "--describe", "--topic",
               "flags-configs")
    same_error(tools, "kafka-configs", "--bootstrap-controller", node.controller, "--describe", "--group", "g")
    altered = same(tools, "kafka-configs", "--bootstrap-controller", node.controller, "--alter", "--topic",
                   "flags-configs", "--add-config", "retention.ms=654321")
    assert altered == "Completed updating config for topic flags-configs.\n"

    # broker loggers: the same loggers and levels, altered through either tool
    assert same(tools, "kafka-configs", *b, "--alter", "--broker-logger", "1", "--add-config",
                "kraftwire.client=DEBUG") == "Completed updating config for broker-logger 1.\n"
    loggers = same(tools, "kafka-configs", *b, "--describe", "--entity-type", "broker-loggers", "--entity-name", "1")
    assert "  kraftwire.client=DEBUG sensitive=false synonyms={}\n" in loggers
    kw("configs", *b, "--alter", "--broker-logger", "1", "--delete-config", "kraftwire.client")
    same(tools, "kafka-configs", *b, "--describe", "--broker-logger", "1")
    theirs = tools.run("kafka-configs", *b, "--describe", "--entity-type", "broker-loggers")
    mine = kw("configs", *b, "--describe", "--entity-type", "broker-loggers", check=False)
    assert theirs.exit == mine.returncode == 1
    assert "An entity name must be specified with --describe of broker-loggers\n" in theirs.out + theirs.err
    assert mine.stderr == "An entity name must be specified with --describe of broker-loggers\n"

    # client metrics: kraftwire does not serve the API, and both tools say so as Kafka's does (client quotas:
    # test_config_quotas_tool.py)
    err = same_error(tools, "kafka-configs", *b, "--describe", "--entity-type", "client-metrics")
    assert err.splitlines()[1].endswith("The node does not support LIST_CONFIG_RESOURCES")


# ---------------------------------------------------------------------------------------------------- storage
def test_storage_info_version_mapping_and_feature_dependencies(tools, node, tmp_path):
    out = same(tools, "kafka-storage", "info", "-c", node.config)
    assert out.startswith(f"Found log directory:\n  {node.log_dir}\n")
    for args in ((), ("--release-version", "3.9"), ("--release-version", "4.0")):
        same(tools, "kafka-storage", "version-mapping", *args)
    for feature in ("transaction.version=2", "group.version=1", "metadata.version=21"):
        same(tools, "kafka-storage", "feature-dependencies", "--feature", feature)

    # directories that are missing, not formatted, or disagree
    dirs = [str(tmp_path / name) for name in ("b", "a", "c")]
    config = tmp_path / "server.properties"
    config.write_text("process.roles=broker,controller\nnode.id=3\ncontroller.quorum.voters=3@127.0.0.1:9999\n"
                      "listeners=PLAINTEXT://127.0.0.1:9998,CONTROLLER://127.0.0.1:9999\n"
                      f"controller.listener.names=CONTROLLER\nlog.dirs={dirs[1]},{dirs[2]}\n"
                      f"metadata.log.dir={dirs[0]}\n")
    assert "does not exist" in same(tools, "kafka-storage", "info", "-c", str(config), exit=1)
    os.mkdir(dirs[1])
    assert "is not formatted." in same(tools, "kafka-storage", "info", "-c", str(config), exit=1)
    kw("storage", "format", "-t", node.cluster.cluster_id, "-c", str(config), "--ignore-formatted")
    same(tools, "kafka-storage", "info", "-c", str(config))
    meta = os.path.join(dirs[2], "meta.properties")
    with open(meta, encoding="utf-8") as f:
        text = f.read()
    with open(meta, "w", encoding="utf-8") as f:
        f.write(text.replace("node.id=3", "node.id=4"))
    assert "Mismatched node IDs between storage directories." in same(tools, "kafka-storage", "info", "-c",
                                                                      str(config), exit=1)


# ---------------------------------------------------------------------------------------------------- dump-log
def test_dump_log_kafkas_flags_and_decoders(tools, node):
    create(tools, node, "flags-dump")
    tools.ok("kafka-console-producer", "--bootstrap-server", node.bootstrap, "--topic", "flags-dump",
             "--reader-property", "parse.key=true", "--reader-property", "parse.headers=true",
             stdin="h1:a,h2:b\tk1\tv1\nh3:c\tk2\tv2\n")
    tools.ok("kafka-clients", "transactions", node.bootstrap, "flags-dump", "flags-dump-txn")
    tools.ok("kafka-clients", "consume", node.bootstrap, "flags-dump", "flags-dump-group", "consumer",
             "read_committed", "2")
    # a classic group: its members' subscription and assignment are decoded from their embedded protocol
    tools.ok("kafka-clients", "consume", node.bootstrap, "flags-dump", "flags-dump-classic", "classic",
             "read_committed", "2")
    segment = os.path.join(node.partition_dir("flags-dump"), SEGMENT)
    deep = same(tools, "kafka-dump-log", "--deep-iteration", "--files", segment)
    assert "| offset: 0 " in deep and "headerKeys: [h1,h2]" in deep and "endTxnMarker: COMMIT" in deep
    data = same(tools, "kafka-dump-log", "--print-data-log", "--files", segment)
    assert "headerKeys: [h1,h2] key: k1 payload: v1" in data
    for partition in range(3):  # offsets.topic.num.partitions=3, transaction.state.log.num.partitions=3
        same(tools, "kafka-dump-log", "--offsets-decoder", "--files",
             os.path.join(node.partition_dir("__consumer_offsets", partition), SEGMENT))
        same(tools, "kafka-dump-log", "--transaction-log-decoder", "--files",
             os.path.join(node.partition_dir("__transaction_state", partition), SEGMENT))
    decoded = "".join(kw("dump-log", "--transaction-log-decoder", "--files",
                         os.path.join(node.partition_dir("__transaction_state", p), SEGMENT)).stdout
                      for p in range(3))
    assert '"transactionStatus":"CompleteCommit"' in decoded and '"transactionalId":"flags-dump-txn"' in decoded
    groups = "".join(kw("dump-log", "--offsets-decoder", "--files",
                        os.path.join(node.partition_dir("__consumer_offsets", p), SEGMENT)).stdout for p in range(3))
    assert '"subscription":{"topics":["flags-dump"]' in groups


def test_dump_log_into_a_closed_pipe_exits_quietly(node, tmp_path):
    """``dump-log ... | head``: the reader leaving is no error (issue 41 saw "Broken pipe" and exit 1)."""
    import subprocess
    import sys

    from harness.processes import kraftwire_env

    path = os.path.join(node.partition_dir("__cluster_metadata"), SEGMENT)
    shell = (f"{sys.executable} -m kraftwire dump-log --cluster-metadata-decoder --files {path} | head -1; "
             "echo \"status=${PIPESTATUS[0]}\"")
    proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=kraftwire_env(), timeout=60)
    assert proc.stdout.splitlines() == [f"Dumping {path}", "status=0"], proc.stderr
    assert proc.stderr == ""


# ---------------------------------------------------------------------------------------------------- perf test
def test_producer_perf_test_transactions_and_monotonic_payloads(tools, node):
    create(tools, node, "flags-perf")
    out = kw("producer-perf-test", "--topic", "flags-perf", "--num-records", "200", "--payload-monotonic",
             "--throughput", "-1", "--bootstrap-server", node.bootstrap, "--transactional-id", "flags-perf-txn",
             "--transaction-duration-ms", "50").stdout
    theirs = tools.ok("kafka-producer-perf-test", "--topic", "flags-perf", "--num-records", "200",
                      "--payload-monotonic", "--throughput", "-1", "--bootstrap-server", node.bootstrap,
                      "--transactional-id", "flags-perf-txn-kafka", "--transaction-duration-ms", "50").out
    summary = (r"^200 records sent, [0-9.]+ records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max "
               r"latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99.9th\.$")
    assert re.match(summary, out.splitlines()[-1]) and re.match(summary, theirs.splitlines()[-1])
    # both wrote 0..199 in committed transactions: read_committed sees all 400
    records = [r for r in tools.ok("kafka-clients", "consume", node.bootstrap, "flags-perf", "flags-perf-reader",
                                   "consumer", "read_committed", "400").json_lines() if r["event"] == "record"]
    assert sorted(int(r["value"]) for r in records) == sorted(list(range(200)) * 2)
    dumped = kw("dump-log", "--deep-iteration", "--files", os.path.join(node.partition_dir("flags-perf"),
                                                                         SEGMENT)).stdout
    assert "endTxnMarker: COMMIT" in dumped and "endTxnMarker: ABORT" not in dumped
