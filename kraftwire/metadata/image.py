"""The metadata image: what the records of ``__cluster_metadata`` add up to, immutable, one per published offset.

``MetadataDelta(image).replay(record)`` folds one record; ``delta.apply(offset)`` makes the next image and leaves the
old one untouched (parts a delta did not touch are shared). ``image.records()`` is the image as records, in the
versions its ``metadata.version`` implies: a snapshot holds exactly these, and replaying them on an empty image gives
the image back. A record that contradicts the image (a change for a topic, partition or broker that is not there, an
epoch that does not match, a producer id block that goes backwards) raises ``MetadataReplayError``: a node stops on
it, as Kafka's does. Pure: no I/O, no clocks.

The fold follows Kafka's ``org.apache.kafka.image`` deltas: ``PartitionChangeRecord`` fields that are null (or -2
for the leader, -1 for the recovery state) leave the value alone; a new leader bumps the leader epoch; every change
bumps the partition epoch. ``BrokerRegistrationChangeRecord`` fences with 1 and unfences with -1.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

from kraftwire.errors import KraftwireError
from kraftwire.ids import UUID, ZERO_UUID
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import FEATURE_NAME, BY_LEVEL, MetadataVersion
from kraftwire.protocol import messages as m

NO_LEADER = -1
NO_LEADER_CHANGE = -2
UNASSIGNED_DIR = ZERO_UUID
#: Kafka's DirectoryId.LOST and MIGRATING: a replica on a lost directory; a broker that registered no directories
LOST_DIR = UUID(int=1)
MIGRATING_DIR = UUID(int=2)
_EMPTY: Mapping = MappingProxyType({})


def _empty() -> Mapping:
    return _EMPTY


class MetadataReplayError(KraftwireError):
    """A record that cannot be applied to the image (the reason says which and why)."""


# ================================================================================================================
# parts
# ================================================================================================================
@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str
    host: str
    port: int
    security_protocol: int


@dataclass(frozen=True, slots=True)
class FeatureRange:
    name: str
    min_version: int
    max_version: int


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    id: int
    epoch: int
    incarnation_id: UUID
    listeners: tuple[Endpoint, ...]
    features: tuple[FeatureRange, ...]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    log_dirs: tuple[UUID, ...] = ()
    is_migrating_zk_broker: bool = False


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    id: int
    incarnation_id: UUID
    zk_migration_ready: bool
    listeners: tuple[Endpoint, ...]
    features: tuple[FeatureRange, ...]


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    directories: tuple[UUID, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    # KIP-966; empty when absent from the records, as Kafka's registration holds them (so a snapshot, which
    # leaves empty lists out, folds to the same image as the log)
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicImage:
    name: str
    id: UUID
    partitions: Mapping[int, PartitionRegistration] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


@dataclass(frozen=True, slots=True)
class AclEntry:
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class DelegationToken:
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int


@dataclass(frozen=True, slots=True)
class ProducerIds:
    broker_id: int = -1
    broker_epoch: int = -1
    next_producer_id: int = 0


# ================================================================================================================
# the image
# ================================================================================================================
@dataclass(frozen=True, slots=True)
class MetadataImage:
    offset: int = -1  # the last record folded in (-1: none)
    features: Mapping[str, int] = field(default_factory=_empty)
    brokers: Mapping[int, BrokerRegistration] = field(default_factory=_empty)
    controllers: Mapping[int, ControllerRegistration] = field(default_factory=_empty)
    topics: Mapping[UUID, TopicImage] = field(default_factory=_empty)
    topic_ids: Mapping[str, UUID] = field(default_factory=_empty)
    configs: Mapping[tuple[int, str], Mapping[str, str]] = field(default_factory=_empty)
    client_quotas: Mapping[tuple[tuple[str, str | None], ...], Mapping[str, float]] = field(default_factory=_empty)
    producer_ids: ProducerIds = ProducerIds()
    acls: Mapping[UUID, AclEntry] = field(default_factory=_empty)
    scram: Mapping[tuple[int, str], ScramCredential] = field(default_factory=_empty)
    delegation_tokens: Mapping[str, DelegationToken] = field(default_factory=_empty)
    zk_migration_state: int = 0

    @property
    def metadata_version(self) -> MetadataVersion | None:
        level = self.features.get(FEATURE_NAME)
        return BY_LEVEL.get(level) if level is not None else None

    def topic(self, name: str) -> TopicImage | None:
        tid = self.topic_ids.get(name)
        return self.topics.get(tid) if tid is not None else None

    def is_empty(self) -> bool:
        return self == MetadataImage(offset=self.offset)

    # ------------------------------------------------------------------------------------------------ snapshot
    def records(self) -> list[ApiMessageAndVersion]:
        """The image as records, at the versions its metadata.version implies (snapshots hold these)."""
        mv = self.metadata_version
        if mv is None:
            if not self.is_empty():
                raise MetadataReplayError("an image with content but no metadata.version cannot be written")
            return []
        out = [ApiMessageAndVersion(m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=mv.level), 0)]
        out += [ApiMessageAndVersion(m.FeatureLevelRecord(name=n, feature_level=lvl), 0)
                for n, lvl in sorted(self.features.items()) if n != FEATURE_NAME]
        rb = mv.register_broker_record_version
        for b in (self.brokers[i] for i in sorted(self.brokers)):
            out.append(ApiMessageAndVersion(m.RegisterBrokerRecord(
                broker_id=b.id, is_migrating_zk_broker=b.is_migrating_zk_broker, incarnation_id=b.incarnation_id,
                broker_epoch=b.epoch,
                end_points=[m.RegisterBrokerRecord.BrokerEndpoint(name=e.name, host=e.host, port=e.port,
                                                                  security_protocol=e.security_protocol)
                            for e in b.listeners],
                features=[m.RegisterBrokerRecord.BrokerFeature(name=f.name, min_supported_version=f.min_version,
                                                               max_supported_version=f.max_version)
                          for f in b.features],
                rack=b.rack, fenced=b.fenced, in_controlled_shutdown=b.in_controlled_shutdown,
                log_dirs=list(b.log_dirs)), rb))
        for c in (self.controllers[i] for i in sorted(self.controllers)):
            out.append(ApiMessageAndVersion(m.RegisterControllerRecord(
                controller_id=c.id, incarnation_id=c.incarnation_id, zk_migration_ready=c.zk_migration_ready,
                end_points=[m.RegisterControllerRecord.ControllerEndpoint(
                    name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol) for e in c.listeners],
                features=[m.RegisterControllerRecord.ControllerFeature(
                    name=f.name, min_supported_version=f.min_version, max_supported_version=f.max_version)
                    for f in c.features]), 0))
        pv = mv.partition_record_version
        for name in sorted(self.topic_ids):
            t = self.topics[self.topic_ids[name]]
            out.append(ApiMessageAndVersion(m.TopicRecord(name=t.name, topic_id=t.id), 0))
            for pid in sorted(t.partitions):
                p = t.partitions[pid]
                out.append(ApiMessageAndVersion(m.PartitionRecord(
                    partition_id=pid, topic_id=t.id, replicas=list(p.replicas), isr=list(p.isr),
                    removing_replicas=list(p.removing_replicas), adding_replicas=list(p.adding_replicas),
                    leader=p.leader, leader_recovery_state=p.leader_recovery_state, leader_epoch=p.leader_epoch,
                    partition_epoch=p.partition_epoch, directories=list(p.directories),
                    eligible_leader_replicas=list(p.elr) if p.elr else None,
                    last_known_elr=list(p.last_known_elr) if p.last_known_elr else None), pv))
        for (rtype, rname) in sorted(self.configs):
            for key, value in sorted(self.configs[(rtype, rname)].items()):
                out.append(ApiMessageAndVersion(m.ConfigRecord(resource_type=rtype, resource_name=rname, name=key,
                                                               value=value), 0))
        for entity in sorted(self.client_quotas, key=_entity_sort_key):
            for key, value in sorted(self.client_quotas[entity].items()):
                out.append(ApiMessageAndVersion(m.ClientQuotaRecord(
                    entity=[m.ClientQuotaRecord.EntityData(entity_type=t, entity_name=n) for t, n in entity],
                    key=key, value=value, remove=False), 0))
        if self.producer_ids != ProducerIds():
            p = self.producer_ids
            out.append(ApiMessageAndVersion(m.ProducerIdsRecord(broker_id=p.broker_id, broker_epoch=p.broker_epoch,
                                                                next_producer_id=p.next_producer_id), 0))
        for acl_id in sorted(self.acls):
            a = self.acls[acl_id]
            out.append(ApiMessageAndVersion(m.AccessControlEntryRecord(
                id=acl_id, resource_type=a.resource_type, resource_name=a.resource_name, pattern_type=a.pattern_type,
                principal=a.principal, host=a.host, operation=a.operation, permission_type=a.permission_type), 0))
        for (mechanism, name) in sorted(self.scram):
            s = self.scram[(mechanism, name)]
            out.append(ApiMessageAndVersion(m.UserScramCredentialRecord(
                name=name, mechanism=mechanism, salt=s.salt, stored_key=s.stored_key, server_key=s.server_key,
                iterations=s.iterations), 0))
        for token_id in sorted(self.delegation_tokens):
            d = self.delegation_tokens[token_id]
            out.append(ApiMessageAndVersion(m.DelegationTokenRecord(
                owner=d.owner, requester=d.requester, renewers=list(d.renewers), issue_timestamp=d.issue_timestamp,
                max_timestamp=d.max_timestamp, expiration_timestamp=d.expiration_timestamp, token_id=token_id), 0))
        if self.zk_migration_state:
            out.append(ApiMessageAndVersion(m.ZkMigrationStateRecord(zk_migration_state=self.zk_migration_state), 0))
        return out


def _entity_sort_key(entity):
    return tuple((t, "" if n is None else n, n is None) for t, n in entity)


# ================================================================================================================
# the delta
# ================================================================================================================
@dataclass
class MetadataDelta:
    """Records folded on top of ``image``; ``apply(offset)`` makes the next image. Only the parts touched are
    copied."""

    image: MetadataImage
    _parts: dict = field(default_factory=dict)

    def _part(self, name: str) -> dict:
        part = self._parts.get(name)
        if part is None:
            part = self._parts[name] = dict(getattr(self.image, name))
        return part

    def _topic_parts(self, topic_id: UUID, what: str) -> tuple[TopicImage, dict]:
        topics = self._part("topics")
        t = topics.get(topic_id)
        if t is None:
            raise MetadataReplayError(f"{what} for topic id {topic_id}, which does not exist")
        key = ("partitions", topic_id)
        parts = self._parts.get(key)
        if parts is None:
            parts = self._parts[key] = dict(t.partitions)
        return t, parts

    # ------------------------------------------------------------------------------------------------ replay
    def replay(self, record) -> None:
        handler = _REPLAY.get(type(record))
        if handler is None:
            raise MetadataReplayError(f"no replay for {type(record).__name__}")
        handler(self, record)

    def apply(self, offset: int) -> MetadataImage:
        changes = {}
        topic_parts = {k[1]: v for k, v in self._parts.items() if isinstance(k, tuple)}
        if topic_parts:
            topics = self._part("topics")
            for tid, parts in topic_parts.items():
                if tid in topics:
                    topics[tid] = replace(topics[tid], partitions=MappingProxyType(parts))
        for name, value in self._parts.items():
            if isinstance(name, str):
                changes[name] = MappingProxyType(value) if isinstance(value, dict) else value
        return replace(self.image, offset=offset, **changes)


def _feature_level(d: MetadataDelta, r) -> None:
    features = d._part("features")
    if r.feature_level == 0 and r.name != FEATURE_NAME:
        features.pop(r.name, None)
    else:
        if r.name == FEATURE_NAME and r.feature_level not in BY_LEVEL:
            raise MetadataReplayError(f"unknown metadata.version level {r.feature_level}")
        features[r.name] = r.feature_level


def _endpoints(items) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(e.name, e.host, e.port, e.security_protocol) for e in items)


def _feature_ranges(items) -> tuple[FeatureRange, ...]:
    return tuple(FeatureRange(f.name, f.min_supported_version, f.max_supported_version) for f in items)


def _register_broker(d: MetadataDelta, r) -> None:
    d._part("brokers")[r.broker_id] = BrokerRegistration(
        r.broker_id, r.broker_epoch, r.incarnation_id, _endpoints(r.end_points), _feature_ranges(r.features), r.rack,
        r.fenced, r.in_controlled_shutdown, tuple(r.log_dirs), r.is_migrating_zk_broker)


def _broker(d: MetadataDelta, broker_id: int, epoch: int, what: str) -> BrokerRegistration:
    b = d._part("brokers").get(broker_id)
    if b is None:
        raise MetadataReplayError(f"{what} for broker {broker_id}, which is not registered")
    if b.epoch != epoch:
        raise MetadataReplayError(f"{what} for broker {broker_id} epoch {epoch}, but its epoch is {b.epoch}")
    return b


def _unregister_broker(d: MetadataDelta, r) -> None:
    _broker(d, r.broker_id, r.broker_epoch, "UnregisterBrokerRecord")
    del d._part("brokers")[r.broker_id]


def _fence(d: MetadataDelta, r, fenced: bool) -> None:
    b = _broker(d, r.id, r.epoch, type(r).__name__)
    d._part("brokers")[r.id] = replace(b, fenced=fenced)


def _broker_change(d: MetadataDelta, r) -> None:
    b = _broker(d, r.broker_id, r.broker_epoch, "BrokerRegistrationChangeRecord")
    if r.fenced not in (-1, 0, 1) or r.in_controlled_shutdown not in (0, 1):
        raise MetadataReplayError(f"BrokerRegistrationChangeRecord for broker {r.broker_id}: fenced {r.fenced}, "
                                  f"in controlled shutdown {r.in_controlled_shutdown} are not valid values")
    fenced = b.fenced if r.fenced == 0 else r.fenced == 1
    shutting = b.in_controlled_shutdown or r.in_controlled_shutdown == 1
    d._part("brokers")[r.broker_id] = replace(b, fenced=fenced, in_controlled_shutdown=shutting,
                                              log_dirs=tuple(r.log_dirs) if r.log_dirs else b.log_dirs)


def _register_controller(d: MetadataDelta, r) -> None:
    d._part("controllers")[r.controller_id] = ControllerRegistration(
        r.controller_id, r.incarnation_id, r.zk_migration_ready, _endpoints(r.end_points), _feature_ranges(r.features))


def _unregister_controller(d: MetadataDelta, r) -> None:
    """As Kafka's ClusterControlManager replays it: the registration must exist."""
    if d._part("controllers").pop(r.controller_id, None) is None:
        raise MetadataReplayError(f"UnregisterControllerRecord for controller {r.controller_id}: no controller "
                                  "registration found for that id")


