"""Effective topic configuration through the broker layers (``kafka_configs.BrokerConfigs``), as Kafka's LogConfig
and KafkaConfig resolve it. Mirrors KafkaConfigTest's testLogRetentionTime* and testLogRollTime* cases, and the
synonym lists and sources Kafka 4.4's DescribeConfigs returned for the same files (run against a real Kafka)."""

from __future__ import annotations

import pytest

from kraftwire import kafka_configs as kc
from kraftwire.kafka_configs import (DEFAULT_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
                                     STATIC_BROKER_CONFIG, TOPIC_CONFIG, BrokerConfigs)


def test_log_retention_time_hours_provided():  # KafkaConfigTest.testLogRetentionTimeHoursProvided
    assert BrokerConfigs(static={"log.retention.hours": "1"}).topic_default("retention.ms") == str(60 * 60 * 1000)


def test_log_retention_time_minutes_provided():  # KafkaConfigTest.testLogRetentionTimeMinutesProvided
    assert BrokerConfigs(static={"log.retention.minutes": "30"}).topic_default("retention.ms") == str(30 * 60 * 1000)


def test_log_retention_time_ms_provided():  # KafkaConfigTest.testLogRetentionTimeMsProvided
    assert BrokerConfigs(static={"log.retention.ms": "1800000"}).topic_default("retention.ms") == "1800000"


def test_log_retention_time_no_config_provided():  # KafkaConfigTest.testLogRetentionTimeNoConfigProvided
    assert BrokerConfigs().topic_default("retention.ms") == str(24 * 7 * 60 * 60 * 1000)


def test_log_retention_time_both_minutes_and_hours_provided():  # ...testLogRetentionTimeBothMinutesAndHoursProvided
    assert BrokerConfigs(static={"log.retention.minutes": "30", "log.retention.hours": "1"}).topic_default(
        "retention.ms") == str(30 * 60 * 1000)


def test_log_retention_time_both_minutes_and_ms_provided():  # ...testLogRetentionTimeBothMinutesAndMsProvided
    assert BrokerConfigs(static={"log.retention.ms": "1800000", "log.retention.minutes": "10"}).topic_default(
        "retention.ms") == "1800000"


def test_log_roll_time_both_ms_and_hours_provided():  # KafkaConfigTest.testLogRollTimeBothMsAndHoursProvided
    assert BrokerConfigs(static={"log.roll.ms": "1800000", "log.roll.hours": "1"}).topic_default(
        "segment.ms") == "1800000"
    assert BrokerConfigs(static={"log.roll.hours": "1"}).topic_default("segment.ms") == "3600000"


def test_a_more_precise_synonym_in_a_weaker_layer_still_wins():
    # Kafka merges the dynamic layers over the file, then reads log.retention.ms before .hours
    b = BrokerConfigs(static={"log.retention.ms": "5000"}, cluster={"log.retention.hours": "2"})
    assert b.topic_default("retention.ms") == "5000"


def test_layers_resolve_strongest_first():
    b = BrokerConfigs(static={"min.insync.replicas": "2"}, cluster={"min.insync.replicas": "3"},
                      broker={"min.insync.replicas": "1"})
    assert b.topic_value("min.insync.replicas", {}) == "1"
    assert b.topic_value("min.insync.replicas", {"min.insync.replicas": "4"}) == "4"
    assert BrokerConfigs(static={"min.insync.replicas": "2"}, cluster={"min.insync.replicas": "3"}).topic_value(
        "min.insync.replicas", {}) == "3"
    assert BrokerConfigs(static={"min.insync.replicas": "2"}).topic_value("min.insync.replicas", {}) == "2"
    assert BrokerConfigs().topic_value("min.insync.replicas", {}) == "1"


def test_describe_entries_list_the_synonyms_as_kafka_4_4():
    """Seen on Kafka 4.4 with min.insync.replicas=2, log.retention.ms=3600000 and log.retention.hours=5 in its file,
    a cluster default min.insync.replicas=2 and a topic with retention.ms=1000."""
    b = BrokerConfigs(static={"min.insync.replicas": "2", "log.retention.ms": "3600000", "log.retention.hours": "5"},
                      cluster={"min.insync.replicas": "2"})
    assert b.topic_entry("retention.ms", {"retention.ms": "1000"}) == ("1000", TOPIC_CONFIG, [
        ("retention.ms", "1000", TOPIC_CONFIG), ("log.retention.ms", "3600000", STATIC_BROKER_CONFIG),
        ("log.retention.hours", "5", STATIC_BROKER_CONFIG), ("log.retention.hours", "168", DEFAULT_CONFIG)])
    assert b.topic_entry("min.insync.replicas", {}) == ("2", DYNAMIC_DEFAULT_BROKER_CONFIG, [
        ("min.insync.replicas", "2", DYNAMIC_DEFAULT_BROKER_CONFIG), ("min.insync.replicas", "2", STATIC_BROKER_CONFIG),
        ("min.insync.replicas", "1", DEFAULT_CONFIG)])
    assert b.topic_entry("errors.deadletterqueue.group.enable", {}) == ("false", DEFAULT_CONFIG, [])
    # the list starts at the primary synonym: only log.roll.hours has a default, so segment.ms lists nothing
    assert b.topic_entry("segment.ms", {}) == ("604800000", DEFAULT_CONFIG, [])
    assert b.topic_entry("flush.ms", {}) == (str(2**63 - 1), DEFAULT_CONFIG, [])
    assert BrokerConfigs(static={"log.roll.ms": "5000"}).topic_entry("segment.ms", {}) == (
        "5000", STATIC_BROKER_CONFIG, [("log.roll.ms", "5000", STATIC_BROKER_CONFIG),
                                       ("log.roll.hours", "168", DEFAULT_CONFIG)])
    assert BrokerConfigs(broker={"message.max.bytes": "9000"}).topic_entry("max.message.bytes", {})[:2] == (
        "9000", DYNAMIC_BROKER_CONFIG)


@pytest.mark.parametrize("name,value,reason", [
    ("min.cleanable.dirty.ratio", "2", "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: "
                                       "Value must be no more than 1"),
    ("segment.bytes", "10", "Invalid value 10 for configuration segment.bytes: Value must be at least 1048576"),
    ("message.timestamp.type", "x", "Invalid value x for configuration message.timestamp.type: String must be one "
                                    "of: CreateTime, LogAppendTime"),
    ("unclean.leader.election.enable", "maybe", "Invalid value maybe for configuration "
                                                "unclean.leader.election.enable: Expected value to be either true or false"),
    ("no.such.key", "1", "Unknown topic config name: no.such.key"),
    ("segment.bytes", "1048576", ""),
])
def test_topic_values_are_checked_with_kafkas_messages(name, value, reason):
    assert kc.check_topic(name, value) == reason
