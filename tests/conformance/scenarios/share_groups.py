"""KIP-932 share groups where both serve them: FindCoordinator's share keys (v6; refused before), ShareGroupHeartbeat,
ShareGroupDescribe, ShareFetch, ShareAcknowledge and the share-group offset admin APIs (DescribeShareGroupOffsets,
AlterShareGroupOffsets, DeleteShareGroupOffsets) answered UNSUPPORTED_VERSION while share.version is 0 (the pair's
configuration); with share.version 2 (the "share" pair) a share group's offsets described, altered and deleted,
ListGroups of the share type and DeleteGroups of share groups; and the share coordinator's state RPCs
(the inter-broker ones, CLUSTER_ACTION) for a key no coordinator serves (no ``__share_group_state`` yet) and for a
request with no topics."""

from __future__ import annotations

import uuid

from conformance.runner import Scenario, Step, TopicId
from conformance.steps import batch, created, produce

from kraftwire.protocol import messages as w

SH, SD = w.ShareGroupHeartbeatRequest, w.ShareGroupDescribeRequest
SF, SA = w.ShareFetchRequest, w.ShareAcknowledgeRequest
RS, WS = w.ReadShareGroupStateRequest, w.WriteShareGroupStateRequest
IS, DS, SS = w.InitializeShareGroupStateRequest, w.DeleteShareGroupStateRequest, w.ReadShareGroupStateSummaryRequest
#: a topic id neither cluster holds
TOPIC_ID = uuid.UUID("6f1c2a9e-3b4d-4e5f-8a7b-1c2d3e4f5a6b")

FC = w.FindCoordinatorRequest
#: the share key of partition 0 of a topic with TOPIC_ID in group "{ns}.g" (``group:topicIdBase64:partition``)
SHARE_KEY = "{ns}.g:bxwqnjtNTl-KexwtPk9aaw:0"



def fetch(epoch: int, member: str = "{ns}-m", acks: bool = False):
    """A ShareFetch of partition 0 of the unknown TOPIC_ID at session ``epoch`` (``acks``: acknowledging offset 0)."""
    batches = [SF.AcknowledgementBatch(first_offset=0, last_offset=0, acknowledge_types=[1])] if acks else []
    return SF(group_id="{ns}.g", member_id=member, share_session_epoch=epoch, max_wait_ms=0, min_bytes=1,
              max_bytes=1 << 20, max_records=10, batch_size=10, topics=[SF.FetchTopic(
                  topic_id=TOPIC_ID, partitions=[SF.FetchPartition(partition_index=0, acknowledgement_batches=batches)])],
              forgotten_topics_data=[])


G, A = "{ns}.g", "{ns}.a"
#: a member id within Kafka's 36 characters (the scenario's namespace is longer)
M = "share-member-1"
IAC = w.IncrementalAlterConfigsRequest


def _types(t) -> list[int]:
    """One acknowledge type, or a tuple of one per offset."""
    return list(t) if isinstance(t, tuple) else [t]


def share_fetch(epoch: int, acks=(), max_records: int = 4, wait: int = 0, version: int = 1, renew: bool = False,
                min_bytes: int = 1, max_bytes: int = 1 << 20) -> Step:
    """A ShareFetch of partition 0 of topic A on the scenario's connection, acknowledging ``acks`` ((first, last,
    type or types) batches); ``renew``: v2's IsRenewAck."""
    return Step(SF(group_id=G, member_id=M, share_session_epoch=epoch, max_wait_ms=wait, min_bytes=min_bytes,
                   max_bytes=max_bytes, max_records=max_records, batch_size=max_records, is_renew_ack=renew,
                   topics=[SF.FetchTopic(
                       topic_id=TopicId(A), partitions=[SF.FetchPartition(partition_index=0, acknowledgement_batches=[
                           SF.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=_types(t))
                           for f, last, t in acks])])],
                   forgotten_topics_data=[]), version, connection="c")


def share_ack(epoch: int, acks, version: int = 1, renew: bool = False) -> Step:
    batches = [SA.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=_types(t))
               for f, last, t in acks]
    return Step(SA(group_id=G, member_id=M, share_session_epoch=epoch, is_renew_ack=renew, topics=[
        SA.AcknowledgeTopic(topic_id=TopicId(A), partitions=[
            SA.AcknowledgePartition(partition_index=0, acknowledgement_batches=batches)])]), version, connection="c")