def _topic(d: MetadataDelta, r) -> None:
    ids = d._part("topic_ids")
    topics = d._part("topics")
    if r.name in ids or r.topic_id in topics:
        raise MetadataReplayError(f"TopicRecord {r.name} ({r.topic_id}): the name or id exists already")
    ids[r.name] = r.topic_id
    topics[r.topic_id] = TopicImage(r.name, r.topic_id)


def _remove_topic(d: MetadataDelta, r) -> None:
    topics = d._part("topics")
    t = topics.pop(r.topic_id, None)
    if t is None:
        raise MetadataReplayError(f"RemoveTopicRecord for topic id {r.topic_id}, which does not exist")
    del d._part("topic_ids")[t.name]
    d._parts.pop(("partitions", r.topic_id), None)
    d._part("configs").pop((2, t.name), None)  # the topic's configs go with it (ConfigResource TOPIC = 2)


def _partition(d: MetadataDelta, r) -> None:
    _, parts = d._topic_parts(r.topic_id, f"PartitionRecord {r.partition_id}")
    directories = tuple(r.directories) if r.directories else (UNASSIGNED_DIR,) * len(r.replicas)
    parts[r.partition_id] = PartitionRegistration(
        tuple(r.replicas), directories, tuple(r.isr), tuple(r.removing_replicas), tuple(r.adding_replicas), r.leader,
        r.leader_recovery_state, r.leader_epoch, r.partition_epoch,
        tuple(r.eligible_leader_replicas or ()), tuple(r.last_known_elr or ()))


