"""Step builders for the data and coordinator scenarios (Produce, Fetch, groups, transactions). Names may hold
``{ns}``; values each node picks (producer ids, member ids, epochs) are :class:`conformance.runner.Learned`, and a
record batch carrying them is :class:`conformance.runner.Built` (see :mod:`conformance.runner`)."""

from __future__ import annotations

import struct

from conformance.runner import ZERO_UUID, Built, Learned, Step, TopicId, each_version, error_codes, no_error, versions
from conformance.steps import CREATE_VERSION, create, created, metadata, topic

from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder

A = "{ns}.a"
#: the records' timestamps: 2023-11-14, fixed so both nodes store the same bytes
T0 = 1_700_000_000_000
#: versions set-up steps use when the API under test is another one (both sides serve them)
PRODUCE_VERSION, FETCH_VERSION, INIT_VERSION, COORDINATOR_VERSION = 9, 12, 4, 3
#: Kafka's error codes the scenarios wait on
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 14, 15, 16
#: the producer id and epoch this side's last InitProducerId gave
PID, EPOCH = Learned("producer_id", default=-1), Learned("producer_epoch", default=-1)


def key_versions(api: str, *also: int) -> list[int]:
    """The oldest and newest versions both serve of ``api``, and ``also`` (where its layout changes)."""
    served = versions(api)
    return sorted({served.start, served.stop - 1, *also} & set(served))


def every_and_key_versions(api: str, every: dict, some: dict, *also: int, config: str = "single") -> list:
    """Scenarios of ``api``: the cases of ``every`` (a valid request, a refused one, the rules whose answer changes
    with the version) at every version both serve, those of ``some`` at the :func:`key_versions` (and ``also``)."""
    return [*each_version(api, every, config=config),
            *each_version(api, some, config=config, at=key_versions(api, *also))]


def topic_with(name: str, *configs: tuple[str, str], partitions: int = 1) -> list[Step]:
    """Set-up: create ``name`` with topic ``configs`` and wait until both nodes lead its partitions — and take
    writes: Kafka lists a new partition's leader in Metadata a moment before its replica leads, so ListOffsets
    (answered by the replica) is asked until it answers."""
    LO = w.ListOffsetsRequest
    return [create(CREATE_VERSION, topic(name, partitions, configs=configs)), metadata(name, until=no_error),
            Step(LO(replica_id=-1, isolation_level=0, topics=[LO.ListOffsetsTopic(name=name, partitions=[
                LO.ListOffsetsPartition(partition_index=p, timestamp=-1) for p in range(partitions)])]), 7,
                 until=no_error)]


# ------------------------------------------------------------------------------------------------------ records
def records(count: int = 3, *, first: int = 0, timestamp: int = T0, keys: bool = True, producer_id: int = -1,
            producer_epoch: int = -1, base_sequence: int = -1, transactional: bool = False,
            compression: str = "none", value_size: int = 0) -> bytes:
    """One RecordBatch v2 of ``count`` records ``k<i>``/``v<i>`` (``i`` from ``first``; no keys unless ``keys``;
    values padded to ``value_size`` bytes), timestamps 1 ms apart from ``timestamp``."""
    builder = RecordBatchBuilder(base_offset=0, producer_id=producer_id, producer_epoch=producer_epoch,
                                 base_sequence=base_sequence, is_transactional=transactional,
                                 compression=compression)
    for i in range(first, first + count):
        value = (b"v%d" % i).ljust(value_size, b".")
        builder.append(b"k%d" % i if keys else None, value, timestamp=timestamp + i - first)
    return builder.build()


def idempotent(count: int = 3, sequence: int = 0, *, first: int = 0, epoch=EPOCH, producer_id=PID,
               transactional: bool = False) -> Built:
    """A batch of the producer this side's InitProducerId gave (its id and epoch unless given) at ``sequence``."""
    return Built(records, count=count, first=first, producer_id=producer_id, producer_epoch=epoch,
                 base_sequence=sequence, transactional=transactional)


