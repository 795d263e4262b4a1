"""The features of issue #40, kraftwire beside Apache Kafka 4.4 (mirrors Kafka's ``FeatureCommandTest`` and
``StorageToolTest`` against the real tools and a real node):

* ``kafka-features version-mapping`` and ``feature-dependencies`` (Kafka's FeatureCommand) print what ``kraftwire
  features`` prints, byte for byte, exit codes included;
* Kafka's StorageTool and ``kraftwire storage format`` refuse the same arguments with the same words;
* a Kafka node and a kraftwire node, both formatted ``--release-version 4.3``, give the same UpdateFeatures answers
  (v0 and v1, validate-only) to the same updates; the levels kraftwire lacks are refused with Kafka's words plus the
  reason; below ``group.version`` 1 both refuse ConsumerGroupHeartbeat and ConsumerGroupDescribe alike.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time

import pytest

from harness import processes
from harness.kafka import KafkaNode, kafka_libs, until_broker_answers
from harness.kafka_tools import KafkaTools

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once

RF1 = ("offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n"
       "transaction.state.log.min.isr=1\n")
UPGRADE, SAFE, UNSAFE = 1, 2, 3


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    t = KafkaTools(str(tmp_path_factory.mktemp("tools")))
    yield t
    t.close()


def _ours(*args: str) -> tuple[int, str, str]:
    run = processes.kw("features", "--bootstrap-server", "localhost:1", *args, check=False)
    return run.returncode, run.stdout, run.stderr


@pytest.mark.parametrize("args", [
    ("version-mapping",),
    *(("version-mapping", "--release-version", r) for r in ("3.3-IV3", "3.9", "3.9-IV0", "4.0", "4.1-IV0", "4.2",
                                                              "4.3", "4.4", "4.4-IV1", "4.5-IV0", "4.5", "3.2", "x")),
    ("feature-dependencies", "--feature", "eligible.leader.replicas.version=1"),
    ("feature-dependencies", "--feature", "metadata.version=33", "--feature", "group.version=1", "--feature",
     "transaction.version=2", "--feature", "kraft.version=1", "--feature", "share.version=2", "--feature",
     "streams.version=1", "--feature", "eligible.leader.replicas.version=0"),
    ("feature-dependencies", "--feature", "metadata.version=34"),
    ("feature-dependencies", "--feature", "metadata.version=5"),
    ("feature-dependencies", "--feature", "foo=1"),
    ("feature-dependencies", "--feature", "group.version=5"),
    ("feature-dependencies", "--feature", "group.version"),
    ("feature-dependencies", "--feature", "group.version=x"),
])
def test_offline_subcommands_print_as_kafkas(tools, args):
    """FeatureCommandTest.testHandleVersionMapping* / testHandleFeatureDependencies*."""
    kafka = tools.run("kafka-features", "--bootstrap-server", "localhost:1", *args)
    assert _ours(*args) == (kafka.exit, kafka.out, kafka.err)


def _storage_config(base) -> str:
    os.makedirs(base, exist_ok=True)
    path = os.path.join(base, "server.properties")
    with open(path, "w", encoding="utf-8") as f:
        f.write("process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:19999\n"
                "listeners=PLAINTEXT://127.0.0.1:19998,CONTROLLER://127.0.0.1:19999\ncontroller.listener.names="
                f"CONTROLLER\nlog.dirs={os.path.join(base, 'data')}\n")
    return path


@pytest.mark.parametrize("args", [
    ("--release-version", "4.5"), ("--release-version", "3.2"),
    ("--release-version", "4.4", "--feature", "metadata.version=20"),
    ("--feature", "foo=1"), ("--feature", "group.version=3"), ("--feature", "group.version=x"),
    ("--feature", "metadata.version=5"), ("--feature", "metadata.version=34"),
    ("--release-version", "3.9", "--feature", "eligible.leader.replicas.version=1"),
])
def test_storage_format_refuses_as_kafkas(tmp_path, args):
    """StorageToolTest.testFormatWithInvalidFeature / testFormatWithUnsupportedReleaseVersion: Kafka's message is
    the last line of its error (some come with a stack trace, some bare); kraftwire prints it after its prefix."""
    kafka = subprocess.run(["java", "-cp", os.path.join(kafka_libs(), "*"), "kafka.tools.StorageTool", "format",
                            "-t", "Ct6hGQ1ySUGjbv0wRN4ZSQ", "-c", _storage_config(str(tmp_path / "k")), *args],
                           capture_output=True, text=True, timeout=120)
    lines = [line for line in kafka.stderr.splitlines() if not line.startswith(("SLF4J", "\tat ", "log4j"))]
    message = lines[-1].split("Exception: ", 1)[-1]
    ours = processes.kw("storage", "format", "-t", "Ct6hGQ1ySUGjbv0wRN4ZSQ", "-c",
                        _storage_config(str(tmp_path / "w")), *args, check=False)
    assert (kafka.returncode, ours.returncode) == (1, 1)
    assert ours.stderr == f"kraftwire storage format: {message}\n"


# ------------------------------------------------------------------------------------------------ the live nodes
def _ask(port: int, body, version: int):
    return asyncio.run(request_once("127.0.0.1", port, body, version, timeout=15.0))


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    """(Kafka's port, kraftwire's port), both at metadata.version 4.3-IV0 with the release's features."""
    release = ("--release-version", "4.3")
    with KafkaNode(tmp_path_factory.mktemp("kafka"), RF1, release) as kafka, \
            processes.CombinedNode(tmp_path_factory.mktemp("kraftwire"), RF1, release) as ours:
        for port in (kafka.port, ours.port):
            until_broker_answers(port)
        yield kafka.port, ours.port


