"""Node settings from Kafka properties: the README's files, a real server.properties, and refusals that name the key
and the value."""

from __future__ import annotations

import pytest

from kraftwire.config import parse_properties
from kraftwire.errors import ConfigError
from kraftwire.ids import Endpoint
from kraftwire.server.node.settings import NodeSettings

README = """node.id=2
listeners=PLAINTEXT://localhost:9093
controller.listener.names=PLAINTEXT
controller.quorum.voters=1@localhost:9092,2@localhost:9093,3@localhost:9094
log.dirs=/tmp/kraft-logs-2
"""

# the controller part of Kafka's config/kraft/controller.properties (abridged, comments dropped)
KAFKA_CONTROLLER = """process.roles=controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
controller.quorum.voters=1@localhost:9093
listeners=CONTROLLER://:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/tmp/kraft-controller-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
"""


def settings(text: str) -> NodeSettings:
    return NodeSettings.from_properties(parse_properties(text))


def test_readme_file():
    s = settings(README)
    assert s.node_id == 2 and s.roles == ("controller",)
    assert s.listeners == (Endpoint("PLAINTEXT", "localhost", 9093),)
    assert [(v.node_id, v.host, v.port) for v in s.voters] == [(1, "localhost", 9092), (2, "localhost", 9093),
                                                               (3, "localhost", 9094)]
    assert s.metadata_dir == "/tmp/kraft-logs-2"
    assert s.partition_dir == "/tmp/kraft-logs-2/__cluster_metadata-0"
    assert s.metrics_port == 0 and not s.ignored_keys and not s.unknown_keys
    rc = s.raft_config("abc")
    assert rc.voters == frozenset({1, 2, 3}) and rc.node_id == 2 and rc.cluster_id == "abc"
    assert (rc.election_timeout_ms, rc.fetch_timeout_ms, rc.append_linger_ms, rc.retry_backoff_ms) == (1000, 2000, 25, 20)
    assert rc.high_watermark_linger_ms == 5  # kraftwire's own default


def test_real_kafka_controller_properties():
    s = settings(KAFKA_CONTROLLER)
    assert s.listeners == (Endpoint("CONTROLLER", "", 9093),)  # empty host: every interface
    assert s.advertised == (Endpoint("CONTROLLER", "localhost", 9093),)
    assert s.controller_listener == "CONTROLLER"
    assert "num.network.threads" in s.ignored_keys and "socket.send.buffer.bytes" in s.ignored_keys
    assert "log.retention.hours" not in s.ignored_keys  # retention.ms's default for topic partitions
    assert "socket.request.max.bytes" not in s.ignored_keys and s.max_frame_bytes == 104857600
    assert not s.unknown_keys


def test_timings_and_unknown_keys():
    s = settings(README + "controller.quorum.election.timeout.ms=300\ncontroller.quorum.append.linger.ms=5\n"
                 "frobnicate.level=9\nkraftwire.metrics.port=9404\nkraftwire.quorum.high.watermark.linger.ms=0\n")
    rc = s.raft_config("x")
    assert rc.election_timeout_ms == 300 and rc.append_linger_ms == 5
    assert rc.high_watermark_linger_ms == 0  # Kafka's way: high-watermark news answered at once
    assert s.unknown_keys == ("frobnicate.level",)
    assert s.metrics_port == 9404


def test_controller_listener_name_defaults_to_plaintext_when_the_map_is_absent():
    s = settings(README.replace("PLAINTEXT://", "CONTROLLER://").replace("names=PLAINTEXT", "names=CONTROLLER"))
    assert s.controller_listener == "CONTROLLER"