def _partition_change(d: MetadataDelta, r) -> None:
    _, parts = d._topic_parts(r.topic_id, f"PartitionChangeRecord {r.partition_id}")
    p = parts.get(r.partition_id)
    if p is None:
        raise MetadataReplayError(f"PartitionChangeRecord for partition {r.partition_id} of topic id {r.topic_id}, "
                                  "which does not exist")
    replicas = p.replicas if r.replicas is None else tuple(r.replicas)
    if r.directories:
        directories = tuple(r.directories)
    elif r.replicas is not None:
        old = dict(zip(p.replicas, p.directories))
        directories = tuple(old.get(b, UNASSIGNED_DIR) for b in replicas)
    else:
        directories = p.directories
    leader_changed = r.leader != NO_LEADER_CHANGE
    parts[r.partition_id] = PartitionRegistration(
        replicas=replicas, directories=directories,
        isr=p.isr if r.isr is None else tuple(r.isr),
        removing_replicas=p.removing_replicas if r.removing_replicas is None else tuple(r.removing_replicas),
        adding_replicas=p.adding_replicas if r.adding_replicas is None else tuple(r.adding_replicas),
        leader=r.leader if leader_changed else p.leader,
        leader_recovery_state=p.leader_recovery_state if r.leader_recovery_state == -1 else r.leader_recovery_state,
        leader_epoch=p.leader_epoch + 1 if leader_changed else p.leader_epoch,
        partition_epoch=p.partition_epoch + 1,
        elr=p.elr if r.eligible_leader_replicas is None else tuple(r.eligible_leader_replicas),
        last_known_elr=p.last_known_elr if r.last_known_elr is None else tuple(r.last_known_elr))


