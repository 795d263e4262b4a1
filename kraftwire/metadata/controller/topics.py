"""Topics, partitions and leadership: the active controller's ReplicationControlManager, pure.

Requests (each: image + request -> ``ControllerResult`` of records and response; nothing changes until the records
are replayed, which the edge does once they commit):

* **CreateTopics.** Names are checked as Kafka checks them (non-empty, not ``.``/``..``, at most 249 characters of
  ``[a-zA-Z0-9._-]``, no ``.``/``_`` collision with an existing topic: INVALID_TOPIC_EXCEPTION); a name twice in the
  request or ``__cluster_metadata`` is INVALID_REQUEST; an existing topic TOPIC_ALREADY_EXISTS; a config that is
  unknown, null or invalid INVALID_CONFIG. Replicas are placed by the striped placer over registered brokers not in
  controlled shutdown (``placement``), or taken from explicit assignments (then the replication factor and the
  partition count must be -1: INVALID_REQUEST; a bad assignment INVALID_REPLICA_ASSIGNMENT). A partition's ISR is
  its active replicas in replica order and its leader the first of them; leader and partition epochs start at 0.
  Records: TopicRecord, the topic's ConfigRecords, then one PartitionRecord per partition. ``validate_only`` writes
  none. A topic that would take the request past 10,000 records fails with POLICY_VIOLATION.
* **DeleteTopics** by name or id: RemoveTopicRecord; unknown names UNKNOWN_TOPIC_OR_PARTITION, unknown ids
  UNKNOWN_TOPIC_ID; an entry with both a name and an id or neither, a name or id twice (answered once), a name whose
  topic is also given by id: INVALID_REQUEST with Kafka's message, deleting nothing they name.
* **CreatePartitions**: more partitions, placed with the topic's replication factor; not more is INVALID_PARTITIONS;
  a topic named twice is answered once, INVALID_REQUEST, and not grown.
* ``refused_before_acls``: the entries of both that Kafka refuses before it checks ACLs (the edge lets them through).
* **AlterPartition** (a partition leader changing its ISR), checked in Kafka's order: stale broker epoch (the whole
  request), unknown topic, epochs newer than the controller's (NOT_CONTROLLER), an older leader epoch
  (FENCED_LEADER_EPOCH), a sender that is not the leader (INVALID_REQUEST), an older partition epoch
  (INVALID_UPDATE_VERSION), an ISR outside the replicas or without the leader (INVALID_REQUEST), recovery-state
  misuse (INVALID_REQUEST), a member that is fenced, shutting down, unregistered or of another broker epoch
  (INELIGIBLE_REPLICA). A topic is named by id (v2+; Kafka 4.0 removed the by-name v0-1).
* **ElectLeaders**, PREFERRED or UNCLEAN: ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
  ELIGIBLE_LEADERS_NOT_AVAILABLE as Kafka answers them.

Broker lifecycle (called by the broker manager, ``brokers.py``): a broker being fenced or entering controlled
shutdown leaves every ISR it is in and loses its leaderships; a broker being unfenced may lead the partitions that
have no leader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Mapping, TypeVar

from kraftwire.error_codes import (
    default_message,
    TOPIC_AUTHORIZATION_FAILED,
    TOPIC_DELETION_DISABLED,
    ELECTION_NOT_NEEDED,
    ELIGIBLE_LEADERS_NOT_AVAILABLE,
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_CONFIG,
    INVALID_PARTITIONS,
    INVALID_REPLICA_ASSIGNMENT,
    INVALID_REPLICATION_FACTOR,
    INVALID_REQUEST,
    INVALID_TOPIC_EXCEPTION,
    INVALID_UPDATE_VERSION,
    BROKER_ID_NOT_REGISTERED,
    NEW_LEADER_ELECTED,
    NONE,
    NOT_CONTROLLER,
    NOT_LEADER_OR_FOLLOWER,
    POLICY_VIOLATION,
    PREFERRED_LEADER_NOT_AVAILABLE,
    STALE_BROKER_EPOCH,
    THROTTLING_QUOTA_EXCEEDED,
    TOPIC_ALREADY_EXISTS,
    UNKNOWN_TOPIC_ID,
    UNKNOWN_TOPIC_OR_PARTITION,
    UNSUPPORTED_VERSION,
)
from kraftwire.ids import UUID, ZERO_UUID
from kraftwire.java_order import hashmap_order, string_hash
from kraftwire import kafka_configs
from kraftwire.kafka_configs import BrokerConfigs
from kraftwire.metadata.controller import elr
from kraftwire.metadata.controller import partitions as pc
from kraftwire.metadata.controller import topic_configs
from kraftwire.metadata.controller.placement import PlacementError, UsableBroker, place
from kraftwire.metadata.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from kraftwire.metadata.image import (
    MIGRATING_DIR,
    NO_LEADER,
    NO_LEADER_CHANGE,
    UNASSIGNED_DIR,
    MetadataImage,
    PartitionRegistration,
    replay_all,
)
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import MetadataVersion
from kraftwire.protocol import messages as m

METADATA_TOPIC = "__cluster_metadata"
MAX_NAME_LENGTH = 249
TOPIC_RESOURCE = 2  # ConfigResource type of a topic
BROKER_RESOURCE = 4  # ... and of a broker ("": the cluster-wide default)
#: Kafka's cap on the preferred elections of one auto-rebalance event (maxElectionsPerImbalance)
MAX_ELECTIONS_PER_IMBALANCE = 1000
_LEGAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
ELECTION_PREFERRED, ELECTION_UNCLEAN = 0, 1  # ElectLeaders ElectionType
T = TypeVar("T", bound=Hashable)


# ================================================================================================================
# names and brokers
# ================================================================================================================
def name_error(name: str) -> str:
    """"" for a legal topic name, else Kafka's reason (4.x ``Topic.validate``: "Topic name is invalid: " and why)."""
    if not name:
        why = "the empty string is not allowed"
    elif name in (".", ".."):
        why = f"'{name}' is not allowed"
    elif len(name) > MAX_NAME_LENGTH:
        why = f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    elif not set(name) <= _LEGAL:
        why = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return ""
    return f"Topic name is invalid: {why}"


