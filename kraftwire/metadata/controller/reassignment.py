"""Partition reassignment (KIP-455, KIP-860): the active controller's side, pure.

A reassignment moves a partition from its replicas to a target list in stages, all recorded in the partition's
registration (Kafka's ``ReplicationControlManager`` with ``PartitionReassignmentReplicas``):

1. **Start.** One PartitionChangeRecord sets ``replicas`` to the target followed by the current replicas the target
   leaves out, ``adding_replicas`` to the target's new brokers and ``removing_replicas`` to the ones it leaves out
   (both in broker-id order). The adding replicas are replicas now: their brokers host the partition, fetch it from
   the leader and are taken into the ISR once caught up, as any follower.
2. **Completion.** The change that puts the last adding replica into the ISR (an AlterPartition of the leader, or
   any other change: ``partitions.partition_change`` checks on every one) drops the removing replicas from
   ``replicas`` and the ISR, clears adding/removing, elects a leader among the remaining replicas if the old one is
   removed, and bumps the leader epoch since replicas left. A target the ISR already covers (a reordering, a
   shrink) completes at once, in the starting record.
3. **Cancellation** (a null replica list): back to the original replicas (the current ones without the adding
   ones), the ISR without the adding ones; when that leaves no ISR member the first original replica is taken
   unclean, only if the topic allows unclean elections (else INVALID_REPLICA_ASSIGNMENT), and the election is then
   UNCLEAN.

Refusals, per partition, with Kafka's messages: an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION; a target
that is empty, names a broker twice or an unregistered one INVALID_REPLICA_ASSIGNMENT; with
``allow_replication_factor_change`` false (AlterPartitionReassignments v1, KIP-860) a target of another length than
the replica count the partition is headed for INVALID_REPLICATION_FACTOR; cancelling where nothing is in progress
NO_REASSIGNMENT_IN_PROGRESS; a partition whose record would take the request past 10,000 records
UNKNOWN_SERVER_ERROR (Kafka's bounded record list). A refused partition writes nothing; the others' records are
written together.

ListPartitionReassignments answers from the image: every partition with adding or removing replicas (all topics by
name, partitions by index), or those of the topics and partitions asked for (unknown ones left out, as Kafka does).
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.error_codes import (
    INVALID_REPLICA_ASSIGNMENT,
    INVALID_REPLICATION_FACTOR,
    NO_REASSIGNMENT_IN_PROGRESS,
    NONE,
    UNKNOWN_SERVER_ERROR,
    UNKNOWN_TOPIC_OR_PARTITION,
)
from kraftwire.metadata.controller import partitions as pc
from kraftwire.metadata.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from kraftwire.metadata.controller.topics import (
    KAFKA_DEFAULTS,
    NodeConfig,
    _manual_replicas,
    _mv,
    _Refused,
    active,
    default_dir,
)
from kraftwire.metadata.image import MetadataImage, PartitionRegistration
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m


@dataclass(frozen=True, slots=True)
class ReassignmentReplicas:
    """A reassignment's replica lists (Kafka's ``PartitionReassignmentReplicas``): ``replicas`` is the target
    followed by the removing replicas."""

    removing: tuple[int, ...]
    adding: tuple[int, ...]
    replicas: tuple[int, ...]

    @classmethod
    def between(cls, current: tuple[int, ...], target: tuple[int, ...]) -> "ReassignmentReplicas":
        removing = tuple(sorted(set(current) - set(target)))
        adding = tuple(sorted(set(target) - set(current)))
        return cls(removing, adding, tuple(target) + removing)

    @classmethod
    def of(cls, p: PartitionRegistration) -> "ReassignmentReplicas":
        return cls(p.removing_replicas, p.adding_replicas, p.replicas)

    @property
    def in_progress(self) -> bool:
        return bool(self.removing or self.adding)

    def original(self) -> tuple[int, ...]:
        """The replicas before the reassignment: the current ones without the adding ones."""
        return tuple(b for b in self.replicas if b not in self.adding)

    def target(self) -> tuple[int, ...]:
        """The replicas after the reassignment: the current ones without the removing ones."""
        return tuple(b for b in self.replicas if b not in self.removing)


def in_progress(p: PartitionRegistration) -> bool:
    return bool(p.adding_replicas or p.removing_replicas)


@dataclass(frozen=True, slots=True)
class Revert:
    """Where cancelling ``p``'s reassignment goes (Kafka's ``PartitionReassignmentRevert``): the original replicas,
    the ISR without the adding ones, and whether that took an unclean choice (no ISR member was left, the first
    original replica is the ISR)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    unclean: bool

    @classmethod
    def of(cls, p: PartitionRegistration) -> "Revert":
        ongoing = ReassignmentReplicas.of(p)
        replicas = ongoing.original()
        isr = tuple(b for b in p.isr if b not in ongoing.adding)
        if isr:
            return cls(replicas, isr, False)
        if not replicas:  # a partition that had no replicas before the reassignment: not reachable through Kafka
            raise _Refused(INVALID_REPLICA_ASSIGNMENT, "Invalid replica assignment: addingReplicas contains all "
                                                       "replicas.")
        return cls(replicas, (replicas[0],), True)