def _clear_elr(d: MetadataDelta, r) -> None:
    """ClearElrRecord (min.insync.replicas changed while ELR is on): the named topic's partitions (every topic's
    when unnamed) lose their ELR and LastKnownElr, each as a PartitionChangeRecord setting both empty would (a
    partition epoch bump), as Kafka's replay merges one."""
    topic_ids = d._part("topic_ids")
    if r.topic_name:
        if r.topic_name not in topic_ids:
            raise MetadataReplayError(f"ClearElrRecord for topic {r.topic_name}, which does not exist")
        ids = [topic_ids[r.topic_name]]
    else:
        ids = [topic_ids[name] for name in sorted(topic_ids)]
    for tid in ids:
        _, parts = d._topic_parts(tid, "ClearElrRecord")
        for index, p in sorted(parts.items()):
            if p.elr or p.last_known_elr:
                _partition_change(d, m.PartitionChangeRecord(topic_id=tid, partition_id=index,
                                                             eligible_leader_replicas=[], last_known_elr=[]))


def _config(d: MetadataDelta, r) -> None:
    configs = d._part("configs")
    key = (r.resource_type, r.resource_name)
    current = dict(configs.get(key, {}))
    if r.value is None:
        current.pop(r.name, None)
    else:
        current[r.name] = r.value
    if current:
        configs[key] = MappingProxyType(current)
    else:
        configs.pop(key, None)