def _update(port: int, updates, version: int, validate_only: bool = True):
    U = w.UpdateFeaturesRequest
    body = U(timeout_ms=15000, validate_only=validate_only, feature_updates=[
        U.FeatureUpdateKey(feature=name, max_version_level=level, allow_downgrade=kind != UPGRADE, upgrade_type=kind)
        for name, level, kind in updates])
    r = _ask(port, body, version)
    return r.error_code, r.error_message, [(x.feature, x.error_code, x.error_message) for x in r.results]


SAME = [
    [("metadata.version", 31, UPGRADE)],
    [("metadata.version", 33, UPGRADE)],  # 4.4-IV2: CIDR ACL hosts and controller unregistration, taken by both
    [("metadata.version", 29, SAFE)],
    [("metadata.version", 29, UNSAFE)],
    [("metadata.version", 29, UPGRADE)],
    [("group.version", 0, UPGRADE)],
    [("group.version", 0, SAFE)],
    [("group.version", 2, UPGRADE)],
    [("group.version", -1, UPGRADE)],
    [("group.version", 1, 0)],
    [("foo.bar", 1, UPGRADE)],
    [("foo", 0, UPGRADE)],
    [("foo.bar", 3, UPGRADE), ("group.version", 7, UPGRADE)],
    [("group.version", 7, UPGRADE), ("foo.bar", 3, UPGRADE)],
    [("metadata.version", 31, UPGRADE), ("group.version", 1, UPGRADE), ("transaction.version", 0, UNSAFE),
     ("eligible.leader.replicas.version", 0, SAFE)],
]


@pytest.mark.parametrize("updates, version", [(u, v) for v in (0, 1) for u in SAME if v == 1 or u not in SAME[:2]],
                         ids=lambda x: "+".join(f"{n}={lvl}/{k}" for n, lvl, k in x) if isinstance(x, list) else
                         f"v{x}")