def duplicates(keys: Iterable[T]) -> list[T]:
    """The keys that come more than once, each once, in the order of their first coming."""
    seen: dict[T, bool] = {}
    for key in keys:
        seen[key] = key in seen
    return [key for key, again in seen.items() if again]


def refused_before_acls(api: str, items) -> list[bool]:
    """Which entries of a CreateTopics, CreatePartitions or DeleteTopics request (``items``: its topics, or a
    DeleteTopics v0-v5's names) the controller refuses whatever the client may do, as Kafka's ControllerApis refuses
    them before it checks ACLs: a topic named twice; a DeleteTopics entry with both a name and an id, or with
    neither."""
    if api in ("CreateTopics", "CreatePartitions"):
        keys = [t.name for t in items]
    elif api == "DeleteTopics":
        keys = [(t, ZERO_UUID) if isinstance(t, str) else (t.name, t.topic_id) for t in items]
    else:
        return [False] * len(items)
    twice = set(duplicates(keys))
    return [key in twice or (api == "DeleteTopics" and (key[0] is None) == (key[1] == ZERO_UUID)) for key in keys]


def hide_configs(result) -> None:
    """A CreateTopics result made fit for a principal that may not DESCRIBE_CONFIGS the topic it created: the
    topic id stays, its partition count, replication factor and configs are left out (-1, -1, none) and
    ``topic_config_error_code`` says why — as Kafka's ReplicationControlManager answers a topic outside the
    "describable" set ControllerApis passes it. A refused topic is left as it is."""
    if result.error_code != NONE:
        return
    result.topic_config_error_code = TOPIC_AUTHORIZATION_FAILED
    result.num_partitions, result.replication_factor, result.configs = -1, -1, []


def _unified(name: str) -> str:
    return name.replace(".", "_")


def active(image: MetadataImage, broker_id: int) -> bool:
    """Registered, unfenced and not in controlled shutdown: may be in an ISR and lead."""
    b = image.brokers.get(broker_id)
    return b is not None and not b.fenced and not b.in_controlled_shutdown


def usable_brokers(image: MetadataImage) -> list[UsableBroker]:
    """Where new replicas may go: registered brokers not in controlled shutdown (fenced ones as followers)."""
    return [UsableBroker(b.id, b.rack, b.fenced) for _, b in sorted(image.brokers.items())
            if not b.in_controlled_shutdown]


def default_dir(image: MetadataImage, broker_id: int) -> UUID:
    b = image.brokers.get(broker_id)
    if b is None:
        return UNASSIGNED_DIR
    if not b.log_dirs:
        return MIGRATING_DIR
    return b.log_dirs[0] if len(b.log_dirs) == 1 else UNASSIGNED_DIR


def _mv(image: MetadataImage) -> MetadataVersion:
    mv = image.metadata_version
    if mv is None:
        raise ValueError("the image has no metadata.version: the bootstrap records come first")
    return mv


def broker_configs(image: MetadataImage, node_id: int, static_config: Mapping[str, str]) -> BrokerConfigs:
    """The broker-level layers a topic's configuration resolves through on node ``node_id``: its dynamic settings
    and the cluster-wide dynamic defaults from the image, its properties file."""
    return BrokerConfigs(static=static_config, cluster=image.configs.get((BROKER_RESOURCE, ""), {}),
                         broker=image.configs.get((BROKER_RESOURCE, str(node_id)), {}))


@dataclass(frozen=True)
class NodeConfig:
    """The controller's own node id and properties file: a topic's effective configuration on the controller
    resolves through them, the cluster-wide dynamic defaults and Kafka's defaults (ConfigurationControlManager)."""

    node_id: int = -1
    static: Mapping[str, str] = field(default_factory=dict)

    def unclean_allowed(self, image: MetadataImage, topic_name: str) -> bool:
        return topic_configs.flag(image.configs.get((TOPIC_RESOURCE, topic_name), {}),
                                  "unclean.leader.election.enable", broker_configs(image, self.node_id, self.static))

    def elr_options(self, image: MetadataImage, topic_name: str) -> dict:
        """The ELR keywords of ``partitions.partition_change`` for a partition of ``topic_name``: whether eligible
        leader replicas are on and the topic's effective min ISR (Kafka's getTopicEffectiveMinIsr: its
        min.insync.replicas, at most the replication factor of partition 0)."""
        if not elr_enabled(image):
            return {}
        topic = image.topic(topic_name)
        configured = topic_configs.number(image.configs.get((TOPIC_RESOURCE, topic_name), {}), "min.insync.replicas",
                                          broker_configs(image, self.node_id, self.static))
        first = topic.partitions.get(0) if topic is not None else None
        rf = len(first.replicas) if first is not None else configured
        return {"elr": True, "min_isr": min(configured, rf)}


KAFKA_DEFAULTS = NodeConfig()


