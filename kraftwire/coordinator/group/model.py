"""The values the group coordinator shard works with: its broker settings, its groups and members (the classic
protocol's), the committed offsets' entries, and what a call produces (records, then replies). Shared by the shard's
parts (``shard``, ``classic``, ``consumer_protocol``, ``offsets``, ``admin``) and by the edge, which imports them
from ``shard``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from kraftwire.coordinator.group import consumer as cg
from kraftwire.errors import ConfigError
from kraftwire.kafka_configs import BrokerConfigs
from kraftwire.metadata import group_configs
from kraftwire.protocol import messages as w

#: ConsumerGroupDescribe v1's MemberType of a member speaking the consumer protocol (0 is a classic member's)
CONSUMER_MEMBER = 1
EMPTY, PREPARING, COMPLETING, STABLE, DEAD = "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"
STATES = (EMPTY, PREPARING, COMPLETING, STABLE, DEAD)
#: DescribeGroups: authorized operations were not asked for (Kafka's sentinel)
NO_AUTHORIZED_OPERATIONS = -2147483648


@dataclass(frozen=True)
class GroupConfig:
    """The broker keys of the group coordinator, with Kafka's defaults (``from_config`` refuses share-group bounds
    Kafka's broker refuses, with its message)."""

    min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    initial_rebalance_delay_ms: int = 3000  # group.initial.rebalance.delay.ms
    max_size: int = 2**31 - 1  # group.max.size
    offsets_retention_ms: int = 10080 * 60_000  # offsets.retention.minutes
    offsets_retention_check_interval_ms: int = 600_000  # offsets.retention.check.interval.ms
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    consumer_session_timeout_ms: int = 45_000  # group.consumer.session.timeout.ms
    consumer_heartbeat_interval_ms: int = 5000  # group.consumer.heartbeat.interval.ms
    #: the bounds of a consumer group's own session timeout and heartbeat interval (group configs, KIP-848)
    consumer_min_session_timeout_ms: int = 45_000  # group.consumer.min.session.timeout.ms
    consumer_max_session_timeout_ms: int = 60_000  # group.consumer.max.session.timeout.ms
    consumer_min_heartbeat_interval_ms: int = 5000  # group.consumer.min.heartbeat.interval.ms
    consumer_max_heartbeat_interval_ms: int = 15_000  # group.consumer.max.heartbeat.interval.ms
    consumer_max_size: int = 2**31 - 1  # group.consumer.max.size: the most members a consumer group may have
    offsets_commit_timeout_ms: int = 5000  # offsets.commit.timeout.ms
    #: KIP-932 share groups: the broker's session timeout and heartbeat interval (a group's own configs within
    #: the min/max bounds win), the most members a share group may have, and how long an InitializeShareGroupState
    #: may stay unanswered before it is asked again (at least offsets.commit.timeout.ms)
    share_session_timeout_ms: int = 45_000  # group.share.session.timeout.ms
    share_min_session_timeout_ms: int = 45_000  # group.share.min.session.timeout.ms
    share_max_session_timeout_ms: int = 60_000  # group.share.max.session.timeout.ms
    share_heartbeat_interval_ms: int = 5000  # group.share.heartbeat.interval.ms
    share_min_heartbeat_interval_ms: int = 5000  # group.share.min.heartbeat.interval.ms
    share_max_heartbeat_interval_ms: int = 15_000  # group.share.max.heartbeat.interval.ms
    share_max_size: int = 200  # group.share.max.size
    share_initialize_retry_interval_ms: int = 30_000  # group.share.initialize.retry.interval.ms
    #: the least time between two target assignments of a share group (KIP-1263), and its group config's bounds
    share_assignment_interval_ms: int = 1000  # group.share.assignment.interval.ms
    share_min_assignment_interval_ms: int = 0  # group.share.min.assignment.interval.ms
    share_max_assignment_interval_ms: int = 15_000  # group.share.max.assignment.interval.ms

    def broker_value(self, name: str) -> str | None:
        """The broker keys a group's configs resolve through (``metadata.group_configs``)."""
        value = {"group.consumer.session.timeout.ms": self.consumer_session_timeout_ms,
                 "group.consumer.heartbeat.interval.ms": self.consumer_heartbeat_interval_ms,
                 "group.consumer.min.session.timeout.ms": self.consumer_min_session_timeout_ms,
                 "group.consumer.max.session.timeout.ms": self.consumer_max_session_timeout_ms,
                 "group.consumer.min.heartbeat.interval.ms": self.consumer_min_heartbeat_interval_ms,
                 "group.consumer.max.heartbeat.interval.ms": self.consumer_max_heartbeat_interval_ms,
                 "group.share.session.timeout.ms": self.share_session_timeout_ms,
                 "group.share.min.session.timeout.ms": self.share_min_session_timeout_ms,
                 "group.share.max.session.timeout.ms": self.share_max_session_timeout_ms,
                 "group.share.heartbeat.interval.ms": self.share_heartbeat_interval_ms,
                 "group.share.min.heartbeat.interval.ms": self.share_min_heartbeat_interval_ms,
                 "group.share.max.heartbeat.interval.ms": self.share_max_heartbeat_interval_ms,
                 "group.share.assignment.interval.ms": self.share_assignment_interval_ms,
                 "group.share.min.assignment.interval.ms": self.share_min_assignment_interval_ms,
                 "group.share.max.assignment.interval.ms": self.share_max_assignment_interval_ms}.get(name)
        return None if value is None else str(value)

    def share_config_error(self) -> tuple[str, int, str] | None:
        """Kafka's ``verifyShareGroupConfigs``, in its order: the first (key, value, message) the share-group
        bounds break, or None."""
        hb, hb_min, hb_max = (self.share_heartbeat_interval_ms, self.share_min_heartbeat_interval_ms,
                              self.share_max_heartbeat_interval_ms)
        st, st_min, st_max = (self.share_session_timeout_ms, self.share_min_session_timeout_ms,
                              self.share_max_session_timeout_ms)
        ai, ai_min, ai_max = (self.share_assignment_interval_ms, self.share_min_assignment_interval_ms,
                              self.share_max_assignment_interval_ms)
        checks = (
            ("group.share.max.heartbeat.interval.ms", hb_max, hb_max >= hb_min, "greater than or equal to",
             "group.share.min.heartbeat.interval.ms"),
            ("group.share.heartbeat.interval.ms", hb, hb >= hb_min, "greater than or equal to",
             "group.share.min.heartbeat.interval.ms"),
            ("group.share.heartbeat.interval.ms", hb, hb <= hb_max, "less than or equal to",
             "group.share.max.heartbeat.interval.ms"),
            ("group.share.max.session.timeout.ms", st_max, st_max >= st_min, "greater than or equal to",
             "group.share.min.session.timeout.ms"),
            ("group.share.session.timeout.ms", st, st >= st_min, "greater than or equal to",
             "group.share.min.session.timeout.ms"),
            ("group.share.session.timeout.ms", st, st <= st_max, "less than or equal to",
             "group.share.max.session.timeout.ms"),
            ("group.share.heartbeat.interval.ms", hb, hb < st, "less than", "group.share.session.timeout.ms"),
            ("group.share.max.assignment.interval.ms", ai_max, ai_max >= ai_min, "greater than or equal to",
             "group.share.min.assignment.interval.ms"),
            ("group.share.assignment.interval.ms", ai, ai >= ai_min, "greater than or equal to",
             "group.share.min.assignment.interval.ms"),
            ("group.share.assignment.interval.ms", ai, ai <= ai_max, "less than or equal to",
             "group.share.max.assignment.interval.ms"),
        )
        for key, value, ok, relation, other in checks:
            if not ok:
                return key, value, f"{key} must be {relation} {other}"
        return None

    @classmethod
    def from_config(cls, c) -> "GroupConfig":
        """The settings a node's ``kraftwire.config.Config`` holds."""
        broker = BrokerConfigs(static=getattr(c, "raw", None) or {})

        def bound(name: str) -> int:
            return int(broker.value(name) or 0)

        config = cls(min_session_timeout_ms=c.group_min_session_timeout_ms,
                   max_session_timeout_ms=c.group_max_session_timeout_ms,
                   initial_rebalance_delay_ms=c.group_initial_rebalance_delay_ms, max_size=c.group_max_size,
                   offsets_retention_ms=c.offsets_retention_minutes * 60_000,
                   offsets_retention_check_interval_ms=c.offsets_retention_check_interval_ms,
                   offset_metadata_max_bytes=c.offset_metadata_max_bytes,
                   consumer_session_timeout_ms=c.group_consumer_session_timeout_ms,
                   consumer_heartbeat_interval_ms=c.group_consumer_heartbeat_interval_ms,
                   consumer_min_session_timeout_ms=bound("group.consumer.min.session.timeout.ms"),
                   consumer_max_session_timeout_ms=bound("group.consumer.max.session.timeout.ms"),
                   consumer_min_heartbeat_interval_ms=bound("group.consumer.min.heartbeat.interval.ms"),
                   consumer_max_heartbeat_interval_ms=bound("group.consumer.max.heartbeat.interval.ms"),
                   consumer_max_size=bound("group.consumer.max.size"),
                   offsets_commit_timeout_ms=c.offsets_commit_timeout_ms,
                   share_session_timeout_ms=bound("group.share.session.timeout.ms"),
                   share_min_session_timeout_ms=bound("group.share.min.session.timeout.ms"),
                   share_max_session_timeout_ms=bound("group.share.max.session.timeout.ms"),
                   share_heartbeat_interval_ms=bound("group.share.heartbeat.interval.ms"),
                   share_min_heartbeat_interval_ms=bound("group.share.min.heartbeat.interval.ms"),
                   share_max_heartbeat_interval_ms=bound("group.share.max.heartbeat.interval.ms"),
                   share_max_size=bound("group.share.max.size"),
                   share_assignment_interval_ms=bound("group.share.assignment.interval.ms"),
                   share_min_assignment_interval_ms=bound("group.share.min.assignment.interval.ms"),
                   share_max_assignment_interval_ms=bound("group.share.max.assignment.interval.ms"),
                   share_initialize_retry_interval_ms=int(broker.value("group.share.initialize.retry.interval.ms")
                                                          or 30_000))
        error = config.share_config_error() or group_configs.share_partition_config_error(broker.value)
        if error is not None:  # Kafka's broker does not start either
            raise ConfigError(*error)
        return config