@pytest.mark.parametrize("extra, key, value", [
    ("controller.quorum.election.timeout.ms=soon\n", "controller.quorum.election.timeout.ms", "soon"),
    ("controller.quorum.fetch.timeout.ms=-5\n", "controller.quorum.fetch.timeout.ms", "-5"),
    ("kraftwire.metrics.port=99999\n", "kraftwire.metrics.port", "99999"),
    ("kraftwire.quorum.high.watermark.linger.ms=-1\n", "kraftwire.quorum.high.watermark.linger.ms", "-1"),
    ("kraftwire.quorum.high.watermark.linger.ms=soon\n", "kraftwire.quorum.high.watermark.linger.ms", "soon"),
    ("process.roles=broker\n", "process.roles", "broker"),
    ("process.roles=controller,chef\n", "process.roles", "controller,chef"),
    ("listener.security.protocol.map=PLAINTEXT:SSL\n", "ssl.keystore.location", "(missing)"),
    ("listener.security.protocol.map=PLAINTEXT:SASL_SSL\n", "sasl.enabled.mechanisms", "GSSAPI (Kafka's default)"),
])
def test_bad_values_name_key_and_value(extra, key, value):
    with pytest.raises(ConfigError) as info:
        settings(README + extra)
    assert info.value.key == key and info.value.value == value
    assert key in str(info.value) and str(value) in str(info.value)


@pytest.mark.parametrize("text, key", [
    (README.replace("controller.quorum.voters=1@localhost:9092", "controller.quorum.voters=one@localhost:9092"),
     "controller.quorum.voters"),
    (README.replace("1@localhost:9092", "1@0.0.0.0:9092"), "controller.quorum.voters"),
    (README.replace("2@localhost:9093", "1@localhost:9093"), "controller.quorum.voters"),
    (README.replace("listeners=PLAINTEXT://localhost:9093", "listeners=localhost:9093"), "listeners"),
    (README.replace("localhost:9093\ncontroller", "localhost:http\ncontroller"), "listeners"),
    (README.replace("controller.listener.names=PLAINTEXT", "controller.listener.names=CONTROLLER"),
     "controller.listener.names"),
    (README.replace("controller.listener.names=PLAINTEXT\n", ""), "controller.listener.names"),
    (README.replace("node.id=2\n", ""), "node.id"),
    (README.replace("controller.quorum.voters=1@localhost:9092,2@localhost:9093,3@localhost:9094\n", ""),
     "controller.quorum.voters"),
])
def test_structural_errors(text, key):
    with pytest.raises(ConfigError) as info:
        settings(text)
    assert info.value.key == key


@pytest.mark.parametrize("old, replacement", [
    ("broker.id=1", "node.id"),
    ("quorum.bootstrap.servers=localhost:9092", "controller.quorum"),
    ("quorum.bootstrap.voters=1@localhost:9092", "controller.quorum.voters"),
    ("verbose=true", "log"),
    ("zookeeper.connect=localhost:2181", "ZooKeeper"),
])
def test_old_raft_readme_keys_name_their_replacement(old, replacement):
    with pytest.raises(ConfigError) as info:
        settings(README + old + "\n")
    assert info.value.key == old.split("=")[0]
    assert replacement in str(info.value)


def test_a_controller_with_bootstrap_servers_only_takes_its_voters_from_the_log():
    """Kafka 4's shipped configs: no static voters; the voter set is in the metadata log's bootstrap snapshot
    (``storage format --standalone/--initial-controllers``), read at start (``tests/e2e/test_kafka4_quickstart.py``)."""
    text = README.replace("controller.quorum.voters=1@localhost:9092,2@localhost:9093,3@localhost:9094",
                          "controller.quorum.bootstrap.servers=localhost:9092")
    s = settings(text)
    assert s.voters == () and s.bootstrap_servers == (("localhost", 9092),)
    assert not any("observer" in w for w in s.warnings)


BROKER_BOOTSTRAP = """process.roles=broker
node.id=4
listeners=BROKER://localhost:9095
controller.listener.names=CONTROLLER
listener.security.protocol.map=BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.quorum.bootstrap.servers=localhost:9092, 127.0.0.1:9093,[::1]:9094
log.dirs=/tmp/kraft-logs-4
"""