def assigned(answer) -> bool:
    return answer.error_code == 0 and bool(answer.assignment and answer.assignment.topic_partitions)


#: topic A with two batches (3 and 2 records) and a member of a share group reading it from the earliest offset
JOINED = [
    *created(A),
    Step(IAC(resources=[IAC.AlterConfigsResource(resource_type=32, resource_name=G, configs=[
        IAC.AlterableConfig(name="share.auto.offset.reset", config_operation=0, value="earliest")])],
        validate_only=False), 1),
    produce(A, 0, batch(3)),
    produce(A, 0, batch(2)),
    Step(FC(key_type=0, coordinator_keys=[G]), 6, until=lambda a: all(c.error_code == 0 for c in a.coordinators),
         probe=True),
    # the member joins (again) until its assignment names A: the group coordinator has then initialized the
    # share-partition (a set-up step, not compared: member-epochs compares the epochs of a join)
    Step(SH(group_id=G, member_id=M, member_epoch=0, rack_id=None, subscribed_topic_names=[A]), 1,
         until=assigned, probe=True),
]
#: a share group member of topic A whose share-partition the group coordinator initialized (from the earliest
#: offset: the group's share.auto.offset.reset), its records read — MaxRecords 2 and BatchSize 2 take the first
#: batch of 3 whole, in one range — and acknowledged: ACCEPT, RELEASE (redelivered with delivery count 2, by the
#: fetch after the one that carried the release), REJECT, an offset past the acquired ones (INVALID_REQUEST), then
#: the session closed
ACQUIRE = [
    *JOINED,
    share_fetch(0, max_records=2, wait=2000),
    share_fetch(1, acks=[(0, 0, 1), (1, 1, 2), (2, 2, 3)], max_records=10, wait=2000),
    share_ack(2, [(3, 4, 1)]),
    share_fetch(3, max_records=10, wait=500),
    share_ack(4, [(1, 1, 1), (9, 9, 1)]),
    share_ack(5, [(1, 1, 1)]),
    share_fetch(-1, acks=[]),
    # a group that never heartbeated fetches the same partition: its share-partition was never initialized, the
    # share coordinator refuses the read, and the partition is answered as SharePartition.maybeInitialize fails (the
    # fetch waits up to 2 s for it: with MaxWaitMs 0 Kafka answers either way, the partition left out when its
    # delayed fetch completes before the refusal comes back)
    Step(SF(group_id="{ns}.h", member_id="share-member-2", share_session_epoch=0, max_wait_ms=2000, min_bytes=1,
            max_bytes=1 << 20, max_records=4, batch_size=4, topics=[SF.FetchTopic(
                topic_id=TopicId(A), partitions=[SF.FetchPartition(partition_index=0)])],
            forgotten_topics_data=[]), 1, connection="d"),
]


def heartbeat(epoch: int, member: str = M, group: str = G, topics=(A,), until=None, probe: bool = False) -> Step:
    """A ShareGroupHeartbeat v1 (a join, epoch 0, subscribes to ``topics``)."""
    return Step(SH(group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
                   subscribed_topic_names=list(topics) if epoch == 0 else None), 1, until=until, probe=probe)


def describe_group() -> Step:
    return Step(SD(group_ids=[G], include_authorized_operations=False), 1)


DC = w.DescribeConfigsRequest
#: the most share.assignment.interval.ms a group may set (group.share.max.assignment.interval.ms)
LONG_INTERVAL = "15000"