# -------------------------------------------------------------------------------------------------------- produce
P = w.ProduceRequest


def produce(version: int, *parts, acks: int = -1, transactional_id=None, until=None, timeout=None) -> Step:
    """Produce ``parts`` — (topic, partition, records), by id from v13 — in one request; acks=0 gets no answer, so
    the step waits 1 s for one (a node that closes the connection shows)."""
    by_topic: dict[str, list] = {}
    for name, partition, data in parts:
        by_topic.setdefault(name, []).append(P.PartitionProduceData(index=partition, records=data))
    by_id = version >= 13  # topics by id (KIP-516)
    request = P(transactional_id=transactional_id, acks=acks, timeout_ms=10000,
                topic_data=[P.TopicProduceData(name="" if by_id else n, topic_id=TopicId(n) if by_id else ZERO_UUID,
                                               partition_data=d) for n, d in by_topic.items()])
    return Step(request, version, until=until, timeout=1.0 if acks == 0 else timeout)


def written(name: str, *parts: tuple[int, bytes]) -> list[Step]:
    """Set-up: ``parts`` — (partition, records) — produced one request each (a new partition's replica may refuse
    a moment after Metadata names its leader: repeated while refused, which writes nothing)."""
    return [produce(PRODUCE_VERSION, (name, partition, data), until=no_error) for partition, data in parts]


# ---------------------------------------------------------------------------------------------------------- fetch
F = w.FetchRequest


def fetch_topic(version: int, name: str, *partitions, leader_epoch: int = -1) -> F.FetchTopic:
    """A Fetch topic by name (below v13) or by id; ``partitions`` as (partition, offset) or (partition, offset,
    partition_max_bytes); ``leader_epoch``: the current leader epoch the fetcher knows (v9+)."""
    return F.FetchTopic(
        topic=name if version < 13 else "", topic_id=TopicId(name) if version >= 13 else ZERO_UUID,
        partitions=[F.FetchPartition(partition=p[0], fetch_offset=p[1], current_leader_epoch=leader_epoch,
                                     partition_max_bytes=p[2] if len(p) > 2 else 1 << 20)
                    for p in partitions])


def settled(answer) -> bool:
    """``until`` for a Fetch: every partition's last stable offset has caught up with its high watermark (a
    transaction's marker, written after EndTxn returns, has landed)."""
    return all(p.last_stable_offset == p.high_watermark for t in answer.responses for p in t.partitions)


def fetch(version: int, *topics: F.FetchTopic, max_bytes: int = 50 << 20, isolation: int = 0,
          session_id: int | Learned = 0, session_epoch: int = -1, replica_id: int = -1, min_bytes: int = 0,
          max_wait_ms: int = 0, until=None) -> Step:
    """A Fetch of ``topics`` (see :func:`fetch_topic`); by default a sessionless consumer fetch that does not wait
    (min_bytes 0)."""
    return Step(F(cluster_id=None, replica_id=replica_id,
                  replica_state=F.ReplicaState(replica_id=replica_id), max_wait_ms=max_wait_ms,
                  min_bytes=min_bytes, max_bytes=max_bytes, isolation_level=isolation, session_id=session_id,
                  session_epoch=session_epoch, topics=list(topics), forgotten_topics_data=[],
                  rack_id=""), version, until=until)


# ---------------------------------------------------------------------------------------------- producer ids, txns
def init_producer_id(version: int, transactional_id: str | None = None, *, timeout_ms: int = 60000,
                     producer_id=-1, epoch=-1, until=None) -> Step:
    """InitProducerId, repeated while the coordinator loads (a node's first one waits for a block of ids)."""
    return Step(w.InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=timeout_ms,
                                        producer_id=producer_id, producer_epoch=epoch), version,
                until=until or _coordinator_ready)


def transactional(txn: str = "{ns}.t", version: int = INIT_VERSION) -> list[Step]:
    """Set-up: a transactional producer ``txn`` (its coordinator found first: both nodes create the transaction
    log on the first ask)."""
    return [find_coordinator(COORDINATOR_VERSION, txn, key_type=1), init_producer_id(version, txn)]