def elr_enabled(image: MetadataImage) -> bool:
    """Eligible leader replicas are on: ``eligible.leader.replicas.version`` finalized at 1 or above (Kafka's
    isElrFeatureEnabled; that level needs metadata.version 4.0-IV1)."""
    return elr.enabled(image.features)


def _partition_record(image: MetadataImage, topic_id: UUID, index: int, replicas: list[int],
                      isr: list[int]) -> ApiMessageAndVersion:
    mv = _mv(image)
    directories = [default_dir(image, r) for r in replicas] if mv.at_least("3.7-IV2") else []
    return ApiMessageAndVersion(
        m.PartitionRecord(partition_id=index, topic_id=topic_id, replicas=list(replicas), isr=list(isr),
                          removing_replicas=[], adding_replicas=[], leader=isr[0], leader_recovery_state=0,
                          leader_epoch=0, partition_epoch=0, directories=directories),
        mv.partition_record_version)


#: a topic refused by a strict controller mutation quota (KIP-599): Kafka's ThrottlingQuotaExceededException
THROTTLED = (THROTTLING_QUOTA_EXCEEDED, default_message(THROTTLING_QUOTA_EXCEEDED))


def _admitted(quota, partitions: int) -> bool:
    """Charge ``partitions`` created or deleted to the request's controller mutation quota; False: refused."""
    return quota is None or quota.admit(partitions) == 0


def _throttle(quota) -> int:
    """The throttle time the answer carries for the controller mutation quota."""
    return 0 if quota is None else quota.throttle_ms(quota.now_ms)