#: a new member's epochs as Kafka 4.4 gives them: a new group starts at epoch 1, so the join is answered at epoch 2
#: (its topic's share-partition not initialized yet: nothing assigned); rejoins until the initialized partition is
#: assigned (epoch 3); with the group's assignment interval then set long, a second member's join bumps the group
#: epoch but gets the last target's epoch and nothing (KIP-1263: no new target within the interval); a member of
#: a new group subscribing to a topic no one has joins at epoch 2 too
EPOCHS = [
    *created(A),
    Step(FC(key_type=0, coordinator_keys=[G]), 6, until=lambda a: all(c.error_code == 0 for c in a.coordinators),
         probe=True),
    # another group's member joins and leaves until Kafka's coordinators are ready (it answers a first join
    # COORDINATOR_LOAD_IN_PROGRESS a while after FindCoordinator has found the group coordinator)
    heartbeat(0, group="{ns}.warm", until=lambda a: a.error_code == 0, probe=True),
    heartbeat(-1, group="{ns}.warm", probe=True),
    heartbeat(0),
    describe_group(),
    heartbeat(0, until=assigned, probe=True),
    describe_group(),
    Step(IAC(resources=[IAC.AlterConfigsResource(resource_type=32, resource_name=G, configs=[
        IAC.AlterableConfig(name="share.assignment.interval.ms", config_operation=0, value=LONG_INTERVAL)])],
        validate_only=False), 1),
    Step(DC(resources=[DC.DescribeConfigsResource(resource_type=32, resource_name=G,
                                                  configuration_keys=["share.assignment.interval.ms"])],
            include_synonyms=False, include_documentation=False), 4,
         until=lambda a: a.results[0].configs and a.results[0].configs[0].value == LONG_INTERVAL, probe=True),
    heartbeat(0, member="share-member-2"),
    describe_group(),
    heartbeat(0, group="{ns}.n", topics=["{ns}.none"]),
    heartbeat(-1),
]


RENEW = 4


def renew_enable(value: str) -> Step:
    return Step(IAC(resources=[IAC.AlterConfigsResource(resource_type=32, resource_name=G, configs=[
        IAC.AlterableConfig(name="share.renew.acknowledge.enable", config_operation=0, value=value)])],
        validate_only=False), 1)


#: KIP-1222's RENEW (ShareFetch / ShareAcknowledge v2, served at share.version 1: Kafka 4.4 gates it on the version
#: alone) on a member's five acquired records: renewed by ShareAcknowledge, refused without IsRenewAck and in v1
#: (INVALID_REQUEST for the partition), mixed per offset with ACCEPT; a ShareFetch with IsRenewAck and a MaxWaitMs
#: refused as a whole, one with its limits 0 only acknowledging (no records, though RELEASE made one available);
#: with the group's share.renew.acknowledge.enable false a RENEW is INVALID_RECORD_STATE; the session closed
RENEWING = [
    *JOINED,
    share_fetch(0, max_records=10, wait=2000),
    share_ack(1, [(0, 0, RENEW)], version=2, renew=True),
    share_ack(2, [(0, 0, RENEW)], version=2),
    share_ack(3, [(0, 0, RENEW)]),
    share_ack(4, [(0, 1, (RENEW, 1))], version=2, renew=True),
    # a batch starting at the previous one's last offset passes Kafka's order check (it refuses only one before it)
    share_ack(5, [(0, 0, RENEW), (0, 0, RENEW)], version=2, renew=True),
    share_ack(6, [(2, 3, RENEW), (3, 4, RENEW)], version=2, renew=True),
    share_ack(7, [(3, 3, 1), (3, 4, 1)], version=2, renew=True),  # accepted, then no longer acquired
    share_ack(8, [(3, 3, RENEW), (3, 4, 1)], version=2, renew=True),
    share_fetch(9, acks=[(0, 0, RENEW)], version=2, renew=True, wait=500),
    share_fetch(9, acks=[(0, 0, RENEW), (2, 2, 2)], version=2, renew=True, max_records=0, min_bytes=0,
                max_bytes=0),
    share_fetch(10, acks=[(0, 0, RENEW)], version=2, max_records=10),
    renew_enable("false"),
    share_ack(11, [(0, 0, RENEW)], version=2, renew=True),
    share_ack(12, [(0, 0, 1)], version=2, renew=True),
    share_fetch(-1, acks=[]),
]


DO, AO, DLO = w.DescribeShareGroupOffsetsRequest, w.AlterShareGroupOffsetsRequest, w.DeleteShareGroupOffsetsRequest
LG, DG = w.ListGroupsRequest, w.DeleteGroupsRequest
#: a topic neither cluster holds, and a group no one made
MISSING, NONE = "{ns}.missing", "{ns}.none"


def describe_offsets(*groups) -> Step:
    """DescribeShareGroupOffsets v1 of ``groups``: (group, None for every initialized partition, or {topic:
    partitions})."""
    return Step(DO(groups=[DO.DescribeShareGroupOffsetsRequestGroup(group_id=g, topics=None if topics is None else [
        DO.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps) for t, ps in topics.items()])
        for g, topics in groups]), 1)