# ================================================================================================================
# AlterPartitionReassignments
# ================================================================================================================
def alter(image: MetadataImage, req, version: int, node: NodeConfig = KAFKA_DEFAULTS) -> ControllerResult:
    """AlterPartitionReassignments: each partition started, changed or cancelled against ``image`` (the request's
    partitions do not see each other's records, as in Kafka); the records of those accepted, written together."""
    R = m.AlterPartitionReassignmentsResponse
    allow_rf_change = req.allow_replication_factor_change if version >= 1 else True
    records: list[ApiMessageAndVersion] = []
    responses = []
    for t in req.topics:
        out = R.ReassignableTopicResponse(name=t.name, partitions=[])
        responses.append(out)
        for target in t.partitions:
            code, message = NONE, None
            try:
                change = _alter_one(image, t.name, target.partition_index, target.replicas, allow_rf_change, node)
            except _Refused as e:
                code, message = e.code, e.message
            else:
                if change is not None and len(records) >= MAX_RECORDS_PER_USER_OP:
                    # Kafka's bounded record list throws for the one too many: an unknown error, without a message
                    code = UNKNOWN_SERVER_ERROR
                elif change is not None:
                    records.append(change)
            out.partitions.append(R.ReassignablePartitionResponse(partition_index=target.partition_index,
                                                                  error_code=code, error_message=message))
    return ControllerResult(tuple(records), R(throttle_time_ms=0, allow_replication_factor_change=allow_rf_change,
                                              error_code=NONE, error_message=None, responses=responses))


def _alter_one(image: MetadataImage, name: str, index: int, target, allow_rf_change: bool,
               node: NodeConfig) -> ApiMessageAndVersion | None:
    topic = image.topic(name)
    if topic is None:
        raise _Refused(UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {name}.")
    p = topic.partitions.get(index)
    if p is None:
        raise _Refused(UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {name}:{index}.")
    if target is None:
        return _cancel(image, name, topic.id, index, p, node)
    return _change(image, topic.id, index, p, tuple(target), allow_rf_change, node.elr_options(image, name))


def _cancel(image: MetadataImage, name: str, topic_id, index: int, p: PartitionRegistration,
            node: NodeConfig) -> ApiMessageAndVersion | None:
    if not in_progress(p):
        # the code's own default text, which Kafka's ApiError leaves out (a generic message is not repeated)
        raise _Refused(NO_REASSIGNMENT_IN_PROGRESS)
    revert = Revert.of(p)
    unclean_allowed = node.unclean_allowed(image, name)
    if revert.unclean and not unclean_allowed:
        raise _Refused(INVALID_REPLICA_ASSIGNMENT, f"Unable to revert partition assignment for {name}:{index} "
                                                   "because it would require an unclean leader election.")
    return pc.partition_change(_mv(image), topic_id, index, p, acceptable=lambda b: active(image, b),
                               election=pc.UNCLEAN if unclean_allowed else pc.ONLINE, isr=revert.isr,
                               replicas=revert.replicas, adding=(), removing=(),
                               default_dir=lambda b: default_dir(image, b), **node.elr_options(image, name))


def _change(image: MetadataImage, topic_id, index: int, p: PartitionRegistration, target: tuple[int, ...],
            allow_rf_change: bool, elr_options: dict) -> ApiMessageAndVersion | None:
    _manual_replicas(image, target, None)
    if not allow_rf_change:
        heading = len(ReassignmentReplicas.of(p).target()) if in_progress(p) else len(p.replicas)
        if heading != len(target):
            raise _Refused(INVALID_REPLICATION_FACTOR,
                           f"The replication factor is changed from {heading} to {len(target)}")
    moves = ReassignmentReplicas.between(p.replicas, target)
    return pc.partition_change(_mv(image), topic_id, index, p, acceptable=lambda b: active(image, b),
                               replicas=moves.replicas, adding=moves.adding, removing=moves.removing,
                               default_dir=lambda b: default_dir(image, b), **elr_options)


# ================================================================================================================
# ListPartitionReassignments
# ================================================================================================================
def list_reassignments(image: MetadataImage, req) -> ControllerResult:
    R = m.ListPartitionReassignmentsResponse
    if req.topics is None:
        wanted = [(topic.name, sorted(topic.partitions)) for topic in
                  sorted(image.topics.values(), key=lambda t: t.name)]
    else:
        wanted = [(t.name, t.partition_indexes) for t in req.topics]
    topics = []
    for name, indexes in wanted:
        topic = image.topic(name)
        if topic is None:
            continue
        ongoing = []
        for index in indexes:
            p = topic.partitions.get(index)
            if p is not None and in_progress(p):
                ongoing.append(R.OngoingPartitionReassignment(partition_index=index, replicas=list(p.replicas),
                                                              adding_replicas=list(p.adding_replicas),
                                                              removing_replicas=list(p.removing_replicas)))
        if ongoing:
            topics.append(R.OngoingTopicReassignment(name=name, partitions=ongoing))
    return ControllerResult((), R(throttle_time_ms=0, error_code=NONE, error_message=None, topics=topics))