class Reply(NamedTuple):
    """An answer for the edge to send: ``api`` names the request (``error_response`` builds its refusal)."""

    token: Any
    api: str
    body: Any


class Result:
    """What a call produced: records to append, then replies to send once they are committed."""

    __slots__ = ("records", "replies")

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []
        self.replies: list[Reply] = []

    def reply(self, token, api: str, body) -> None:
        self.replies.append(Reply(token, api, body))

    def __repr__(self) -> str:
        return f"Result({len(self.records)} records, {len(self.replies)} replies)"


class Waiting(NamedTuple):
    token: Any
    version: int


class OffsetEntry(NamedTuple):
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1


class Member:
    __slots__ = ("member_id", "instance_id", "client_id", "client_host", "session_ms", "rebalance_ms",
                 "protocol_type", "protocols", "assignment", "join", "sync", "deadline_ms")

    def __init__(self, member_id: str, instance_id: str | None, client_id: str, client_host: str) -> None:
        self.member_id, self.instance_id = member_id, instance_id
        self.client_id, self.client_host = client_id, client_host
        self.session_ms = self.rebalance_ms = 0
        self.protocol_type = ""
        self.protocols: list[tuple[str, bytes]] = []
        self.assignment = b""
        self.join: Waiting | None = None
        self.sync: Waiting | None = None
        self.deadline_ms = 0

    def metadata_for(self, protocol: str | None) -> bytes:
        return next((m for n, m in self.protocols if n == protocol), b"")