def test_a_broker_may_name_bootstrap_servers_alone():
    s = settings(BROKER_BOOTSTRAP)
    assert s.voters == () and s.is_broker
    assert s.bootstrap_servers == (("localhost", 9092), ("127.0.0.1", 9093), ("::1", 9094))


@pytest.mark.parametrize("bad", ["localhost", "localhost:x", ":9092", "localhost:70000"])
def test_a_bad_bootstrap_server_names_the_key_and_value(bad):
    with pytest.raises(ConfigError) as info:
        settings(BROKER_BOOTSTRAP.replace("localhost:9092, 127.0.0.1:9093,[::1]:9094", bad))
    assert info.value.key == "controller.quorum.bootstrap.servers" and bad in str(info.value)


def test_neither_voters_nor_bootstrap_servers_names_the_voters_key():
    with pytest.raises(ConfigError) as info:
        settings(BROKER_BOOTSTRAP.replace("controller.quorum.bootstrap.servers=localhost:9092, 127.0.0.1:9093,"
                                          "[::1]:9094\n", ""))
    assert info.value.key == "controller.quorum.voters" and "bootstrap.servers" in str(info.value)


def test_voters_are_read_from_a_describe_quorum_answer_at_the_controller_listener():
    from kraftwire.protocol import messages as w
    from kraftwire.server.node.app import _voters_from
    from kraftwire.server.node.settings import Voter

    R = w.DescribeQuorumResponse

    def answer(error=0, leader=2, nodes=True):
        part = R.PartitionData(partition_index=0, error_code=error, leader_id=leader, leader_epoch=3,
                               high_watermark=10,
                               current_voters=[R.ReplicaState(replica_id=i, log_end_offset=10) for i in (1, 2)])
        listeners = {1: [R.Listener(name="PLAIN", host="a", port=1), R.Listener(name="CONTROLLER", host="b", port=2)],
                     2: [R.Listener(name="X", host="c", port=3)]}
        return R(topics=[R.TopicData(topic_name="t", partitions=[part])],
                 nodes=[R.Node(node_id=i, listeners=ls) for i, ls in listeners.items()] if nodes else [])

    assert _voters_from(answer(), ("CONTROLLER",)) == (Voter(1, "b", 2), Voter(2, "c", 3))
    assert _voters_from(answer(error=6), ("CONTROLLER",)) == ()  # NOT_LEADER_OR_FOLLOWER: ask again
    assert _voters_from(answer(leader=-1), ("CONTROLLER",)) == ()
    assert _voters_from(answer(nodes=False), ("CONTROLLER",)) == ()  # no endpoint: cannot use it


def test_every_default_is_written_once_in_the_keys_table():
    """``kraftwire.config.KEYS`` is the one place a default is written: ``Config``, ``NodeSettings`` and the Raft
    core's ``RaftConfig`` take theirs from it, and every key has exactly one ``Config`` field."""
    from dataclasses import fields

    from kraftwire.config import KEYS, Config, default
    from kraftwire.raft.config import RaftConfig
    from kraftwire.server.node.settings import NodeSettings

    config_fields = {f.name for f in fields(Config)} - {"unknown", "raw", "deprecated"}
    assert config_fields == {k.attr for k in KEYS}
    assert len({k.name for k in KEYS}) == len(KEYS)
    empty = Config()
    for k in KEYS:
        assert getattr(empty, k.attr) == k.default, k.name
    raft = RaftConfig(node_id=1, voters=frozenset({1}))
    for attr, key in [("election_timeout_ms", "controller.quorum.election.timeout.ms"),
                      ("election_backoff_max_ms", "controller.quorum.election.backoff.max.ms"),
                      ("fetch_timeout_ms", "controller.quorum.fetch.timeout.ms"),
                      ("request_timeout_ms", "controller.quorum.request.timeout.ms"),
                      ("retry_backoff_ms", "controller.quorum.retry.backoff.ms"),
                      ("append_linger_ms", "controller.quorum.append.linger.ms"),
                      ("high_watermark_linger_ms", "kraftwire.quorum.high.watermark.linger.ms"),
                      ("snapshot_max_bytes_between", "metadata.log.max.record.bytes.between.snapshots"),
                      ("snapshot_interval_ms", "metadata.log.max.snapshot.interval.ms")]:
        assert getattr(raft, attr) == default(key), key
    node_defaults = {f.name: f.default for f in fields(NodeSettings)}
    assert node_defaults["broker_session_timeout_ms"] == default("broker.session.timeout.ms") == 9000
    assert node_defaults["max_frame_bytes"] == default("socket.request.max.bytes")
    # a file without the keys gets the same values as the dataclass defaults
    s = settings(README)
    assert s.raft_config("x") == RaftConfig(node_id=s.node_id, voters=frozenset(v.node_id for v in s.voters),
                                            cluster_id="x")
    assert (s.broker_heartbeat_interval_ms, s.metrics_port, s.metrics_host) == (2000, 0, "127.0.0.1")