def alter_offsets(group: str, offsets: dict) -> Step:
    """AlterShareGroupOffsets of {topic: {partition: start offset}}."""
    return Step(AO(group_id=group, topics=[AO.AlterShareGroupOffsetsRequestTopic(topic_name=t, partitions=[
        AO.AlterShareGroupOffsetsRequestPartition(partition_index=p, start_offset=o) for p, o in ps.items()])
        for t, ps in offsets.items()]), 0)


def delete_offsets(group: str, *topics: str) -> Step:
    return Step(DLO(group_id=group, topics=[DLO.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in topics]), 0)


#: a share group whose member read topic A's three records and accepted them (start offset 3), described, refused
#: alteration and deletion while the member is in it; after it left, altered (start offset 1 for partition 0; a
#: partition past the topic's and an unknown topic refused), described with its lag, its offsets deleted, a new
#: group made by an alteration, listed by type, and both deleted with their share state
OFFSETS = [
    *created(A),
    Step(IAC(resources=[IAC.AlterConfigsResource(resource_type=32, resource_name=G, configs=[
        IAC.AlterableConfig(name="share.auto.offset.reset", config_operation=0, value="earliest")])],
        validate_only=False), 1),
    produce(A, 0, batch(3)),
    Step(FC(key_type=0, coordinator_keys=[G]), 6, until=lambda a: all(c.error_code == 0 for c in a.coordinators),
         probe=True),
    Step(SH(group_id=G, member_id=M, member_epoch=0, rack_id=None, subscribed_topic_names=[A]), 1,
         until=assigned, probe=True),
    share_fetch(0, max_records=10, wait=2000),
    share_fetch(-1, acks=[(0, 2, 1)]),
    describe_offsets((G, {A: [0]}), (G, None), (NONE, None), (G, {MISSING: [0]}), (G, {})),
    alter_offsets(G, {A: {0: 1}}),
    delete_offsets(G, A),
    Step(DG(groups_names=[G]), 2),
    Step(SH(group_id=G, member_id=M, member_epoch=-1, rack_id=None, subscribed_topic_names=None), 1),
    alter_offsets(G, {A: {0: 1, 7: 0}, MISSING: {0: 0}}),
    describe_offsets((G, None)),
    delete_offsets(NONE, A),
    delete_offsets(G, A, MISSING),
    delete_offsets(G, A),
    describe_offsets((G, None), (G, {A: [0]})),
    Step(LG(states_filter=[], types_filter=["share"]), 5, scope=True),
    alter_offsets("{ns}.new", {A: {0: 2}}),
    describe_offsets(("{ns}.new", None)),
    Step(DG(groups_names=[G]), 2),
    Step(LG(states_filter=[], types_filter=["share"]), 5, scope=True),
    Step(DG(groups_names=["{ns}.new"]), 2),
    Step(DG(groups_names=[NONE]), 2),
    Step(LG(states_filter=[], types_filter=["share"]), 5, scope=True),
]