class _Refused(Exception):
    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _manual_replicas(image: MetadataImage, replicas, rf: int | None) -> list[int]:
    replicas = list(replicas)
    if not replicas:
        raise _Refused(INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")
    previous = None
    for b in sorted(replicas):
        if b not in image.brokers:
            raise _Refused(INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes broker {b}, but "
                                                       "no such broker is registered.")
        if b == previous:
            raise _Refused(INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes the broker {b} "
                                                       "more than once.")
        previous = b
    if rf is not None and len(replicas) != rf:
        raise _Refused(INVALID_REPLICA_ASSIGNMENT,
                       f"The manual partition assignment includes a partition with {len(replicas)} replica(s), but "
                       f"this is not consistent with previous partitions, which have {rf} replica(s).")
    return replicas


# ================================================================================================================
# the manager
# ================================================================================================================
class ReplicationControl:
    """``rng``: ``randrange(n)`` for placement; ``new_topic_id``: a fresh random topic id. Both come from the edge
    (seeded in tests and simulations)."""

    def __init__(self, *, rng, new_topic_id: Callable[[], UUID], default_partitions: int = 1,
                 default_replication_factor: int = 1, node_id: int = -1,
                 static_config: Mapping[str, str] | None = None) -> None:
        self.rng = rng
        self.node_config = NodeConfig(node_id, dict(static_config or {}))
        self.new_topic_id = new_topic_id
        self.default_partitions = default_partitions
        self.default_replication_factor = default_replication_factor

    # ------------------------------------------------------------------------------------------------ CreateTopics
    def create_topics(self, image: MetadataImage, req, version: int = 7, quota=None) -> ControllerResult:
        """``quota``: the request's controller mutation quota (``replica.quotas.MutationQuota``, None: unbounded),
        charged each topic's partitions once it is otherwise valid, validate-only too, as Kafka's
        ReplicationControlManager charges them; a strict one refuses a topic while its client is over it."""
        R = m.CreateTopicsResponse
        # as Kafka's ControllerApis: a name given twice leaves the request and is answered once, after the others
        names = [t.name for t in req.topics]
        duplicates = list(dict.fromkeys(n for n in names if names.count(n) > 1))
        topics = [t for t in req.topics if t.name not in duplicates]
        errors: dict[str, tuple[int, str | None]] = {}
        existing = {_unified(n): n for n in image.topic_ids}
        for t in topics:
            if t.name == METADATA_TOPIC:
                errors[t.name] = (INVALID_REQUEST, f"Creation of internal topic {METADATA_TOPIC} is prohibited.")
                continue
            why = name_error(t.name)
            if why:
                errors[t.name] = (INVALID_TOPIC_EXCEPTION, why)
            elif t.name in image.topic_ids:
                errors[t.name] = (TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists.")
            elif ("." in t.name or "_" in t.name) and _unified(t.name) in existing:
                errors[t.name] = (INVALID_TOPIC_EXCEPTION,
                                  f"Topic '{t.name}' collides with existing topic: {existing[_unified(t.name)]}")
            else:
                for c in t.configs:
                    why = topic_configs.check(c.name, c.value)
                    if why:
                        errors[t.name] = (INVALID_CONFIG, why)
                        break
        records: list[ApiMessageAndVersion] = []
        results = {}
        for t in topics:
            if t.name in errors:
                continue
            try:
                topic_records, result = self._create_topic(image, t)
            except _Refused as r:
                errors[t.name] = (r.code, r.message)
                continue
            if not _admitted(quota, result.num_partitions):
                errors[t.name] = THROTTLED
                continue
            if len(records) + len(topic_records) > MAX_RECORDS_PER_USER_OP:
                errors[t.name] = (POLICY_VIOLATION, "Excessively large number of partitions per request.")
                continue
            records.extend(topic_records)
            results[t.name] = result
        errors.update((name, (INVALID_REQUEST, "Duplicate topic name.")) for name in duplicates)
        out = []
        for name in [t.name for t in topics] + duplicates:
            if name in errors:
                code, message = errors[name]
                out.append(R.CreatableTopicResult(name=name, topic_id=ZERO_UUID, error_code=code,
                                                  error_message=message, topic_config_error_code=0,
                                                  num_partitions=-1, replication_factor=-1, configs=[]))
            else:
                out.append(results[name])
        created = [t.name for t in topics if t.name not in errors]
        event = f"created {', '.join(created)}" if created and not req.validate_only else ""
        return ControllerResult(() if req.validate_only else tuple(records),
                                R(throttle_time_ms=_throttle(quota), topics=out), event)

    def _create_topic(self, image: MetadataImage, t) -> tuple[list[ApiMessageAndVersion], object]:
        R = m.CreateTopicsResponse
        assignments: list[list[int]] = []
        if t.assignments:
            if t.replication_factor != -1:
                raise _Refused(INVALID_REQUEST, "A manual partition assignment was specified, but replication "
                                                "factor was not set to -1.")
            if t.num_partitions != -1:
                raise _Refused(INVALID_REQUEST, "A manual partition assignment was specified, but numPartitions "
                                                "was not set to -1.")
            by_index: dict[int, list[int]] = {}
            rf = None
            for a in t.assignments:
                if a.partition_index in by_index:
                    raise _Refused(INVALID_REPLICA_ASSIGNMENT, "Found multiple manual partition assignments for "
                                                               f"partition {a.partition_index}")
                replicas = _manual_replicas(image, a.broker_ids, rf)
                rf = len(replicas)
                if not any(active(image, b) for b in replicas):
                    raise _Refused(INVALID_REPLICA_ASSIGNMENT,
                                   "All brokers specified in the manual partition assignment for partition "
                                   f"{a.partition_index} are fenced or in controlled shutdown.")
                by_index[a.partition_index] = replicas
            for i in range(len(by_index)):
                if i not in by_index:
                    raise _Refused(INVALID_REPLICA_ASSIGNMENT,
                                   "partitions should be a consecutive 0-based integer sequence")
            assignments = [by_index[i] for i in range(len(by_index))]
        elif t.replication_factor < -1 or t.replication_factor == 0:
            raise _Refused(INVALID_REPLICATION_FACTOR,
                           "Replication factor must be larger than 0, or -1 to use the default value.")
        elif t.num_partitions < -1 or t.num_partitions == 0:
            raise _Refused(INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
        else:
            count = self.default_partitions if t.num_partitions == -1 else t.num_partitions
            rf = self.default_replication_factor if t.replication_factor == -1 else t.replication_factor
            if count > MAX_RECORDS_PER_USER_OP:
                raise _Refused(POLICY_VIOLATION, "Excessively large number of partitions per request.")
            try:
                assignments = place(usable_brokers(image), count, rf, self.rng)
            except PlacementError as exc:
                raise _Refused(INVALID_REPLICATION_FACTOR,
                               f"Unable to replicate the partition {rf} time(s): {exc}") from None
            for replicas in assignments:
                if not any(active(image, b) for b in replicas):
                    raise _Refused(INVALID_REPLICATION_FACTOR,
                                   f"Unable to replicate the partition {rf} time(s): All brokers are currently "
                                   "fenced or in controlled shutdown.")
        topic_id = self.new_topic_id()
        overrides = {c.name: c.value for c in t.configs}
        records = [ApiMessageAndVersion(m.TopicRecord(name=t.name, topic_id=topic_id), 0)]
        records += [ApiMessageAndVersion(m.ConfigRecord(resource_type=TOPIC_RESOURCE, resource_name=t.name,
                                                        name=name, value=value), 0)
                    for name, value in overrides.items()]
        for index, replicas in enumerate(assignments):
            isr = [b for b in replicas if active(image, b)]
            records.append(_partition_record(image, topic_id, index, replicas, isr))
        configs = [R.CreatableTopicConfigs(name=name, value=value, read_only=False, config_source=source,
                                           is_sensitive=False)
                   for name, value, source, _ in topic_configs.describe(
                       overrides, broker_configs(image, self.node_config.node_id, self.node_config.static))]
        result = R.CreatableTopicResult(name=t.name, topic_id=topic_id, error_code=NONE, error_message=None,
                                        topic_config_error_code=NONE, num_partitions=len(assignments),
                                        replication_factor=len(assignments[0]), configs=configs)
        return records, result

    # ------------------------------------------------------------------------------------------------ DeleteTopics
    def delete_topics(self, image: MetadataImage, req, version: int = 6, quota=None) -> ControllerResult:
        """By name or by id, read as Kafka's ControllerApis reads the request before its controller deletes: an
        entry with both a name and an id, or with neither, is INVALID_REQUEST; a name or an id given twice is
        answered once, INVALID_REQUEST; a name whose topic is also given by id is answered once, INVALID_REQUEST,
        and that topic stays. Kafka shuffles its answers; these keep the request's order, a name or id at its first
        entry."""
        R = m.DeleteTopicsResponse
        wanted = ([(t.name, t.topic_id) for t in req.topics] if version >= 6
                  else [(n, ZERO_UUID) for n in req.topic_names])
        if not kafka_configs.flag(self.node_config.static.get("delete.topic.enable", "true")):
            # Kafka's ControllerApis: the controller's own delete.topic.enable=false refuses every deletion; its
            # TopicDeletionDisabledException (v3+) has no message (the conformance run's
            # DeleteTopics-v6-deletion-disabled), its InvalidRequestException before says why
            code, message = ((TOPIC_DELETION_DISABLED, None) if version >= 3
                             else (INVALID_REQUEST, "Topic deletion is disabled."))
            return ControllerResult((), R(throttle_time_ms=0, responses=[
                R.DeletableTopicResult(name=name, topic_id=topic_id, error_code=code, error_message=message)
                for name, topic_id in wanted]),
                "")

        def answer(name, topic_id, code=INVALID_REQUEST, message=None):
            # an error raised without words carries its default ones, as ControllerApis answers (e.g. an unknown topic)
            return R.DeletableTopicResult(name=name, topic_id=topic_id, error_code=code,
                                          error_message=message if message is not None else default_message(code))

        slots: list = []  # in request order: an answer, or the name or id whose answer follows below
        seen: set = set()
        for name, topic_id in wanted:
            if name is None and topic_id == ZERO_UUID:
                slots.append(answer(None, ZERO_UUID, message="Neither topic name nor id were specified."))
            elif name is not None and topic_id != ZERO_UUID:
                slots.append(answer(name, topic_id, message="You may not specify both topic name and topic id."))
            elif (key := topic_id if name is None else name) not in seen:
                seen.add(key)
                slots.append(key)
        ids = [k for k in slots if isinstance(k, UUID)]
        names = [k for k in slots if isinstance(k, str)]
        twice_ids = set(duplicates(i for n, i in wanted if n is None and i != ZERO_UUID))
        twice_names = set(duplicates(n for n, i in wanted if n is not None and i == ZERO_UUID))
        answers: dict = {}
        doomed: dict[UUID, object] = {}  # topic id -> the slot answered by deleting it
        for topic_id in ids:  # ids first, as Kafka
            t = image.topics.get(topic_id)
            if topic_id in twice_ids:
                answers[topic_id] = answer(None, topic_id, message="Duplicate topic id.")
            elif t is None:
                answers[topic_id] = answer(None, topic_id, UNKNOWN_TOPIC_ID)
            else:
                doomed[topic_id] = topic_id
        for name in names:
            t = image.topic(name)
            if name in twice_names:
                answers[name] = answer(name, ZERO_UUID, message="Duplicate topic name.")
            elif t is None:
                answers[name] = answer(name, ZERO_UUID, UNKNOWN_TOPIC_OR_PARTITION)
            elif t.id in doomed or t.id in twice_ids:  # the id's own entry goes unanswered, as in Kafka
                answers[name] = answer(name, t.id, message="The provided topic name maps to an ID that was already "
                                                           "supplied.")
                if doomed.pop(t.id, None) is not None:
                    answers[t.id] = None
            else:
                doomed[t.id] = name
        records = []
        for topic_id, slot in doomed.items():  # each topic's partitions charged to the quota (``create_topics``)
            topic = image.topics[topic_id]
            if not _admitted(quota, len(topic.partitions)):
                answers[slot] = answer(topic.name, topic_id, *THROTTLED)
                continue
            records.append(ApiMessageAndVersion(m.RemoveTopicRecord(topic_id=topic_id), 0))
            answers[slot] = answer(topic.name, topic_id, NONE)
        out = [slot if isinstance(slot, R.DeletableTopicResult) else answers[slot] for slot in slots]
        out = [r for r in out if r is not None]
        deleted = [r.name for r in out if r.error_code == NONE]
        return ControllerResult(tuple(records), R(throttle_time_ms=_throttle(quota), responses=out),
                                f"deleted {', '.join(deleted)}" if deleted else "")

    # ------------------------------------------------------------------------------------------------ CreatePartitions
    def create_partitions(self, image: MetadataImage, req, quota=None) -> ControllerResult:
        """A topic named twice is answered once, INVALID_REQUEST, ahead of the others, and not grown (Kafka's
        ControllerApis answers the duplicates first, then the controller's results for the rest). Both come in the
        order of the ``java.util.HashSet`` Kafka collects their names in (the others grow in that order too)."""
        R = m.CreatePartitionsResponse
        records: list[ApiMessageAndVersion] = []
        twice = duplicates(t.name for t in req.topics)
        results = [R.CreatePartitionsTopicResult(name=name, error_code=INVALID_REQUEST,
                                                 error_message="Duplicate topic name.")
                   for name in hashmap_order(twice, string_hash)]
        first = {}
        for t in req.topics:
            first.setdefault(t.name, t)
        for name in hashmap_order(first, string_hash):
            t = first[name]
            if t.name in twice:
                continue
            code, message = NONE, None
            try:
                new = self._more_partitions(image, t)
                if not _admitted(quota, len(new)):  # the partitions added charged (``create_topics``)
                    raise _Refused(*THROTTLED)
                if len(records) + len(new) > MAX_RECORDS_PER_USER_OP:
                    raise _Refused(POLICY_VIOLATION, "Excessively large number of partitions per request.")
                records.extend(new)
            except _Refused as r:
                code, message = r.code, r.message
            results.append(R.CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=message))
        return ControllerResult(() if req.validate_only else tuple(records),
                                R(throttle_time_ms=_throttle(quota), results=results))

    def _more_partitions(self, image: MetadataImage, t) -> list[ApiMessageAndVersion]:
        topic = image.topic(t.name)
        if topic is None:
            raise _Refused(UNKNOWN_TOPIC_OR_PARTITION, None)  # Kafka 4.4 words none
        have = len(topic.partitions)
        if t.count == have:
            raise _Refused(INVALID_PARTITIONS, f"Topic already has {have} partition(s).")
        if t.count < have:
            raise _Refused(INVALID_PARTITIONS, f"The topic {t.name} currently has {have} partition(s); {t.count} "
                                               "would not be an increase.")
        additional = t.count - have
        rf = len(next(iter(topic.partitions.values())).replicas)
        if t.assignments is not None:
            if len(t.assignments) != additional:
                raise _Refused(INVALID_REPLICA_ASSIGNMENT, f"Attempted to add {additional} additional partition(s), "
                                                           f"but only {len(t.assignments)} assignment(s) were "
                                                           "specified.")
            assignments = []
            for i, a in enumerate(t.assignments):
                replicas = _manual_replicas(image, a.broker_ids, rf)
                if not any(active(image, b) for b in replicas):
                    raise _Refused(INVALID_REPLICA_ASSIGNMENT,
                                   "All brokers specified in the manual partition assignment for partition "
                                   f"{have + i} are fenced or in controlled shutdown.")
                assignments.append(replicas)
        else:
            if additional > MAX_RECORDS_PER_USER_OP:
                raise _Refused(POLICY_VIOLATION, "Excessively large number of partitions per request.")
            try:
                assignments = place(usable_brokers(image), additional, rf, self.rng)
            except PlacementError as exc:
                raise _Refused(INVALID_REPLICATION_FACTOR, str(exc)) from None
        records = []
        for i, replicas in enumerate(assignments):
            isr = [b for b in replicas if active(image, b)]
            if not isr:
                raise _Refused(INVALID_REPLICATION_FACTOR, f"Unable to replicate the partition {rf} time(s): All "
                                                           "brokers are currently fenced or in controlled shutdown.")
            records.append(_partition_record(image, topic.id, have + i, replicas, isr))
        return records

    # ------------------------------------------------------------------------------------------------ AlterPartition
    def alter_partition(self, image: MetadataImage, req, version: int) -> ControllerResult:
        R = m.AlterPartitionResponse
        sender = image.brokers.get(req.broker_id)
        if sender is None or sender.epoch != req.broker_epoch:
            return ControllerResult((), R(throttle_time_ms=0, error_code=STALE_BROKER_EPOCH, topics=[]))
        mv = _mv(image)
        records: list[ApiMessageAndVersion] = []
        topics_out = []
        for td in req.topics:
            tout = R.TopicData(topic_id=td.topic_id, partitions=[])
            topics_out.append(tout)
            topic = image.topics.get(td.topic_id)
            if topic is None:
                tout.partitions = [R.PartitionData(partition_index=pd.partition_index, error_code=UNKNOWN_TOPIC_ID)
                                   for pd in td.partitions]
                continue
            for pd in td.partitions:
                states = ([(s.broker_id, s.broker_epoch) for s in pd.new_isr_with_epochs] if version >= 3
                          else [(b, -1) for b in pd.new_isr])
                p = topic.partitions.get(pd.partition_index)
                code = self._check_alter(image, req.broker_id, p, pd, states)
                if code != NONE:
                    tout.partitions.append(R.PartitionData(partition_index=pd.partition_index, error_code=code))
                    continue
                election = pc.UNCLEAN if self.node_config.unclean_allowed(image, topic.name) else pc.ONLINE
                change = pc.partition_change(mv, topic.id, pd.partition_index, p,
                                             acceptable=lambda b: active(image, b),
                                             isr=tuple(b for b, _ in states), election=election,
                                             recovery_state=pd.leader_recovery_state,
                                             **self.node_config.elr_options(image, topic.name))
                if change is not None:
                    records.append(change)
                    p = replay_all([change], image).topics[topic.id].partitions[pd.partition_index]
                    if change.message.leader not in (req.broker_id, -2):
                        tout.partitions.append(R.PartitionData(
                            partition_index=pd.partition_index,
                            error_code=NEW_LEADER_ELECTED))
                        continue
                tout.partitions.append(R.PartitionData(partition_index=pd.partition_index, error_code=NONE,
                                                       leader_id=p.leader, leader_epoch=p.leader_epoch,
                                                       isr=list(p.isr), leader_recovery_state=p.leader_recovery_state,
                                                       partition_epoch=p.partition_epoch))
        return ControllerResult(tuple(records), R(throttle_time_ms=0, error_code=NONE, topics=topics_out))

    @staticmethod
    def _check_alter(image: MetadataImage, sender: int, p: PartitionRegistration | None, pd, states) -> int:
        if p is None:
            return UNKNOWN_TOPIC_OR_PARTITION
        if pd.leader_epoch > p.leader_epoch or pd.partition_epoch > p.partition_epoch:
            return NOT_CONTROLLER
        if pd.leader_epoch < p.leader_epoch:
            return FENCED_LEADER_EPOCH
        if sender != p.leader:
            return INVALID_REQUEST
        if pd.partition_epoch < p.partition_epoch:
            return INVALID_UPDATE_VERSION
        isr = [b for b, _ in states]
        if not isr or len(set(isr)) != len(isr) or not set(isr) <= set(p.replicas) or p.leader not in isr:
            return INVALID_REQUEST
        if pd.leader_recovery_state == pc.RECOVERING and len(isr) > 1:
            return INVALID_REQUEST
        if p.leader_recovery_state == pc.RECOVERED and pd.leader_recovery_state == pc.RECOVERING:
            return INVALID_REQUEST
        for b, epoch in states:
            reg = image.brokers.get(b)
            if (reg is None or reg.fenced or reg.in_controlled_shutdown
                    or (epoch != -1 and epoch != reg.epoch)):
                return INELIGIBLE_REPLICA
        return NONE

    # ------------------------------------------------------------------------------------------------ ElectLeaders
    def elect_leaders(self, image: MetadataImage, req, version: int = 2) -> ControllerResult:
        R = m.ElectLeadersResponse
        election_type = req.election_type if version >= 1 else ELECTION_PREFERRED
        if election_type not in (ELECTION_PREFERRED, ELECTION_UNCLEAN):
            return ControllerResult((), R(throttle_time_ms=0, error_code=INVALID_REQUEST,
                                          replica_election_results=[]))
        records: list[ApiMessageAndVersion] = []
        results = []
        # every partition when none are named; then the ones that needed no election are left out, as Kafka does
        everything = req.topic_partitions is None
        wanted = ([(name, sorted(image.topic(name).partitions)) for name in sorted(image.topic_ids)] if everything
                  else [(tp.topic, tp.partitions) for tp in req.topic_partitions])
        for name, indexes in wanted:
            res = R.ReplicaElectionResult(topic=name, partition_result=[])
            results.append(res)
            for index in indexes:
                code, message = self._elect(image, name, index, election_type, records)
                if not (everything and code == ELECTION_NOT_NEEDED):
                    res.partition_result.append(R.PartitionResult(partition_id=index, error_code=code,
                                                                  error_message=message))
        return ControllerResult(tuple(records), R(throttle_time_ms=0, error_code=NONE,
                                                  replica_election_results=results))

    def _elect(self, image: MetadataImage, name: str, index: int, election_type: int,
               records: list) -> tuple[int, str | None]:
        topic = image.topic(name)
        if topic is None:
            return UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}"
        p = topic.partitions.get(index)
        if p is None:
            return UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{index}"
        # the refusals below carry their code's default message, as Kafka's ApiError of the code alone does
        if election_type == ELECTION_PREFERRED and p.replicas and p.leader == p.replicas[0]:
            return ELECTION_NOT_NEEDED, default_message(ELECTION_NOT_NEEDED)
        if election_type == ELECTION_UNCLEAN and p.leader != NO_LEADER:
            return ELECTION_NOT_NEEDED, default_message(ELECTION_NOT_NEEDED)
        # as Kafka: whatever change the election makes is written (a preferred election that finds the first
        # replica unavailable may still give a leaderless partition another leader); no change is the error
        change = pc.partition_change(_mv(image), topic.id, index, p, acceptable=lambda b: active(image, b),
                                     election=pc.PREFERRED if election_type == ELECTION_PREFERRED else pc.UNCLEAN,
                                     **self.node_config.elr_options(image, name))
        if change is None:
            code = PREFERRED_LEADER_NOT_AVAILABLE if election_type == ELECTION_PREFERRED else ELIGIBLE_LEADERS_NOT_AVAILABLE
            return code, default_message(code)
        if len(records) >= MAX_RECORDS_PER_USER_OP:
            return POLICY_VIOLATION, "Excessively large number of partitions per request."
        records.append(change)
        return NONE, None


    # ------------------------------------------------------------------------------------------------ rebalance
    def balance_leaders(self, image: MetadataImage, limit: int = MAX_ELECTIONS_PER_IMBALANCE) -> ControllerResult | None:
        """Kafka's maybeBalancePartitionLeaders (``auto.leader.rebalance.enable``): a preferred election for every
        partition led by another replica than its first while the first is in the ISR and active, at most
        ``limit`` per call (the next call takes the rest); None when every leader is preferred or cannot be."""
        records: list[ApiMessageAndVersion] = []
        mv = _mv(image)
        for tid in sorted(image.topics, key=lambda u: image.topics[u].name):
            topic = image.topics[tid]
            for index in sorted(topic.partitions):
                p = topic.partitions[index]
                if not p.replicas or p.leader == p.replicas[0]:
                    continue
                preferred = p.replicas[0]
                if preferred not in p.isr or not active(image, preferred):
                    continue
                change = pc.partition_change(mv, tid, index, p, acceptable=lambda b: active(image, b),
                                             election=pc.PREFERRED,
                                             **self.node_config.elr_options(image, topic.name))
                if change is not None:
                    records.append(change)
                if len(records) >= limit:
                    break
            if len(records) >= limit:
                break
        if not records:
            return None
        return ControllerResult(tuple(records), None,
                                f"auto leader rebalance: {len(records)} preferred leader election(s)")


    # ------------------------------------------------------------------------------------------------ KIP-858
    def assign_replicas_to_dirs(self, image: MetadataImage, req) -> ControllerResult:
        """AssignReplicasToDirs (a broker with several log directories says where it placed its replicas): each
        replica's directory is set in a PartitionChangeRecord; a replica placed in a directory the broker no
        longer has online leaves the ISR and leadership too. Kafka's checks: metadata version 3.7-IV2 or later,
        the broker registered with this epoch; per partition UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, and
        NOT_LEADER_OR_FOLLOWER when the broker is not one of its replicas."""
        R = m.AssignReplicasToDirsResponse
        mv = _mv(image)

        def refuse(code: int) -> ControllerResult:
            return ControllerResult((), R(throttle_time_ms=0, error_code=code, directories=[]))

        if not mv.at_least("3.7-IV2"):
            return refuse(UNSUPPORTED_VERSION)
        b = image.brokers.get(req.broker_id)
        if b is None:
            return refuse(BROKER_ID_NOT_REGISTERED)
        if b.epoch != req.broker_epoch:
            return refuse(STALE_BROKER_EPOCH)
        records: list[ApiMessageAndVersion] = []
        placed: dict[tuple, list] = {}
        offline: set = set()
        dirs_out = []
        for d in req.directories:
            dout = R.DirectoryData(id=d.id, topics=[])
            dirs_out.append(dout)
            for t in d.topics:
                topic = image.topics.get(t.topic_id)
                tout = R.TopicData(topic_id=t.topic_id, partitions=[])
                dout.topics.append(tout)
                for pd in t.partitions:
                    p = topic.partitions.get(pd.partition_index) if topic is not None else None
                    if topic is None:
                        code = UNKNOWN_TOPIC_ID
                    elif p is None:
                        code = UNKNOWN_TOPIC_OR_PARTITION
                    elif req.broker_id not in p.replicas:
                        code = NOT_LEADER_OR_FOLLOWER
                    else:
                        code = NONE
                        key = (t.topic_id, pd.partition_index)
                        dirs = placed.setdefault(key, list(p.directories))
                        dirs[p.replicas.index(req.broker_id)] = d.id
                        if d.id not in b.log_dirs:
                            offline.add(key)
                    tout.partitions.append(R.PartitionData(partition_index=pd.partition_index, error_code=code))
        for (tid, index), dirs in placed.items():
            if tuple(dirs) != image.topics[tid].partitions[index].directories:
                records.append(ApiMessageAndVersion(m.PartitionChangeRecord(
                    partition_id=index, topic_id=tid, leader=NO_LEADER_CHANGE, isr=None, leader_recovery_state=-1,
                    directories=dirs), mv.partition_record_version))
        if offline:
            after = replay_all(records, image) if records else image
            records += _changes(after, req.broker_id, removing=True, adding=False,
                                only=lambda tid, index, p: (tid, index) in offline, node=self.node_config)
        return ControllerResult(tuple(records), R(throttle_time_ms=0, error_code=NONE, directories=dirs_out))


# ================================================================================================================
# the broker lifecycle's partition changes
# ================================================================================================================
def _changes(image: MetadataImage, broker_id: int, *, removing: bool, adding: bool, only=None,
             unclean_shutdown: bool = False, in_elr: bool = False,
             node: NodeConfig = KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    """Kafka's generateLeaderAndIsrUpdates: with ``removing``, every partition whose ISR holds ``broker_id``
    (``in_elr``: whose ELR holds it) loses it (and it cannot lead); with ``unclean_shutdown`` it also may not stay
    in (or join) the ELR; with ``adding``, every leaderless partition may elect it (it counts as active although
    the image still shows it fenced). ``only(topic_id, index, registration)``: just those partitions."""
    mv = _mv(image)
    out = []

    def acceptable(b: int) -> bool:
        if removing and b == broker_id:
            return False
        return (adding and b == broker_id) or active(image, b)

    for tid in sorted(image.topics, key=lambda u: image.topics[u].name):
        topic = image.topics[tid]
        election = pc.UNCLEAN if node.unclean_allowed(image, topic.name) else pc.ONLINE
        options = node.elr_options(image, topic.name)
        if unclean_shutdown:
            options["unclean_shutdown"] = (broker_id,)
        for index in sorted(topic.partitions):
            p = topic.partitions[index]
            if removing and broker_id not in (p.elr if in_elr else p.isr):
                continue
            if adding and p.leader != NO_LEADER:
                continue
            if only is not None and not only(tid, index, p):
                continue
            isr = tuple(b for b in p.isr if b != broker_id) if removing else p.isr
            change = pc.partition_change(mv, tid, index, p, acceptable=acceptable, isr=isr, election=election,
                                         **options)
            if change is not None:
                out.append(change)
    return out


def fenced_changes(image: MetadataImage, broker_id: int, node: NodeConfig = KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    return _changes(image, broker_id, removing=True, adding=False, node=node)


def unclean_shutdown_changes(image: MetadataImage, broker_id: int,
                             node: NodeConfig = KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    """Kafka's handleBrokerShutdown for a broker that restarted without a clean shutdown while ELR is on: it
    leaves every ISR, then every ELR it is in (its log may have lost acknowledged records, so it may not be
    elected as an eligible replica). As in Kafka 4.4, a partition where it is only the last known leader (ISR and
    ELR empty) is not visited: it may still come back as that partition's last-known-leader (unclean) choice."""
    return [*_changes(image, broker_id, removing=True, adding=False, unclean_shutdown=True, node=node),
            *_changes(image, broker_id, removing=True, adding=False, unclean_shutdown=True, in_elr=True, node=node)]


def replica_dir(p: PartitionRegistration, broker_id: int):
    """The directory the image places ``broker_id``'s replica of ``p`` in (None: not a replica)."""
    for b, d in zip(p.replicas, p.directories):
        if b == broker_id:
            return d
    return None


def offline_dir_changes(image: MetadataImage, broker_id: int, dirs,
                        node: NodeConfig = KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    """Kafka's handleDirectoriesOffline for the partitions: the broker leaves the ISR and leadership of every
    partition whose replica on it is in one of ``dirs``."""
    dirs = set(dirs)
    return _changes(image, broker_id, removing=True, adding=False,
                    only=lambda tid, index, p: replica_dir(p, broker_id) in dirs, node=node)


def unfenced_changes(image: MetadataImage, broker_id: int, node: NodeConfig = KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    return _changes(image, broker_id, removing=False, adding=True, node=node)