class Group:
    def __init__(self, group_id: str, now_ms: int) -> None:
        self.group_id = group_id
        self.state = EMPTY
        self.state_ms = now_ms  # when the group entered its state (offset expiry counts from Empty)
        self.generation = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader: str | None = None
        self.members: dict[str, Member] = {}
        self.pending: dict[str, int] = {}  # member ids handed out by MEMBER_ID_REQUIRED -> their deadline
        self.static: dict[str, str] = {}  # group.instance.id -> the member id holding it (KIP-345)
        self.rebalance_deadline_ms = 0  # PreparingRebalance: complete the join then at the latest
        self.delay_left_ms = 0  # the initial rebalance delay still available to extend by
        self.delayed = False  # the join waits out group.initial.rebalance.delay.ms (no early completion)
        self.sync_deadline_ms = 0  # CompletingRebalance: members that have not synced by then are removed

    def set_state(self, state: str, now_ms: int) -> None:
        if state != self.state:
            self.state, self.state_ms = state, now_ms

    def fenced(self, member_id: str, instance_id: str | None) -> bool:
        """A request naming a static member whose instance id another member id holds now."""
        if instance_id is None:
            return False
        holder = self.static.get(instance_id)
        return holder is not None and holder != member_id

    def protocols_supported(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """Kafka's ``supportsProtocols``: an empty group takes any non-empty protocol list; otherwise the type must
        match and the member must share a protocol with every current member."""
        if not protocol_type or not protocols:
            return False
        if not self.members:
            return True
        if protocol_type != self.protocol_type:
            return False
        names = {n for n, _ in protocols}
        return all(names & {n for n, _ in m.protocols} for m in self.members.values())

    def subscribed_topics(self) -> set[str] | None:
        """The topics the consumer-protocol members subscribe to; None when unknown (a member's subscription
        cannot be read, or the group is not a consumer group)."""
        if self.protocol_type != "consumer" or not self.protocol_name:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            sub = subscription_topics(m.metadata_for(self.protocol_name))
            if sub is None:
                return None
            topics |= sub
        return topics


def subscription_topics(metadata: bytes) -> set[str] | None:
    """The topics of a consumer-protocol subscription (int16 version, int32 count, int16-length topic names)."""
    try:
        if len(metadata) < 6:
            return None
        count = int.from_bytes(metadata[2:6], "big", signed=True)
        pos, topics = 6, set()
        for _ in range(count):
            if pos + 2 > len(metadata):
                return None
            length = int.from_bytes(metadata[pos:pos + 2], "big", signed=True)
            pos += 2
            if length < 0 or pos + length > len(metadata):
                return None
            topics.add(bytes(metadata[pos:pos + length]).decode("utf-8"))
            pos += length
        return topics
    except (UnicodeDecodeError, ValueError):
        return None


def error_response(api: str, version: int, code: int):
    """The refusal of a group request with ``code`` (what the edge answers when the records could not be written)."""
    if api == "JoinGroup":
        return w.JoinGroupResponse(error_code=code, generation_id=-1, protocol_name=None if version >= 7 else "",
                                   leader="", member_id="", members=[])
    if api == "SyncGroup":
        return w.SyncGroupResponse(error_code=code, assignment=b"")
    if api == "Heartbeat":
        return w.HeartbeatResponse(error_code=code)
    if api == "LeaveGroup":
        return w.LeaveGroupResponse(error_code=code, members=[])
    raise ValueError(f"no single-code refusal for {api}")


def refusal(reply: Reply, version: int, code: int):
    """What to answer instead of ``reply`` when its records could not be written: the partitions of an
    OffsetCommit or OffsetDelete that had no error of their own get ``code``, the other APIs their refusal."""
    if reply.api in ("OffsetCommit", "OffsetDelete", "TxnOffsetCommit"):
        for t in reply.body.topics:
            for part in t.partitions:
                if part.error_code == 0:
                    part.error_code = code
        return reply.body
    if reply.api == "ConsumerGroupHeartbeat":
        return cg.error_heartbeat(code)
    if reply.api in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup"):
        return error_response(reply.api, version, code)
    return reply.body