def test_update_features_answers_as_kafkas(ports, updates, version):
    """FeatureControlManagerTest's refusals, on the wire: the same answer from both. v0 has no validate_only (an
    update that passes is made: the two upgrades are left out of v0) and no upgrade type: Kafka 4.4 takes every v0
    update as an upgrade, its allow_downgrade flag unread."""
    kafka, ours = (_update(port, updates, version) for port in ports)
    assert ours == kafka


def test_a_level_outside_both_ranges_is_refused_alike(ports):
    """Both support metadata.version up to 33 (4.4-IV2) and name that range."""
    kafka, ours = (_update(port, [("metadata.version", 0, SAFE)], 1) for port in ports)
    assert kafka[1].endswith("Local controller 1 only supports versions 7-33")
    assert ours == kafka


def test_transaction_version_2_is_taken_alike(ports):
    """transaction.version 2 (KIP-890 part 2) is implemented: a validating upgrade passes on both."""
    kafka, ours = (_update(port, [("transaction.version", 2, UPGRADE)], 1) for port in ports)
    assert kafka == ours == (0, None, [("transaction.version", 0, "NONE")])


def test_eligible_leader_replicas_are_on_alike(ports):
    """eligible.leader.replicas.version 1 is the default from 4.1-IV0 on both (KIP-966, implemented): an upgrade
    to it changes nothing on either."""
    kafka, ours = (_update(port, [("eligible.leader.replicas.version", 1, UPGRADE)], 1) for port in ports)
    assert kafka == ours == (0, None, [("eligible.leader.replicas.version", 0, "NONE")])