def _coordinator_ready(answer) -> bool:
    """``until``: no longer the answers of a coordinator that is still loading (or being created)."""
    return not {COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR} & set(error_codes(answer))


def add_partitions(version: int, *parts: tuple[str, list[int]], txn: str = "{ns}.t", producer_id=PID,
                   epoch=EPOCH, verify_only: bool = False) -> Step:
    """AddPartitionsToTxn of ``parts`` — (topic, [partition, ...]) — in the v3 layout or the batched v4+ one."""
    R = w.AddPartitionsToTxnRequest
    topics = [R.AddPartitionsToTxnTopic(name=n, partitions=list(ps)) for n, ps in parts]
    if version >= 4:
        return Step(R(transactions=[R.AddPartitionsToTxnTransaction(
            transactional_id=txn, producer_id=producer_id, producer_epoch=epoch, verify_only=verify_only,
            topics=topics)]), version)
    return Step(R(v3_and_below_transactional_id=txn, v3_and_below_producer_id=producer_id,
                  v3_and_below_producer_epoch=epoch, v3_and_below_topics=topics), version)


def add_offsets(version: int, group: str = "{ns}.g", *, txn: str = "{ns}.t", producer_id=PID, epoch=EPOCH) -> Step:
    return Step(w.AddOffsetsToTxnRequest(transactional_id=txn, producer_id=producer_id, producer_epoch=epoch,
                                         group_id=group), version)


def end_txn(version: int, committed: bool = True, *, txn: str = "{ns}.t", producer_id=PID, epoch=EPOCH) -> Step:
    return Step(w.EndTxnRequest(transactional_id=txn, producer_id=producer_id, producer_epoch=epoch,
                                committed=committed), version)


def marker(*parts: tuple[str, list[int]], producer_id=PID, epoch=EPOCH, commit: bool = True, version: int = 1,
           transaction_version: int = 0) -> Step:
    """WriteTxnMarkers at ``version`` of one COMMIT (or ABORT) marker for ``parts`` — (topic, [partition, ...]) — as
    a transaction coordinator sends it to a partition leader (coordinator epoch 0); v2 carries the transaction's
    ``transaction_version`` (KIP-1228), v1 none (the leader takes 0)."""
    R = w.WriteTxnMarkersRequest
    return Step(R(markers=[R.WritableTxnMarker(
        producer_id=producer_id, producer_epoch=epoch, transaction_result=commit, coordinator_epoch=0,
        transaction_version=transaction_version,
        topics=[R.WritableTxnMarkerTopic(name=n, partition_indexes=list(ps)) for n, ps in parts])]), version)


def txn_offset_commit(version: int, *parts: tuple[str, int, int], group: str = "{ns}.g", txn: str = "{ns}.t",
                      producer_id=PID, epoch=EPOCH, generation: int = -1, member_id="") -> Step:
    """TxnOffsetCommit of ``parts`` — (topic, partition, offset), by id from v6."""
    R = w.TxnOffsetCommitRequest
    by_topic: dict[str, list] = {}
    for name, partition, offset in parts:
        by_topic.setdefault(name, []).append(R.TxnOffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_metadata="m"))
    by_id = version >= 6  # topics by id (KIP-1319)
    return Step(R(transactional_id=txn, group_id=group, producer_id=producer_id, producer_epoch=epoch,
                  generation_id_or_member_epoch=generation, member_id=member_id,
                  topics=[R.TxnOffsetCommitRequestTopic(name="" if by_id else n,
                                                        topic_id=TopicId(n) if by_id else ZERO_UUID, partitions=ps)
                          for n, ps in by_topic.items()]),
                version)