def _client_quota(d: MetadataDelta, r) -> None:
    quotas = d._part("client_quotas")
    entity = tuple(sorted(((e.entity_type, e.entity_name) for e in r.entity), key=lambda e: e[0]))
    current = dict(quotas.get(entity, {}))
    if r.remove:
        current.pop(r.key, None)
    else:
        current[r.key] = r.value
    if current:
        quotas[entity] = MappingProxyType(current)
    else:
        quotas.pop(entity, None)


def _producer_ids(d: MetadataDelta, r) -> None:
    current = d._parts.get("producer_ids", d.image.producer_ids)
    if r.next_producer_id <= current.next_producer_id and current != ProducerIds():
        raise MetadataReplayError(f"ProducerIdsRecord: next producer id {r.next_producer_id} does not pass "
                                  f"{current.next_producer_id}")
    d._parts["producer_ids"] = ProducerIds(r.broker_id, r.broker_epoch, r.next_producer_id)


def _acl(d: MetadataDelta, r) -> None:
    d._part("acls")[r.id] = AclEntry(r.resource_type, r.resource_name, r.pattern_type, r.principal, r.host,
                                     r.operation, r.permission_type)


def _remove_acl(d: MetadataDelta, r) -> None:
    if d._part("acls").pop(r.id, None) is None:
        raise MetadataReplayError(f"RemoveAccessControlEntryRecord for ACL {r.id}, which does not exist")


