"""Frozen configuration with Kafka's key names and defaults, read from a Java properties file.

A leaf module (it imports only ``kraftwire.errors`` and ``kraftwire.properties``). Three pieces:

* ``parse_properties(text)`` / ``load_properties(path)``: the Java ``.properties`` syntax, from
  ``kraftwire.properties``.
* ``KEYS``: one table of every key kraftwire reads — Kafka's name, its type, its default — so the defaults
  live in one place (facts: KRaftConfigs / QuorumConfig, see kraft-facts.md §2).
* ``Config``: a frozen dataclass built from a properties mapping; ``validate()`` raises ``ConfigError``
  naming the key and the value.

Keys kraftwire does not know are kept in ``Config.unknown`` (the node decides how to warn about them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

from kraftwire.errors import ConfigError
from kraftwire.properties import load_properties, parse_properties

__all__ = [
    "Config",
    "ConfigKey",
    "KEYS",
    "default",
    "METADATA_TOPIC",
    "parse_properties",
    "load_properties",
    "load_config",
]

#: Kafka's metadata topic, the default of ``kraftwire.metadata.log.topic``.
METADATA_TOPIC = "__cluster_metadata"

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
_HOUR_MS = 60 * 60 * 1000
_WEEK_MS = 7 * 24 * _HOUR_MS


# --------------------------------------------------------------------------------------------- value parsers


def _int(key: str, value: str) -> int:
    try:
        return int(value.strip())
    except ValueError:
        raise ConfigError(key, value, "expected an integer") from None


def _bool(key: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise ConfigError(key, value, "expected true or false")


def _at_least(low: int):
    def parse(key: str, value: str) -> int:
        n = _int(key, value)
        if n < low:
            raise ConfigError(key, value, f"must be at least {low}")
        return n
    return parse


def _ratio(key: str, value: str) -> float:
    try:
        v = float(value.strip())
    except ValueError:
        raise ConfigError(key, value, "expected a number") from None
    if not 0 <= v <= 1:
        raise ConfigError(key, value, "must be between 0 and 1")
    return v


def _str(key: str, value: str) -> str:
    return value.strip()


def _opt_str(key: str, value: str) -> str | None:
    v = value.strip()
    return v or None


def _opt_int(key: str, value: str) -> int | None:
    return _int(key, value) if value.strip() else None


#: the authorizer a KRaft cluster configures (the ZooKeeper-era AclAuthorizer has no KRaft form); the KIP-392 selector
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def _only(known: str, what: str):
    """A class-name key kraftwire has one class for, ``known`` (Kafka's name), or empty for none."""
    def parse(key: str, value: str) -> str:
        if value.strip() not in ("", known):
            raise ConfigError(key, value, f"the only {what} is {known}, or empty for none")
        return value.strip()
    return parse


def _list(key: str, value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One configuration key: Kafka's name, the ``Config`` attribute, the parser and the default."""

    name: str
    attr: str
    parse: Callable[[str, str], Any]
    default: Any
    doc: str = ""


#: kraftwire's own keys used to sit in Kafka's namespaces; they moved to ``kraftwire.``, so that no Kafka key of a
#: later version can collide with them. The old names still work, with a warning (old name -> new name).
RENAMED_KEYS: dict[str, str] = {
    "controller.quorum.high.watermark.linger.ms": "kraftwire.quorum.high.watermark.linger.ms",
    "metadata.log.topic": "kraftwire.metadata.log.topic",
    "metrics.port": "kraftwire.metrics.port",
    "metrics.host": "kraftwire.metrics.host",
}

#: Every key kraftwire reads, with Kafka's default. The node engineer appends to this table.
KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("node.id", "node_id", _int, -1, "this node's id"),
    ConfigKey("process.roles", "process_roles", _list, (), "broker, controller or both"),
    ConfigKey("log.dirs", "log_dirs", _list, (), "comma-separated log directories"),
    ConfigKey("log.dir", "log_dir", _str, "/tmp/kafka-logs", "the log directory used when log.dirs is not set"),
    ConfigKey("metadata.log.dir", "metadata_log_dir", _opt_str, None, "the metadata log directory (default: first of log.dirs)"),
    ConfigKey("kraftwire.metadata.log.topic", "metadata_log_topic", _str, METADATA_TOPIC, "kraftwire: name of the Raft topic"),
    ConfigKey("metadata.log.segment.bytes", "metadata_log_segment_bytes", _int, 1 * GiB, "roll a segment at this size"),
    ConfigKey("metadata.log.segment.min.bytes", "metadata_log_segment_min_bytes", _int, 8 * MiB, "internal: lower bound of segment.bytes"),
    ConfigKey("metadata.log.segment.ms", "metadata_log_segment_ms", _int, _WEEK_MS, "roll a segment at this age"),
    ConfigKey("metadata.max.retention.bytes", "metadata_max_retention_bytes", _int, 100 * MiB, "retention by size (-1: off)"),
    ConfigKey("metadata.max.retention.ms", "metadata_max_retention_ms", _int, _WEEK_MS, "retention by age (-1: off)"),
    ConfigKey(
        "metadata.log.max.record.bytes.between.snapshots",
        "metadata_log_max_record_bytes_between_snapshots",
        _int,
        20 * MiB,
        "snapshot after this many new bytes",
    ),
    ConfigKey("metadata.log.max.snapshot.interval.ms", "metadata_log_max_snapshot_interval_ms", _int, _HOUR_MS, "snapshot at least this often"),
    ConfigKey("metadata.max.idle.interval.ms", "metadata_max_idle_interval_ms", _int, 500, "idle no-op record interval"),
    ConfigKey("log.index.interval.bytes", "log_index_interval_bytes", _int, 4096, "bytes between sparse index entries"),
    ConfigKey("controller.quorum.voters", "controller_quorum_voters", _list, (), "id@host:port,..."),
    ConfigKey("controller.quorum.bootstrap.servers", "controller_quorum_bootstrap_servers", _list, (), "host:port,..."),
    ConfigKey("controller.quorum.election.timeout.ms", "controller_quorum_election_timeout_ms", _int, 1000),
    ConfigKey("controller.quorum.fetch.timeout.ms", "controller_quorum_fetch_timeout_ms", _int, 2000),
    ConfigKey("controller.quorum.election.backoff.max.ms", "controller_quorum_election_backoff_max_ms", _int, 1000),
    ConfigKey("controller.quorum.append.linger.ms", "controller_quorum_append_linger_ms", _int, 25),
    ConfigKey("controller.quorum.request.timeout.ms", "controller_quorum_request_timeout_ms", _int, 2000),
    ConfigKey("controller.quorum.retry.backoff.ms", "controller_quorum_retry_backoff_ms", _int, 20),
    ConfigKey("controller.listener.names", "controller_listener_names", _list, (), "listener names used by controllers"),
    ConfigKey("listeners", "listeners", _list, (), "NAME://host:port,..."),
    ConfigKey("advertised.listeners", "advertised_listeners", _list, ()),
    ConfigKey("listener.security.protocol.map", "listener_security_protocol_map", _list, ()),
    ConfigKey("broker.heartbeat.interval.ms", "broker_heartbeat_interval_ms", _int, 2000,
              "how often a broker heartbeats to the active controller"),
    ConfigKey("broker.session.timeout.ms", "broker_session_timeout_ms", _int, 9000,
              "a broker without a heartbeat for this long is fenced"),
    ConfigKey("socket.request.max.bytes", "socket_request_max_bytes", _int, 100 * MiB, "the largest request frame"),
    ConfigKey("kraftwire.quorum.high.watermark.linger.ms", "kraftwire_quorum_high_watermark_linger_ms", _int, 5,
              "kraftwire: how long the leader holds a follower fetch whose only news is the high watermark"),
    ConfigKey("num.partitions", "num_partitions", _at_least(1), 1, "partitions of an auto-created topic"),
    ConfigKey("max.request.partition.size.limit", "max_request_partition_size_limit", _at_least(1), 2000,
              "the most partitions one DescribeTopicPartitions answer carries"),
    ConfigKey("default.replication.factor", "default_replication_factor", _at_least(1), 1,
              "replication factor of an auto-created topic"),
    ConfigKey("auto.create.topics.enable", "auto_create_topics_enable", _bool, True,
              "create a topic a client's Metadata request names, when the request allows it"),
    ConfigKey("broker.rack", "broker_rack", _opt_str, None, "the rack of this broker (rack-aware replica placement)"),
    ConfigKey("replica.selector.class", "replica_selector_class", _only(RACK_AWARE_SELECTOR, "replica selector"), "",
              f"{RACK_AWARE_SELECTOR} sends consumers to a follower in their rack (KIP-392; empty: none)"),
    ConfigKey("authorizer.class.name", "authorizer_class_name", _only(STANDARD_AUTHORIZER, "authorizer"), "",
              "org.apache.kafka.metadata.authorizer.StandardAuthorizer turns on ACL checks (empty: none)"),
    ConfigKey("super.users", "super_users", _str, "",
              "semicolon-separated principals (User:admin) allowed everything when ACLs are checked"),
    ConfigKey("allow.everyone.if.no.acl.found", "allow_everyone_if_no_acl_found", _bool, False,
              "allow a request on a resource no ACL names at all"),
    ConfigKey("auto.leader.rebalance.enable", "auto_leader_rebalance_enable", _bool, True,
              "the active controller moves leaderships back to preferred replicas"),
    ConfigKey("leader.imbalance.check.interval.seconds", "leader_imbalance_check_interval_seconds", _at_least(1), 300,
              "how often the active controller looks for leaderships to move back"),
    ConfigKey("offsets.topic.num.partitions", "offsets_topic_num_partitions", _at_least(1), 50,
              "partitions of __consumer_offsets, created on first use"),
    ConfigKey("offsets.topic.replication.factor", "offsets_topic_replication_factor", _at_least(1), 3,
              "replication factor of __consumer_offsets (Kafka's single-node configs set 1)"),
    ConfigKey("offsets.topic.segment.bytes", "offsets_topic_segment_bytes", _at_least(1), 100 * MiB,
              "segment size of __consumer_offsets"),
    ConfigKey("offsets.commit.timeout.ms", "offsets_commit_timeout_ms", _at_least(1), 5000,
              "how long a group write waits for the replicas before COORDINATOR_NOT_AVAILABLE"),
    ConfigKey("transaction.state.log.num.partitions", "transaction_state_log_num_partitions", _at_least(1), 50,
              "partitions of __transaction_state, created on first use"),
    ConfigKey("transaction.state.log.replication.factor", "transaction_state_log_replication_factor", _at_least(1),
              3, "replication factor of __transaction_state (Kafka's single-node configs set 1)"),
    ConfigKey("transaction.state.log.min.isr", "transaction_state_log_min_isr", _at_least(1), 2,
              "min.insync.replicas of __transaction_state (Kafka's single-node configs set 1)"),
    ConfigKey("transaction.state.log.segment.bytes", "transaction_state_log_segment_bytes", _at_least(1), 100 * MiB,
              "segment size of __transaction_state"),
    ConfigKey("transaction.max.timeout.ms", "transaction_max_timeout_ms", _at_least(1), 900_000,
              "the longest transaction.timeout.ms a transactional producer may ask for"),
    ConfigKey("transaction.abort.timed.out.transaction.cleanup.interval.ms",
              "transaction_abort_timed_out_transaction_cleanup_interval_ms", _at_least(1), 10_000,
              "how often the transaction coordinator aborts transactions open past their timeout"),
    ConfigKey("transactional.id.expiration.ms", "transactional_id_expiration_ms", _at_least(1), 604_800_000,
              "a transactional id idle this long (no transaction, no InitProducerId) is removed"),
    ConfigKey("transaction.remove.expired.transaction.cleanup.interval.ms",
              "transaction_remove_expired_transaction_cleanup_interval_ms", _at_least(1), 3_600_000,
              "how often the transaction coordinator removes expired transactional ids"),
    ConfigKey("producer.id.expiration.ms", "producer_id_expiration_ms", _at_least(1), 86_400_000,
              "a partition forgets an idempotent producer idle this long without an open transaction"),
    ConfigKey("producer.id.expiration.check.interval.ms", "producer_id_expiration_check_interval_ms", _at_least(1),
              600_000, "how often partitions look for expired producer ids"),
    ConfigKey("transaction.partition.verification.enable", "transaction_partition_verification_enable", _bool, True,
              "a partition leader asks the transaction coordinator whether the partition is in the producer's "
              "transaction before its first transactional write (KIP-890)"),
    ConfigKey("offsets.retention.minutes", "offsets_retention_minutes", _at_least(1), 10080,
              "committed offsets of an empty group expire after this long"),
    ConfigKey("offsets.retention.check.interval.ms", "offsets_retention_check_interval_ms", _at_least(1), 600_000,
              "how often expired offsets are looked for"),
    ConfigKey("offset.metadata.max.bytes", "offset_metadata_max_bytes", _at_least(0), 4096,
              "the largest metadata string of a committed offset"),
    ConfigKey("group.min.session.timeout.ms", "group_min_session_timeout_ms", _at_least(0), 6000,
              "the shortest session timeout a group member may ask for"),
    ConfigKey("group.max.session.timeout.ms", "group_max_session_timeout_ms", _at_least(0), 1_800_000,
              "the longest session timeout a group member may ask for"),
    ConfigKey("group.initial.rebalance.delay.ms", "group_initial_rebalance_delay_ms", _at_least(0), 3000,
              "how long the first rebalance of an empty group waits for more members"),
    ConfigKey("group.max.size", "group_max_size", _at_least(1), 2**31 - 1, "the most members a group may have"),
    ConfigKey("group.consumer.session.timeout.ms", "group_consumer_session_timeout_ms", _at_least(1), 45_000,
              "a KIP-848 consumer group member silent this long leaves its group"),
    ConfigKey("group.consumer.heartbeat.interval.ms", "group_consumer_heartbeat_interval_ms", _at_least(1), 5000,
              "how often KIP-848 consumer group members are told to heartbeat"),
    ConfigKey("log.cleaner.enable", "log_cleaner_enable", _bool, True, "compact the topics whose cleanup.policy "
              "includes compact"),
    ConfigKey("log.cleaner.backoff.ms", "log_cleaner_backoff_ms", _at_least(0), 15_000,
              "how long the cleaner waits when there is nothing to clean"),
    ConfigKey("log.cleaner.dedupe.buffer.size", "log_cleaner_dedupe_buffer_size", _at_least(1), 134_217_728,
              "the memory of the cleaner's offset map (24 bytes per key)"),
    ConfigKey("log.cleaner.min.cleanable.ratio", "log_cleaner_min_cleanable_ratio", _ratio, 0.5,
              "the broker's min.cleanable.dirty.ratio"),
    ConfigKey("log.cleaner.delete.retention.ms", "log_cleaner_delete_retention_ms", _at_least(0), 86_400_000,
              "the broker's delete.retention.ms: how long tombstones stay"),
    ConfigKey("log.cleaner.min.compaction.lag.ms", "log_cleaner_min_compaction_lag_ms", _at_least(0), 0,
              "the broker's min.compaction.lag.ms"),
    ConfigKey("replica.lag.time.max.ms", "replica_lag_time_max_ms", _at_least(1), 30_000,
              "a follower not caught up for this long leaves the ISR"),
    ConfigKey("fetch.max.bytes", "fetch_max_bytes", _at_least(1024), 55 * MiB,
              "the most record bytes one Fetch answer carries (caps the request's max_bytes)"),
    ConfigKey("replica.fetch.response.max.bytes", "replica_fetch_response_max_bytes", _at_least(0), 10 * MiB,
              "the max_bytes of a replica fetcher's Fetch requests"),
    ConfigKey("replica.fetch.max.bytes", "replica_fetch_max_bytes", _at_least(0), 1 * MiB,
              "the partition_max_bytes of a replica fetcher's Fetch requests"),
    ConfigKey("max.incremental.fetch.session.cache.slots", "max_incremental_fetch_session_cache_slots",
              _at_least(0), 1000, "the most incremental fetch sessions (KIP-227) a broker keeps, in 8 shards"),
    ConfigKey("quota.window.num", "quota_window_num", _at_least(1), 11, "client quota rate samples (replica.quotas)"),
    ConfigKey("quota.window.size.seconds", "quota_window_size_seconds", _at_least(1), 1, "a client quota sample's length"),
    ConfigKey("controller.quota.window.num", "controller_quota_window_num", _at_least(1), 11,
              "controller_mutation_rate token bucket samples: its burst is this many windows' worth"),
    ConfigKey("controller.quota.window.size.seconds", "controller_quota_window_size_seconds", _at_least(1), 1,
              "a controller mutation quota window's length"),
    ConfigKey("log.retention.hours", "log_retention_hours", _int, 168,
              "topic partitions' retention.ms default, in hours (log.retention.minutes and .ms win)"),
    ConfigKey("log.retention.minutes", "log_retention_minutes", _opt_int, None, "retention.ms default in minutes"),
    ConfigKey("log.retention.ms", "log_retention_ms", _opt_int, None, "retention.ms default (-1: keep forever)"),
    ConfigKey("log.retention.bytes", "log_retention_bytes", _int, -1, "retention.bytes default (-1: no limit)"),
    ConfigKey("log.retention.check.interval.ms", "log_retention_check_interval_ms", _at_least(1), 300_000,
              "how often brokers delete the segments retention or DeleteRecords left behind"),
    ConfigKey("log.flush.interval.messages", "log_flush_interval_messages", _at_least(1), 2**63 - 1,
              "flush.messages default: fsync a partition log once this many records are unflushed"),
    ConfigKey("log.flush.interval.ms", "log_flush_interval_ms", _opt_int, None,
              "flush.ms default: fsync a partition log once its oldest unflushed record is this old"),
    ConfigKey("kraftwire.metrics.port", "metrics_port", _int, 0, "kraftwire: Prometheus metrics port (0: off)"),
    ConfigKey("kraftwire.metrics.host", "metrics_host", _str, "127.0.0.1", "kraftwire: Prometheus metrics bind address"),
    ConfigKey("connections.max.reauth.ms", "connections_max_reauth_ms", _int, 0,
              "KIP-368 SASL session lifetime (0: off); also listener.name.<l>[.<mechanism>].connections.max.reauth.ms"),
)

_BY_NAME: dict[str, ConfigKey] = {k.name: k for k in KEYS}
_NAME_OF: dict[str, str] = {k.attr: k.name for k in KEYS}


def default(name: str) -> Any:
    """The default of key *name*, from ``KEYS`` (the one place defaults are written)."""
    return _BY_NAME[name].default


@dataclass(frozen=True)
class Config:
    """Parsed configuration. Build with ``Config.from_properties`` (or ``load_config``); all fields have
    Kafka's defaults, so ``Config()`` is a valid (if not very useful) configuration."""

    node_id: int = default("node.id")
    process_roles: tuple[str, ...] = default("process.roles")
    log_dirs: tuple[str, ...] = default("log.dirs")
    log_dir: str = default("log.dir")
    metadata_log_dir: str | None = default("metadata.log.dir")
    metadata_log_topic: str = default("kraftwire.metadata.log.topic")
    metadata_log_segment_bytes: int = default("metadata.log.segment.bytes")
    metadata_log_segment_min_bytes: int = default("metadata.log.segment.min.bytes")
    metadata_log_segment_ms: int = default("metadata.log.segment.ms")
    metadata_max_retention_bytes: int = default("metadata.max.retention.bytes")
    metadata_max_retention_ms: int = default("metadata.max.retention.ms")
    metadata_log_max_record_bytes_between_snapshots: int = default("metadata.log.max.record.bytes.between.snapshots")
    metadata_log_max_snapshot_interval_ms: int = default("metadata.log.max.snapshot.interval.ms")
    metadata_max_idle_interval_ms: int = default("metadata.max.idle.interval.ms")
    log_index_interval_bytes: int = default("log.index.interval.bytes")
    controller_quorum_voters: tuple[str, ...] = default("controller.quorum.voters")
    controller_quorum_bootstrap_servers: tuple[str, ...] = default("controller.quorum.bootstrap.servers")
    controller_quorum_election_timeout_ms: int = default("controller.quorum.election.timeout.ms")
    controller_quorum_fetch_timeout_ms: int = default("controller.quorum.fetch.timeout.ms")
    controller_quorum_election_backoff_max_ms: int = default("controller.quorum.election.backoff.max.ms")
    controller_quorum_append_linger_ms: int = default("controller.quorum.append.linger.ms")
    controller_quorum_request_timeout_ms: int = default("controller.quorum.request.timeout.ms")
    controller_quorum_retry_backoff_ms: int = default("controller.quorum.retry.backoff.ms")
    controller_listener_names: tuple[str, ...] = default("controller.listener.names")
    listeners: tuple[str, ...] = default("listeners")
    advertised_listeners: tuple[str, ...] = default("advertised.listeners")
    listener_security_protocol_map: tuple[str, ...] = default("listener.security.protocol.map")
    broker_heartbeat_interval_ms: int = default("broker.heartbeat.interval.ms")
    broker_session_timeout_ms: int = default("broker.session.timeout.ms")
    socket_request_max_bytes: int = default("socket.request.max.bytes")
    kraftwire_quorum_high_watermark_linger_ms: int = default("kraftwire.quorum.high.watermark.linger.ms")
    num_partitions: int = default("num.partitions")
    max_request_partition_size_limit: int = default("max.request.partition.size.limit")
    default_replication_factor: int = default("default.replication.factor")
    auto_create_topics_enable: bool = default("auto.create.topics.enable")
    broker_rack: str | None = default("broker.rack")
    replica_selector_class: str = default("replica.selector.class")
    authorizer_class_name: str = default("authorizer.class.name")
    super_users: str = default("super.users")
    allow_everyone_if_no_acl_found: bool = default("allow.everyone.if.no.acl.found")
    auto_leader_rebalance_enable: bool = default("auto.leader.rebalance.enable")
    leader_imbalance_check_interval_seconds: int = default("leader.imbalance.check.interval.seconds")
    offsets_topic_num_partitions: int = default("offsets.topic.num.partitions")
    offsets_topic_replication_factor: int = default("offsets.topic.replication.factor")
    offsets_topic_segment_bytes: int = default("offsets.topic.segment.bytes")
    offsets_commit_timeout_ms: int = default("offsets.commit.timeout.ms")
    transaction_state_log_num_partitions: int = default("transaction.state.log.num.partitions")
    transaction_state_log_replication_factor: int = default("transaction.state.log.replication.factor")
    transaction_state_log_min_isr: int = default("transaction.state.log.min.isr")
    transaction_state_log_segment_bytes: int = default("transaction.state.log.segment.bytes")
    transaction_max_timeout_ms: int = default("transaction.max.timeout.ms")
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = default(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms")
    transactional_id_expiration_ms: int = default("transactional.id.expiration.ms")
    transaction_remove_expired_transaction_cleanup_interval_ms: int = default(
        "transaction.remove.expired.transaction.cleanup.interval.ms")
    producer_id_expiration_ms: int = default("producer.id.expiration.ms")
    producer_id_expiration_check_interval_ms: int = default("producer.id.expiration.check.interval.ms")
    transaction_partition_verification_enable: bool = default("transaction.partition.verification.enable")
    offsets_retention_minutes: int = default("offsets.retention.minutes")
    offsets_retention_check_interval_ms: int = default("offsets.retention.check.interval.ms")
    offset_metadata_max_bytes: int = default("offset.metadata.max.bytes")
    group_min_session_timeout_ms: int = default("group.min.session.timeout.ms")
    group_max_session_timeout_ms: int = default("group.max.session.timeout.ms")
    group_initial_rebalance_delay_ms: int = default("group.initial.rebalance.delay.ms")
    group_max_size: int = default("group.max.size")
    group_consumer_session_timeout_ms: int = default("group.consumer.session.timeout.ms")
    group_consumer_heartbeat_interval_ms: int = default("group.consumer.heartbeat.interval.ms")
    log_cleaner_enable: bool = default("log.cleaner.enable")
    log_cleaner_backoff_ms: int = default("log.cleaner.backoff.ms")
    log_cleaner_dedupe_buffer_size: int = default("log.cleaner.dedupe.buffer.size")
    log_cleaner_min_cleanable_ratio: float = default("log.cleaner.min.cleanable.ratio")
    log_cleaner_delete_retention_ms: int = default("log.cleaner.delete.retention.ms")
    log_cleaner_min_compaction_lag_ms: int = default("log.cleaner.min.compaction.lag.ms")
    replica_lag_time_max_ms: int = default("replica.lag.time.max.ms")
    fetch_max_bytes: int = default("fetch.max.bytes")
    replica_fetch_response_max_bytes: int = default("replica.fetch.response.max.bytes")
    replica_fetch_max_bytes: int = default("replica.fetch.max.bytes")
    max_incremental_fetch_session_cache_slots: int = default("max.incremental.fetch.session.cache.slots")
    quota_window_num: int = default("quota.window.num")
    quota_window_size_seconds: int = default("quota.window.size.seconds")
    controller_quota_window_num: int = default("controller.quota.window.num")
    controller_quota_window_size_seconds: int = default("controller.quota.window.size.seconds")
    log_retention_hours: int = default("log.retention.hours")
    log_retention_minutes: int | None = default("log.retention.minutes")
    log_retention_ms: int | None = default("log.retention.ms")
    log_retention_bytes: int = default("log.retention.bytes")
    log_retention_check_interval_ms: int = default("log.retention.check.interval.ms")
    log_flush_interval_messages: int = default("log.flush.interval.messages")
    log_flush_interval_ms: int | None = default("log.flush.interval.ms")
    metrics_port: int = default("kraftwire.metrics.port")
    metrics_host: str = default("kraftwire.metrics.host")
    connections_max_reauth_ms: int = default("connections.max.reauth.ms")
    #: Keys present in the file that kraftwire does not read (name -> raw value), in file order.
    unknown: Mapping[str, str] = field(default_factory=dict, compare=False)
    #: Every key/value as read from the file.
    raw: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: Old names of kraftwire's own keys found in the file (``RENAMED_KEYS``), in file order.
    deprecated: tuple[str, ...] = field(default=(), compare=False)

    # ------------------------------------------------------------------------------------------- building

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> "Config":
        """Parse each known key (a bad value raises ``ConfigError`` naming it); keep unknown ones aside."""
        values: dict[str, Any] = {}
        unknown: dict[str, str] = {}
        deprecated: list[str] = []
        for name, raw in props.items():
            new_name = RENAMED_KEYS.get(name)
            if new_name is not None:
                deprecated.append(name)
                if new_name in props:
                    continue  # the new name wins
            spec = _BY_NAME.get(new_name or name)
            if spec is None:
                unknown[name] = raw
                continue
            values[spec.attr] = spec.parse(name, raw)
        return cls(**values, unknown=unknown, raw=dict(props), deprecated=tuple(deprecated))

    # ------------------------------------------------------------------------------------------- derived values

    def all_log_dirs(self) -> tuple[str, ...]:
        """``log.dirs`` if set, else ``log.dir``; plus ``metadata.log.dir`` first when it is a separate dir."""
        dirs = self.log_dirs or (self.log_dir,)
        if self.metadata_log_dir and self.metadata_log_dir not in dirs:
            return (self.metadata_log_dir, *dirs)
        return tuple(dirs)

    def metadata_dir(self) -> str:
        """The metadata log directory: ``metadata.log.dir``, or the first of ``log.dirs`` (``log.dir``)."""
        if self.metadata_log_dir:
            return self.metadata_log_dir
        return (self.log_dirs or (self.log_dir,))[0]

    def metadata_partition_dir(self) -> str:
        """``<metadata log dir>/<kraftwire.metadata.log.topic>-0``: where the Raft log of this node lives."""
        return os.path.join(self.metadata_dir(), f"{self.metadata_log_topic}-0")

    # ------------------------------------------------------------------------------------------- validation

    def validate(self) -> "Config":
        """Check value ranges of the keys this layer owns. Raises ``ConfigError(key, value, reason)``."""
        if self.node_id < -1:
            raise ConfigError("node.id", self.node_id, "must be >= 0 (or -1 for unset)")
        if self.metadata_log_segment_min_bytes < 1:
            raise ConfigError("metadata.log.segment.min.bytes", self.metadata_log_segment_min_bytes, "must be >= 1")
        if self.metadata_log_segment_bytes < self.metadata_log_segment_min_bytes:
            raise ConfigError(
                "metadata.log.segment.bytes",
                self.metadata_log_segment_bytes,
                f"must be at least metadata.log.segment.min.bytes ({self.metadata_log_segment_min_bytes})",
            )
        if self.metadata_log_segment_bytes > 2**31 - 1:
            raise ConfigError("metadata.log.segment.bytes", self.metadata_log_segment_bytes, "must fit in an int32")
        if self.metadata_log_segment_ms < 1:
            raise ConfigError("metadata.log.segment.ms", self.metadata_log_segment_ms, "must be >= 1")
        for key, value in (
            ("metadata.max.retention.bytes", self.metadata_max_retention_bytes),
            ("metadata.max.retention.ms", self.metadata_max_retention_ms),
        ):
            if value < -1:
                raise ConfigError(key, value, "must be >= 0 or -1 (no limit)")
        if self.log_index_interval_bytes < 0:
            raise ConfigError("log.index.interval.bytes", self.log_index_interval_bytes, "must be >= 0")
        if self.metadata_log_max_record_bytes_between_snapshots < 1:
            raise ConfigError(
                "metadata.log.max.record.bytes.between.snapshots",
                self.metadata_log_max_record_bytes_between_snapshots,
                "must be >= 1",
            )
        if self.metadata_log_max_snapshot_interval_ms < 0:
            raise ConfigError(
                "metadata.log.max.snapshot.interval.ms", self.metadata_log_max_snapshot_interval_ms, "must be >= 0"
            )
        topic = self.metadata_log_topic
        if not topic or len(topic) > 249 or any(not (c.isalnum() or c in "._-") for c in topic) or topic in (".", ".."):
            raise ConfigError("kraftwire.metadata.log.topic", topic, "not a legal Kafka topic name")
        for f in fields(self):
            if f.name.startswith(("controller_quorum_", "kraftwire_quorum_")) and f.name.endswith("_ms"):
                value = getattr(self, f.name)
                if value < 0:
                    key = _NAME_OF[f.name]
                    raise ConfigError(key, self.raw.get(key, value), "must be >= 0")
        return self


def load_config(path: str) -> Config:
    """Read a properties file into a ``Config`` (parse errors name the key; call ``validate()`` for ranges)."""
    return Config.from_properties(load_properties(path))


class ControllerEndpointError(ValueError):
    """A controller's properties do not say where its controller listener is (Kafka's message)."""


def _listener_map(text: str) -> dict[str, tuple[str | None, int]]:
    """``NAME://host:port,...`` as {NAME: (host, port)}; an empty host is None (Kafka's Endpoint)."""
    out: dict[str, tuple[str | None, int]] = {}
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        name, sep, rest = item.partition("://")
        host, colon, port = rest.rpartition(":")
        if not sep or not colon or not port.strip().isdigit():
            raise ControllerEndpointError(f"Unable to parse {item} to a broker endpoint")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        out[name.strip().upper()] = (host or None, int(port))
    return out


def controller_endpoints(props: Mapping[str, str]) -> list[tuple[str, str, int]]:
    """(listener, host, port) of each of ``controller.listener.names``: ``advertised.listeners`` over ``listeners``,
    an empty host as ``localhost`` — the endpoints a controller is known by in the voter set (KIP-853). Raises
    ``ControllerEndpointError`` with Kafka's message."""
    listeners = _listener_map(props.get("listeners", ""))
    listeners.update(_listener_map(props.get("advertised.listeners", "")))
    if "controller.listener.names" not in props:
        raise ControllerEndpointError("controller.listener.names was not found. "
                                      "Is this a valid controller configuration file?")
    out: list[tuple[str, str, int]] = []
    for name in props["controller.listener.names"].split(","):
        name = name.strip().upper()
        if name not in listeners:
            raise ControllerEndpointError(f"Cannot find information about controller listener name: {name}")
        host, port = listeners[name]
        if (name, host or "localhost", port) not in out:
            out.append((name, host or "localhost", port))
    return out
