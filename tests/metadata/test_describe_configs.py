"""DescribeConfigs from the image: a topic's keys with TOPIC_CONFIG where a ConfigRecord sets them; this broker's
file values under the dynamic ones, strongest first in the synonyms; the cluster defaults alone under the empty name;
Kafka's errors for an unknown topic, another broker and other resource types."""

from __future__ import annotations

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.ids import UUID
from kraftwire.metadata.describe_configs import (BROKER, DEFAULT_CONFIG, DYNAMIC_BROKER_CONFIG,
                                                 DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, TOPIC,
                                                 TOPIC_CONFIG, describe_configs)
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion as A
from kraftwire.protocol import codec
from kraftwire.protocol import messages as m

DC = m.DescribeConfigsRequest
STATIC = [("log.dirs", "/tmp/k", STATIC_BROKER_CONFIG, 7, "dirs"), ("num.partitions", "1", DEFAULT_CONFIG, 3, None)]


def _image():
    return replay(MetadataImage(), [
        A(m.TopicRecord(name="orders", topic_id=UUID(int=9)), 0),
        A(m.ConfigRecord(resource_type=TOPIC, resource_name="orders", name="retention.ms", value="1000"), 0),
        A(m.ConfigRecord(resource_type=BROKER, resource_name="", name="num.partitions", value="3"), 0),
        A(m.ConfigRecord(resource_type=BROKER, resource_name="1", name="num.partitions", value="6"), 0),
        A(m.ConfigRecord(resource_type=BROKER, resource_name="", name="log.cleaner.threads", value="2"), 0),
    ])


def _ask(*resources, synonyms=True, version=4):
    body = describe_configs(_image(), DC(resources=[DC.DescribeConfigsResource(resource_type=t, resource_name=n,
                                                                                configuration_keys=k)
                                                     for t, n, k in resources],
                                          include_synonyms=synonyms, include_documentation=True),
                            version, node_id=1, static=STATIC, props={"log.dirs": "/tmp/k"})
    codec.encode(body, version)
    return body.results


def test_topic_keys_show_the_topics_own_values():
    [r] = _ask((TOPIC, "orders", None))
    by = {c.name: c for c in r.configs}
    assert r.error_code == ec.NONE and len(by) > 30
    assert (by["retention.ms"].value, by["retention.ms"].config_source) == ("1000", TOPIC_CONFIG)
    assert (by["cleanup.policy"].value, by["cleanup.policy"].config_source) == ("delete", DEFAULT_CONFIG)
    [only] = _ask((TOPIC, "orders", ["segment.ms"]))
    assert [c.name for c in only.configs] == ["segment.ms"]


def test_broker_values_are_dynamic_over_cluster_default_over_file():
    [r] = _ask((BROKER, "1", None))
    by = {c.name: c for c in r.configs}
    parts = by["num.partitions"]
    assert (parts.value, parts.config_source) == ("6", DYNAMIC_BROKER_CONFIG)
    assert [(s.value, s.source) for s in parts.synonyms] == [("6", DYNAMIC_BROKER_CONFIG),
                                                              ("3", DYNAMIC_DEFAULT_BROKER_CONFIG),
                                                              ("1", DEFAULT_CONFIG)]
    assert (by["log.dirs"].value, by["log.dirs"].config_source, by["log.dirs"].read_only) == (
        "/tmp/k", STATIC_BROKER_CONFIG, True)
    assert by["log.cleaner.threads"].config_source == DYNAMIC_DEFAULT_BROKER_CONFIG
    [default] = _ask((BROKER, "", None))
    assert sorted((c.name, c.value) for c in default.configs) == [("log.cleaner.threads", "2"), ("num.partitions", "3")]


def test_errors():
    """As Kafka 4.4's ConfigHelper answered them (tests/conformance, DescribeConfigs scenarios): no message on an
    unknown topic or a success (the schema's ""), Topic.validate's reason for an illegal name, its words for a broker
    name that is no number, INVALID_REQUEST's own words for an unknown resource type (BROKER_LOGGER's refusals:
    tests/metadata/test_broker_loggers.py)."""
    unknown, metadata, other, logger, illegal, word, known = _ask(
        (TOPIC, "nope", None), (TOPIC, "__cluster_metadata", None), (BROKER, "2", None), (99, "1", None),
        (TOPIC, "a/b", None), (BROKER, "one", None), (BROKER, "1", ["num.partitions"]))
    assert unknown.error_code == metadata.error_code == ec.UNKNOWN_TOPIC_OR_PARTITION
    assert unknown.error_message == known.error_message == ""
    assert other.error_code == logger.error_code == word.error_code == ec.INVALID_REQUEST
    assert other.error_message == "Unexpected broker id, expected 1 or empty string, but received 2"
    assert word.error_message == "Broker id must be an integer, but it is: one"
    assert logger.error_message.startswith("This most likely occurs because of a request being malformed")
    assert (illegal.error_code, illegal.error_message) == (
        ec.INVALID_TOPIC_EXCEPTION,
        "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")