# --------------------------------------------------------------------------------------------------------- groups
def find_coordinator(version: int, *keys: str, key_type: int = 0, until=_coordinator_ready) -> Step:
    """FindCoordinator of ``keys`` (one below v4, batched from v4), repeated while the coordinator loads."""
    R = w.FindCoordinatorRequest
    if version >= 4:
        return Step(R(key_type=key_type, coordinator_keys=list(keys)), version, until=until)
    return Step(R(key=keys[0], key_type=key_type), version, until=until)


G = "{ns}.g"
#: the session timeout members ask for: Kafka's minimum (group.min.session.timeout.ms), so nothing waits long
SESSION_MS = 6000
#: how long a rebalance may wait for the members to rejoin
REBALANCE_MS = 3000
#: versions set-up steps use for the classic group protocol when the API under test is another one
JOIN_VERSION, SYNC_VERSION, HEARTBEAT_VERSION, DESCRIBE_GROUPS_VERSION = 7, 5, 4, 5
COMMIT_VERSION, OFFSET_FETCH_VERSION = 8, 7
MEMBER, GENERATION = Learned("member_id", default=""), Learned("generation_id", default=-1)


def _strings(*items: str) -> bytes:
    return b"".join(struct.pack(">h", len(i.encode())) + i.encode() for i in items)


def subscription(*topics: str) -> bytes:
    """A consumer's subscription (ConsumerProtocolSubscription v0: the topics, no user data), as JoinGroup's
    protocol metadata; ``{ns}`` in the names is replaced per scenario (see :func:`join`)."""
    return struct.pack(">hi", 0, len(topics)) + _strings(*topics) + struct.pack(">i", -1)


def assignment(*parts: tuple[str, list[int]]) -> bytes:
    """A consumer's assignment (ConsumerProtocolAssignment v0), as SyncGroup carries it."""
    out = struct.pack(">hi", 0, len(parts))
    for name, partitions in parts:
        out += _strings(name) + struct.pack(">i", len(partitions)) + b"".join(struct.pack(">i", p)
                                                                            for p in partitions)
    return out + struct.pack(">i", -1)


def _namespaced(make, *args):
    """Bytes made from names holding ``{ns}``: built per side, so the names get the scenario's namespace."""
    return Built(lambda **named: make(*named.values()), **{f"a{i}": a for i, a in enumerate(args)})


def join(version: int, group: str = G, member_id="", *, protocol_type: str = "consumer", protocols=None,
         session_ms: int = SESSION_MS, instance_id=None, background: bool = False, until=None) -> Step:
    """A JoinGroup of a consumer subscribed to topic A (``protocols``: (name, metadata) pairs instead)."""
    R = w.JoinGroupRequest
    if protocols is None:
        protocols = [("range", _namespaced(subscription, A))]
    return Step(R(group_id=group, session_timeout_ms=session_ms, rebalance_timeout_ms=REBALANCE_MS,
                  member_id=member_id, group_instance_id=instance_id, protocol_type=protocol_type,
                  protocols=[R.JoinGroupRequestProtocol(name=n, metadata=m) for n, m in protocols]),
                version, background=background, until=until)


def joined(version: int = JOIN_VERSION, group: str = G, **options) -> list[Step]:
    """A new member in ``group``: from v4 the first JoinGroup only gets a member id (MEMBER_ID_REQUIRED), the
    second joins with it."""
    if version >= 4 and options.get("instance_id") is None:
        return [join(version, group, **options), join(version, group, MEMBER, **options)]
    return [join(version, group, **options)]


def sync(version: int, group: str = G, *, generation=GENERATION, member_id=MEMBER, assign: bool = True,
         protocol_type="consumer", protocol_name="range") -> Step:
    """SyncGroup; ``assign``: as the leader, giving the member (itself) topic A's partition 0; the protocol type and
    name go from v5 (where Kafka requires them)."""
    R = w.SyncGroupRequest
    assignments = [R.SyncGroupRequestAssignment(member_id=member_id, assignment=_namespaced(
        lambda name: assignment((name, [0])), A))] if assign else []
    return Step(R(group_id=group, generation_id=generation, member_id=member_id, protocol_type=protocol_type,
                  protocol_name=protocol_name, assignments=assignments), version)