def _scram(d: MetadataDelta, r) -> None:
    d._part("scram")[(r.mechanism, r.name)] = ScramCredential(bytes(r.salt), bytes(r.stored_key),
                                                               bytes(r.server_key), r.iterations)


def _remove_scram(d: MetadataDelta, r) -> None:
    if d._part("scram").pop((r.mechanism, r.name), None) is None:
        raise MetadataReplayError(f"RemoveUserScramCredentialRecord for {r.name} mechanism {r.mechanism}, "
                                  "which does not exist")


def _token(d: MetadataDelta, r) -> None:
    d._part("delegation_tokens")[r.token_id] = DelegationToken(r.owner, r.requester, tuple(r.renewers),
                                                               r.issue_timestamp, r.max_timestamp,
                                                               r.expiration_timestamp)


def _remove_token(d: MetadataDelta, r) -> None:
    d._part("delegation_tokens").pop(r.token_id, None)


def _zk_state(d: MetadataDelta, r) -> None:
    d._parts["zk_migration_state"] = r.zk_migration_state


def _nothing(d: MetadataDelta, r) -> None:
    """NoOpRecord; transaction markers are the loader's business (it buffers between Begin and End)."""


_REPLAY = {
    m.FeatureLevelRecord: _feature_level,
    m.RegisterBrokerRecord: _register_broker,
    m.UnregisterBrokerRecord: _unregister_broker,
    m.FenceBrokerRecord: lambda d, r: _fence(d, r, True),
    m.UnfenceBrokerRecord: lambda d, r: _fence(d, r, False),
    m.BrokerRegistrationChangeRecord: _broker_change,
    m.RegisterControllerRecord: _register_controller,
    m.UnregisterControllerRecord: _unregister_controller,
    m.TopicRecord: _topic,
    m.RemoveTopicRecord: _remove_topic,
    m.PartitionRecord: _partition,
    m.PartitionChangeRecord: _partition_change,
    m.ConfigRecord: _config,
    m.ClearElrRecord: _clear_elr,
    m.ClientQuotaRecord: _client_quota,
    m.ProducerIdsRecord: _producer_ids,
    m.AccessControlEntryRecord: _acl,
    m.RemoveAccessControlEntryRecord: _remove_acl,
    m.UserScramCredentialRecord: _scram,
    m.RemoveUserScramCredentialRecord: _remove_scram,
    m.DelegationTokenRecord: _token,
    m.RemoveDelegationTokenRecord: _remove_token,
    m.ZkMigrationStateRecord: _zk_state,
    m.NoOpRecord: _nothing,
    m.BeginTransactionRecord: _nothing,
    m.EndTransactionRecord: _nothing,
    m.AbortTransactionRecord: _nothing,
}


def replay_all(records, image: MetadataImage | None = None, offset: int | None = None) -> MetadataImage:
    """Fold ``records`` (messages, or ``ApiMessageAndVersion``) onto ``image`` (default: empty)."""
    base = image or MetadataImage()
    delta = MetadataDelta(base)
    n = 0
    for item in records:
        delta.replay(item.message if isinstance(item, ApiMessageAndVersion) else item)
        n += 1
    return delta.apply(base.offset + n if offset is None else offset)