def test_every_broker_key_is_described_as_kafka_4_4_describes_it():
    """What a Kafka 4.4 broker answered (kafka-configs --describe --all --entity-type brokers --entity-name 1) with
    min.insync.replicas=2, log.retention.ms=3600000, log.retention.hours=5 and message.max.bytes=500000 in its file
    and a cluster default min.insync.replicas=2: every key of its ConfigDef, the value the key's own, synonyms
    source by source from the key on, passwords hidden."""
    from kraftwire import kafka_configs

    image = replay(MetadataImage(), [A(m.ConfigRecord(resource_type=BROKER, resource_name="", name="min.insync.replicas",
                                                      value="2"), 0)])
    props = {"node.id": "1", "min.insync.replicas": "2", "log.retention.ms": "3600000", "log.retention.hours": "5",
             "message.max.bytes": "500000"}
    body = describe_configs(image, DC(resources=[DC.DescribeConfigsResource(resource_type=BROKER, resource_name="1",
                                                                            configuration_keys=None)],
                                      include_synonyms=True, include_documentation=False),
                            4, node_id=1, static=[], props=props)
    codec.encode(body, 4)
    by = {c.name: (c.value, c.config_source, c.is_sensitive, [(s.name, s.value, s.source) for s in c.synonyms])
          for c in body.results[0].configs}
    assert set(kafka_configs.BROKER) <= set(by)
    S, D, DD = STATIC_BROKER_CONFIG, DEFAULT_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG
    assert by["log.retention.hours"] == ("5", S, False, [("log.retention.hours", "5", S),
                                                         ("log.retention.hours", "168", D)])
    assert by["log.retention.minutes"] == (None, D, False, [])
    assert by["log.retention.ms"] == ("3600000", S, False, [("log.retention.ms", "3600000", S),
                                                            ("log.retention.hours", "5", S),
                                                            ("log.retention.hours", "168", D)])
    assert by["min.insync.replicas"] == ("2", DD, False, [("min.insync.replicas", "2", DD),
                                                          ("min.insync.replicas", "2", S),
                                                          ("min.insync.replicas", "1", D)])
    assert by["message.max.bytes"] == ("500000", S, False, [("message.max.bytes", "500000", S),
                                                            ("message.max.bytes", "1048588", D)])
    assert by["num.io.threads"] == ("8", D, False, [("num.io.threads", "8", D)])
    assert by["node.id"] == ("1", S, False, [("node.id", "1", S)])
    assert by["ssl.keystore.password"] == (None, D, True, [])
    assert by["listeners"][0] == "PLAINTEXT://:9092"


def test_keys_beyond_kafkas_table_are_described_only_when_set_and_first():
    """Kafka describes its own non-internal keys always, and any other key only when the properties file (or a
    dynamic config) sets it, ahead of the others (ConfigHelperUtils: the originals it does not define, then its
    non-internal values); the conformance run's broker-all found kraftwire describing unset internal, authorizer and
    kraftwire keys."""
    static = STATIC + [("super.users", "", DEFAULT_CONFIG, 2, None),
                       ("kraftwire.metrics.port", "9", STATIC_BROKER_CONFIG, 3, "ours")]

    def names(props):
        body = describe_configs(_image(), DC(resources=[DC.DescribeConfigsResource(
            resource_type=BROKER, resource_name="1", configuration_keys=None)],
                                             include_synonyms=False, include_documentation=False),
                                4, node_id=1, static=static, props=props)
        return [c.name for c in body.results[0].configs]

    unset = names({"log.dirs": "/tmp/k"})
    assert "super.users" not in unset and "kraftwire.metrics.port" not in unset and "log.dirs" in unset
    set_ = names({"log.dirs": "/tmp/k", "kraftwire.metrics.port": "9", "no.such.key": "x"})
    assert set(set_[:2]) == {"kraftwire.metrics.port", "no.such.key"} and set_[2:] == unset


def test_every_topic_key_has_our_documentation():
    """IncludeDocumentation answers a topic key with kraftwire's own words (``topic_docs``), as Kafka answers with
    its own: every key of Kafka's topic table has a line, and no other key does."""
    from kraftwire.metadata.controller.topic_configs import TOPIC_CONFIGS
    from kraftwire.metadata.topic_docs import TOPIC_DOCS

    assert set(TOPIC_DOCS) == set(TOPIC_CONFIGS)
    [r] = _ask((TOPIC, "orders", ["retention.ms"]))
    assert r.configs[0].documentation == TOPIC_DOCS["retention.ms"]