def member(group: str = G) -> list[Step]:
    """Set-up: topic A, and one consumer in ``group`` through its first rebalance (joined, synced): Stable."""
    return [*created(A), *joined(JOIN_VERSION, group), sync(SYNC_VERSION, group)]


def heartbeat(version: int, group: str = G, *, generation=GENERATION, member_id=MEMBER) -> Step:
    return Step(w.HeartbeatRequest(group_id=group, generation_id=generation, member_id=member_id), version)


def leave(version: int, group: str = G, *members) -> Step:
    """LeaveGroup of ``members`` (member ids; the learned one by default): one below v3, a list from v3."""
    R = w.LeaveGroupRequest
    members = members or (MEMBER,)
    if version >= 3:
        return Step(R(group_id=group, members=[R.MemberIdentity(member_id=m) for m in members]), version)
    return Step(R(group_id=group, member_id=members[0]), version)


def describe_groups(version: int = DESCRIBE_GROUPS_VERSION, *groups: str, until=None) -> Step:
    return Step(w.DescribeGroupsRequest(groups=list(groups or (G,))), version, until=until)


def in_state(state: str):
    """``until`` for DescribeGroups: the (first) group is in ``state`` (e.g. a background join arrived)."""
    return lambda answer: bool(answer.groups) and answer.groups[0].group_state == state


def commit(version: int, *parts: tuple[str, int, int], group: str = G, generation=-1, member_id="",
           metadata: str = "m") -> Step:
    """OffsetCommit of ``parts`` — (topic, partition, offset), by id from v10; generation -1 and no member: a
    standalone commit."""
    R = w.OffsetCommitRequest
    by_topic: dict[str, list] = {}
    for name, partition, offset in parts:
        by_topic.setdefault(name, []).append(R.OffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_metadata=metadata))
    by_id = version >= 10  # topics by id (KIP-848)
    return Step(R(group_id=group, generation_id_or_member_epoch=generation, member_id=member_id,
                  topics=[R.OffsetCommitRequestTopic(name="" if by_id else n,
                                                     topic_id=TopicId(n) if by_id else ZERO_UUID, partitions=ps)
                          for n, ps in by_topic.items()]),
                version)


def committed(answer) -> bool:
    """``until`` for OffsetFetch: every partition asked has an offset (a transaction's, once its marker landed)."""
    groups = answer.groups if answer.groups else [answer]
    return all(p.committed_offset >= 0 for g in groups for t in g.topics for p in t.partitions)


def offset_fetch(version: int, *parts: tuple[str, list[int]] | None, group: str = G, require_stable: bool = False,
                 until=None) -> Step:
    """OffsetFetch of ``parts`` — (topic, [partition, ...]), by id from v10 — or, given None, of every committed
    partition (v2+)."""
    R = w.OffsetFetchRequest
    topics = None if parts == (None,) else parts
    if version >= 8:
        by_id = version >= 10  # topics by id (KIP-848)
        groups = [R.OffsetFetchRequestGroup(group_id=group, topics=None if topics is None else [
            R.OffsetFetchRequestTopics(name="" if by_id else n, topic_id=TopicId(n) if by_id else ZERO_UUID,
                                       partition_indexes=list(ps)) for n, ps in topics])]
        return Step(R(groups=groups, require_stable=require_stable), version, until=until)
    return Step(R(group_id=group, require_stable=require_stable, topics=None if topics is None else [
        R.OffsetFetchRequestTopic(name=n, partition_indexes=list(ps)) for n, ps in topics]), version, until=until)


def coordinated(cases: dict) -> dict:
    """``cases`` (name -> function(version) -> steps or None) each starting with a FindCoordinator for group G, as a
    client starts: the first one on a node creates ``__consumer_offsets``, which a group request needs (repeated
    until the coordinator is ready)."""
    def first(make):
        return lambda v: None if make(v) is None else [find_coordinator(COORDINATOR_VERSION, G), *make(v)]

    return {name: first(make) for name, make in cases.items()}