SCENARIOS = [
    Scenario("FindCoordinator", 6, "share-keys", [
        Step(FC(key_type=2, coordinator_keys=["{ns}.g:not-a-uuid:0", "{ns}.g:bxwqnjtNTl-KexwtPk9aaw",
                                              "{ns}.g:bxwqnjtNTl-KexwtPk9aaw:-1"]), 6),
        # both create __share_group_state on this first ask, and both fail to at its replication factor 3 on one node
        Step(FC(key_type=2, coordinator_keys=[SHARE_KEY]), 6),
        Step(FC(key_type=2, coordinator_keys=[SHARE_KEY]), 5),
    ]),
    Scenario("ShareGroupHeartbeat", 1, "share-version-off", [
        Step(SH(group_id="{ns}.g", member_id="{ns}-m", member_epoch=0, rack_id=None,
                subscribed_topic_names=["{ns}.a"]), 1),
    ]),
    Scenario("ShareGroupDescribe", 1, "share-version-off", [
        Step(SD(group_ids=["{ns}.g", "{ns}.h"], include_authorized_operations=False), 1),
    ]),
    Scenario("ShareFetch", 1, "share-version-off", [
        Step(SF(group_id="{ns}.g", member_id="{ns}-m", share_session_epoch=0, max_wait_ms=0, min_bytes=1,
                max_bytes=1 << 20, max_records=10, batch_size=10, topics=[SF.FetchTopic(
                    topic_id=TOPIC_ID, partitions=[SF.FetchPartition(partition_index=0)])],
                forgotten_topics_data=[]), 1),
    ]),
    Scenario("ShareAcknowledge", 1, "share-version-off", [
        Step(SA(group_id="{ns}.g", member_id="{ns}-m", share_session_epoch=1, topics=[SA.AcknowledgeTopic(
            topic_id=TOPIC_ID, partitions=[SA.AcknowledgePartition(partition_index=0, acknowledgement_batches=[
                SA.AcknowledgementBatch(first_offset=0, last_offset=0, acknowledge_types=[1])])])]), 1),
    ]),
    # share.version 2: a share session's epochs (Kafka's SharePartitionManager.newContext / acknowledgeSessionUpdate)
    # on one connection (a session ends when the connection that opened it closes), and the refusals before them
    Scenario("ShareFetch", 1, "session-epochs", [
        Step(fetch(1), 1),
        Step(fetch(-1), 1),
        Step(fetch(0, member=""), 1),
        Step(fetch(0, acks=True), 1),
        *(Step(body, 1, connection="c") for body in (
            fetch(0), fetch(5), fetch(1),
            SA(group_id="{ns}.g", member_id="{ns}-m", share_session_epoch=0, topics=[]),
            SA(group_id="{ns}.g", member_id="{ns}-m", share_session_epoch=2, topics=[]),
            fetch(3), fetch(-1), fetch(4))),
        # the session the connection opened ended with it
        Step(fetch(0), 1, connection="d"),
        Step(fetch(1), 1, connection="d"),
        Step(fetch(1), 1, connection="e"),
    ], config="share"),
    Scenario("ShareFetch", 1, "acquire-and-acknowledge", ACQUIRE, config="share"),
    Scenario("ShareAcknowledge", 2, "renew", RENEWING, config="share"),
    Scenario("ShareGroupHeartbeat", 1, "member-epochs", EPOCHS, config="share"),
    Scenario("DescribeShareGroupOffsets", 1, "share-version-off", [describe_offsets((G, None), (G, {A: [0]}))]),
    Scenario("AlterShareGroupOffsets", 0, "share-version-off", [alter_offsets(G, {A: {0: 0}})]),
    Scenario("DeleteShareGroupOffsets", 0, "share-version-off", [delete_offsets(G, A)]),
    Scenario("AlterShareGroupOffsets", 0, "share-group-offsets", OFFSETS, config="share"),
    Scenario("ReadShareGroupState", 0, "no-topics", [
        Step(RS(group_id="{ns}.g", topics=[]), 0),
    ]),
    Scenario("WriteShareGroupState", 1, "no-partitions", [
        Step(WS(group_id="{ns}.g", topics=[WS.WriteStateData(topic_id=TOPIC_ID, partitions=[])]), 1),
    ]),
    Scenario("ReadShareGroupStateSummary", 1, "empty-group-id", [
        Step(SS(group_id="", topics=[SS.ReadStateSummaryData(topic_id=TOPIC_ID, partitions=[
            SS.PartitionData(partition=0, leader_epoch=0)])]), 1),
    ]),
    Scenario("ReadShareGroupState", 0, "no-coordinator", [
        Step(RS(group_id="{ns}.g", topics=[RS.ReadStateData(topic_id=TOPIC_ID, partitions=[
            RS.PartitionData(partition=0, leader_epoch=0)])]), 0),
    ]),
    Scenario("InitializeShareGroupState", 0, "no-coordinator", [
        Step(IS(group_id="{ns}.g", topics=[IS.InitializeStateData(topic_id=TOPIC_ID, partitions=[
            IS.PartitionData(partition=0, state_epoch=0, start_offset=-1)])]), 0),
    ]),
    Scenario("DeleteShareGroupState", 0, "no-coordinator", [
        Step(DS(group_id="{ns}.g", topics=[DS.DeleteStateData(topic_id=TOPIC_ID, partitions=[
            DS.PartitionData(partition=0)])]), 0),
    ]),
]