def test_min_insync_replicas_is_cluster_level_alike_while_elr_is_on(ports):
    """ConfigurationControlManager with ELR on: a broker-level min.insync.replicas is refused, and so is removing
    the cluster-level one, with Kafka's words; the cluster-level value (written at bootstrap from the controller's
    own, Kafka's default 1) is what DescribeConfigs of the cluster default shows."""
    I, D = w.IncrementalAlterConfigsRequest, w.DescribeConfigsRequest

    def alter(port, name, value, op):
        body = I(validate_only=True, resources=[I.AlterConfigsResource(resource_type=4, resource_name=name, configs=[
            I.AlterableConfig(name="min.insync.replicas", config_operation=op, value=value)])])
        return [(r.error_code, r.error_message) for r in _ask(port, body, 1).responses]

    def cluster_value(port):
        body = D(resources=[D.DescribeConfigsResource(resource_type=4, resource_name="",
                                                      configuration_keys=["min.insync.replicas"])],
                 include_synonyms=False, include_documentation=False)
        (res,) = _ask(port, body, 4).results
        return [(c.name, c.value, c.config_source) for c in res.configs]

    for name, value, op, message in (
            ("1", "2", 0, "Broker-level min.insync.replicas cannot be altered while ELR is enabled."),
            ("", None, 1, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")):
        kafka, ours = (alter(port, name, value, op) for port in ports)
        assert kafka == ours == [(40, message)]  # INVALID_CONFIG
    kafka, ours = (cluster_value(port) for port in ports)
    assert kafka == ours == [("min.insync.replicas", "1", 3)]  # DYNAMIC_DEFAULT_BROKER_CONFIG


@pytest.mark.parametrize("level", [1, 2])
def test_share_version_is_taken_as_kafka_takes_it(ports, level):
    """share.version 1 (KIP-932's share groups) and 2 (their dead-letter queues, KIP-1191) are implemented:
    validated alike (the node's metadata.version, 4.3-IV0, is below 2's default release, which is no dependency)."""
    kafka, ours = (_update(port, [("share.version", level, UPGRADE)], 1) for port in ports)
    assert kafka == ours == (0, None, [("share.version", 0, "NONE")])


@pytest.mark.parametrize("name, level", [("streams.version", 1)])
def test_a_level_kraftwire_lacks_is_refused_where_kafka_takes_it(ports, name, level):
    kafka, ours = (_update(port, [(name, level, UPGRADE)], 1) for port in ports)
    assert kafka == (0, None, [(name, 0, "NONE")])
    code, message, results = ours
    assert (code, results) == (95, [])
    assert message.startswith("The update failed for all features since the following feature had an error: "
                              f"Invalid update version {level} for feature {name}. Local controller 1 ")
    assert "which kraftwire does not implement yet" in message


def test_kafkas_tool_describes_both_alike(ports, tools):
    """FeatureCommandTest.testDescribeWithKRaft: the same features, by name, at the same metadata.version."""
    def described(port):
        lines = tools.ok("kafka-features", "--bootstrap-server", f"127.0.0.1:{port}", "describe").lines()
        return [dict(re.findall(r"(\w+): (\S+)", line)) for line in lines]

    kafka, ours = (described(port) for port in ports)
    assert [row["Feature"] for row in ours] == [row["Feature"] for row in kafka]
    mv = [next(row for row in rows if row["Feature"] == "metadata.version") for rows in (kafka, ours)]
    assert [row["FinalizedVersionLevel"] for row in mv] == ["4.3-IV0", "4.3-IV0"]
    assert mv[1]["SupportedMaxVersion"] == "4.4-IV2"


def test_kraftwire_describe_prints_as_kafkas_tool(ports, tools):
    """The same node described by both tools: the same lines (the epoch, which moves with the log, aside)."""
    def without_epoch(out: str) -> list[str]:
        return [line.rsplit("Epoch: ", 1)[0] for line in out.splitlines()]

    kafka = tools.ok("kafka-features", "--bootstrap-server", f"127.0.0.1:{ports[1]}", "describe").out
    ours = processes.kw("features", "--bootstrap-server", f"127.0.0.1:{ports[1]}", "describe", check=False)
    assert ours.returncode == 0 and without_epoch(ours.stdout) == without_epoch(kafka) and len(kafka.splitlines()) == 7


def test_kafkas_upgrade_to_4_4_is_refused_by_kraftwire_with_the_reason(ports, tools):
    """Kafka's tool sends metadata.version 33 and every default (kraft.version 1 among them); kraftwire refuses
    the first it lacks, in Kafka's order: kraft.version 1 on this static quorum."""
    run = tools.run("kafka-features", "--bootstrap-server", f"127.0.0.1:{ports[1]}", "upgrade", "--release-version",
                    "4.4", "--dry-run")
    assert run.exit == 1 and "7 out of 7 operation(s) failed." in run.err
    assert len(run.lines()) == 7 and run.lines()[-1].startswith(
        "Can not upgrade transaction.version to 2. The update failed for all features since the following feature "
        "had an error: Invalid update version 1 for feature kraft.version. kraftwire does not upgrade kraft.version")


def test_below_group_version_1_the_consumer_protocol_is_refused_alike(ports):
    """Kafka 4.4 answers UNSUPPORTED_VERSION to ConsumerGroupHeartbeat and ConsumerGroupDescribe below group.version
    1 (the API still advertised); both again once it is back."""
    H = w.ConsumerGroupHeartbeatRequest
    heartbeat = H(group_id="g", member_id="m" * 22, member_epoch=0, rebalance_timeout_ms=30000,
                  subscribed_topic_names=["t"], topic_partitions=[], server_assignor=None)
    describe = w.ConsumerGroupDescribeRequest(group_ids=["g"], include_authorized_operations=False)
    try:
        for port in ports:
            assert _update(port, [("group.version", 0, SAFE)], 1, validate_only=False)[0] == 0
        deadline = time.monotonic() + 30
        while True:  # the broker side sees the new level once its image has it
            answers = [(_ask(p, heartbeat, 0).error_code, _ask(p, describe, 0).groups) for p in ports]
            if all(code == 35 for code, _ in answers) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert answers[0] == answers[1] and answers[0][0] == 35
    finally:
        for port in ports:
            assert _update(port, [("group.version", 1, UPGRADE)], 1, validate_only=False)[0] == 0