def test_old_names_of_kraftwires_own_keys_still_work_with_a_warning():
    """They moved out of Kafka's namespaces to ``kraftwire.``; the new name wins when both are given."""
    s = settings(README + "controller.quorum.high.watermark.linger.ms=0\nmetrics.port=9404\n"
                          "metadata.log.topic=old\nkraftwire.metadata.log.topic=new\n")
    assert s.raft_config("c").high_watermark_linger_ms == 0 and s.metrics_port == 9404
    assert s.config.metadata_log_topic == "new"
    assert len(s.warnings) == 3
    assert any("controller.quorum.high.watermark.linger.ms is deprecated" in w
               and "kraftwire.quorum.high.watermark.linger.ms" in w for w in s.warnings)
    assert not s.unknown_keys and not s.ignored_keys


@pytest.mark.parametrize("key, value, reason", [
    ("min.insync.replicas", "abc", "Not a number of type INT"),
    ("min.insync.replicas", "0", "Value must be at least 1"),
    ("log.retention.ms", "soon", "Not a number of type LONG"),
    ("log.cleanup.policy", "forever", "String must be one of: compact, delete"),
    ("unclean.leader.election.enable", "maybe", "Expected value to be either true or false"),
    ("log.segment.bytes", "100", "Value must be at least 1048576"),
])
def test_a_bad_value_of_any_kafka_key_stops_the_node_naming_key_and_value(key, value, reason):
    """Kafka refuses to start on these (KafkaConfig's ConfigDef); a key read only as a topic default must be checked
    at start-up too, not fail later on the first partition."""
    with pytest.raises(ConfigError) as info:
        NodeSettings.from_properties(parse_properties(README + f"{key}={value}\n"))
    assert (info.value.key, info.value.value, info.value.reason) == (key, value, reason)


def test_the_shipped_server_properties_are_kafkas_values_and_load_without_warnings():
    """config/server.properties carries the values Kafka's shipped file sets (a group forms at once: 0 ms initial
    rebalance delay; one replica for the internal topics on one node; retention and segments written out), and a node
    loads it without a warning (nothing in it is refused or without effect)."""
    import os

    from kraftwire.config import load_properties

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "config",
                        "server.properties")
    props = load_properties(path)
    assert {k: props[k] for k in ("group.initial.rebalance.delay.ms", "offsets.topic.replication.factor",
                                  "transaction.state.log.replication.factor", "transaction.state.log.min.isr",
                                  "num.partitions", "log.retention.hours", "log.segment.bytes",
                                  "log.retention.check.interval.ms", "num.network.threads", "num.io.threads")} == {
        "group.initial.rebalance.delay.ms": "0", "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
        "num.partitions": "1", "log.retention.hours": "168", "log.segment.bytes": "1073741824",
        "log.retention.check.interval.ms": "300000", "num.network.threads": "3", "num.io.threads": "8"}
    assert NodeSettings.from_file(path).warnings == ()
