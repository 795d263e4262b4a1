"""Partition reassignment on the active controller (``metadata.controller.reassignment`` and the completion in
``partitions.partition_change``), mirrored from Kafka's ``PartitionReassignmentReplicasTest`` and the reassignment
tests of ``ReplicationControlManagerTest`` (testReassignPartitions, testCancelReassignPartitions,
testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas), plus KIP-860's refusal. Records
go through the serde into the image, as a node that fetched them would replay them."""

from __future__ import annotations

import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata.controller import partitions as pc
from kraftwire.metadata.controller import reassignment as ra
from kraftwire.metadata.controller.quorum import QuorumController
from kraftwire.metadata.controller.topics import fenced_changes
from kraftwire.metadata.image import PartitionRegistration, UNASSIGNED_DIR
from kraftwire.protocol import messages as m

from metadata.test_topic_control import alter, cluster, control, create, topic

AR = m.AlterPartitionReassignmentsRequest
LR = m.ListPartitionReassignmentsRequest


def d(b: int) -> uuid.UUID:
    """Broker ``b``'s one log directory in ``cluster()``."""
    return uuid.UUID(int=1000 + b)


def setup(brokers, topics, *, unclean=()):
    """An image with ``brokers`` registered and active and ``topics`` ({name: [replicas per partition]}) created
    with those assignments; ``unclean``: topics with unclean.leader.election.enable."""
    rc = control()
    img = cluster(brokers)
    for name, parts in topics.items():
        configs = [("unclean.leader.election.enable", "true")] if name in unclean else []
        img = replay(img, create(rc, img, topic(name, assignments=list(enumerate(parts)), configs=configs)).records)
    return rc, img


def reassign(img, targets, *, version=1, allow_rf_change=True, rc=None):
    """AlterPartitionReassignments for ``targets``: [(topic, [(partition, replicas or None)])]."""
    req = AR(timeout_ms=30000, allow_replication_factor_change=allow_rf_change, topics=[
        AR.ReassignableTopic(name=name, partitions=[AR.ReassignablePartition(partition_index=i, replicas=r)
                                                    for i, r in parts]) for name, parts in targets])
    return ra.alter(img, req, version, rc.node_config if rc is not None else ra.KAFKA_DEFAULTS)


def answers(res):
    return [(t.name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
            for t in res.response.responses]


def listed(img, topics=None):
    req = LR(timeout_ms=30000, topics=None if topics is None else [
        LR.ListPartitionReassignmentsTopics(name=n, partition_indexes=list(i)) for n, i in topics])
    res = ra.list_reassignments(img, req)
    assert res.records == () and res.response.error_code == ec.NONE
    return [(t.name, [(p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas) for p in t.partitions])
            for t in res.response.topics]


def reg(img, name, index=0) -> PartitionRegistration:
    return img.topic(name).partitions[index]


# ================================================================================================================
# PartitionReassignmentReplicasTest
# ================================================================================================================
@pytest.mark.parametrize("current, target, removing, adding, replicas", [
    ((3, 2, 1), (3, 2, 1), (), (), (3, 2, 1)),  # testNoneAddedOrRemoved
    ((3, 2, 1), (3, 6, 2, 1, 5), (), (5, 6), (3, 6, 2, 1, 5)),  # testAdditions
    ((3, 2, 1, 0), (3, 1), (0, 2), (), (3, 1, 0, 2)),  # testRemovals
    ((3, 2, 1, 0), (7, 3, 1, 9), (0, 2), (7, 9), (7, 3, 1, 9, 0, 2)),  # testAdditionsAndRemovals
    ((3, 2, 1, 0), (0, 1, 3, 2), (), (), (0, 1, 3, 2)),  # testRearrangement
])
def test_reassignment_replicas(current, target, removing, adding, replicas):
    moves = ra.ReassignmentReplicas.between(current, target)
    assert (moves.removing, moves.adding, moves.replicas) == (removing, adding, replicas)


@pytest.mark.parametrize("current, target, isr, done", [
    ((0, 1, 2), (3, 4, 5), (0, 1, 2, 3, 4), None),  # testDoesNotCompleteReassignment
    ((0, 1, 2), (3, 4, 5), (0, 1, 2, 3, 4, 5), ((3, 4, 5), (3, 4, 5))),  # ...AllNewReplicas
    ((0, 1, 2), (0, 1, 3), (0, 1, 2, 3), ((0, 1, 3), (0, 1, 3))),  # ...SomeNewReplicas
    ((0, 1, 2), (0, 1, 3), (3,), None),  # testDoesNotCompleteReassignmentIfIsrDoesNotHaveAllTargetReplicas
    ((0, 1, 2), (0, 1, 2), (0, 1, 2), None),  # testDoesNotCompleteReassignmentIfNoneOngoing
])
def test_completion(current, target, isr, done):
    moves = ra.ReassignmentReplicas.between(current, target)
    assert pc.completed(moves.replicas, moves.adding, moves.removing, isr) == done


def test_original_replicas_and_in_progress():
    # testOriginalReplicas, testIsReassignmentInProgress
    assert ra.ReassignmentReplicas.between((0, 1, 2), (0, 1, 3)).original() == (0, 1, 2)

    def p(removing, adding):
        return PartitionRegistration((0, 1, 3, 2), (UNASSIGNED_DIR,) * 4, (0, 1, 3, 2), removing, adding, 0, 0, 0, 0)

    assert ra.in_progress(p((2,), (3,))) and ra.in_progress(p((2,), ())) and ra.in_progress(p((), (3,)))
    assert not ra.in_progress(p((), ()))


# ================================================================================================================
# ReplicationControlManagerTest
# ================================================================================================================
def test_reassign_partitions():
    """testReassignPartitions: a reordering completes at once; a move starts with the union, adding and removing;
    an unknown partition is refused with Kafka's message; a topic with no partitions is answered empty; cancelling
    where nothing moves is NO_REASSIGNMENT_IN_PROGRESS (without a message); the leader's AlterPartition that takes
    the adding replica in completes the move and, its sender removed, answers NEW_LEADER_ELECTED."""
    rc, img = setup((0, 1, 2, 3), {"foo": [(1, 2, 3), (3, 2, 1)], "bar": [(1, 2, 3)]})
    foo = img.topic("foo").id
    assert listed(img) == []
    res = reassign(img, [("foo", [(0, [3, 2, 1]), (1, [0, 2, 1]), (2, [0, 2, 1])]), ("bar", [])])
    assert answers(res) == [("foo", [(0, 0, None), (1, 0, None),
                                     (2, ec.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2.")]),
                            ("bar", [])]
    assert res.response.error_code == ec.NONE and res.response.allow_replication_factor_change is True
    img = replay(img, res.records)
    assert reg(img, "foo", 0).replicas == (3, 2, 1) and reg(img, "foo", 0).leader == 1  # reordered, done
    assert not ra.in_progress(reg(img, "foo", 0))
    ongoing = [("foo", [(1, [0, 2, 1, 3], [0], [3])])]
    assert listed(img) == ongoing
    assert listed(img, [("bar", [0, 1, 2])]) == []
    assert listed(img, [("foo", [0, 1, 2])]) == ongoing
    assert reg(img, "foo", 1).directories == (d(0), d(2), d(1), d(3))  # the new replica gets its broker's dir

    cancel = reassign(img, [("foo", [(0, None), (1, None), (2, None)]), ("bar", [(0, None)])])
    assert answers(cancel) == [("foo", [(0, ec.NO_REASSIGNMENT_IN_PROGRESS, None), (1, 0, None),
                                        (2, ec.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2.")]),
                               ("bar", [(0, ec.NO_REASSIGNMENT_IN_PROGRESS, None)])]
    (change,) = [r.message for r in cancel.records]
    assert (change.topic_id, change.partition_id, change.replicas, change.leader) == (foo, 1, [2, 1, 3], 3)
    assert change.directories == [d(2), d(1), d(3)]
    assert (change.removing_replicas, change.adding_replicas, change.isr) == ([], [], None)

    # the cancel is not applied: the leader (3) takes broker 0 into the ISR, which completes the move without it
    p = reg(img, "foo", 1)
    A = m.AlterPartitionRequest
    req = A(broker_id=3, broker_epoch=30, topics=[A.TopicData(topic_id=foo, partitions=[A.PartitionData(
        partition_index=1, leader_epoch=p.leader_epoch, partition_epoch=p.partition_epoch, new_isr=[],
        leader_recovery_state=0, new_isr_with_epochs=[A.BrokerState(broker_id=b, broker_epoch=-1)
                                                      for b in (3, 0, 2, 1)])])])
    done = rc.alter_partition(img, req, 3)
    assert [(pd.partition_index, pd.error_code) for t in done.response.topics for pd in t.partitions] == \
        [(1, ec.NEW_LEADER_ELECTED)]
    img = replay(img, done.records)
    p = reg(img, "foo", 1)
    assert (p.replicas, p.isr, p.leader, p.adding_replicas, p.removing_replicas) == ((0, 2, 1), (0, 2, 1), 0, (), ())
    assert listed(img) == []


def test_cancel_reassign_partitions():
    """testCancelReassignPartitions: a shrink covered by the ISR completes at once (the leader epoch bumped: a
    replica left); refusals carry Kafka's messages; adding replicas wait for the ISR; the cancel goes back to the
    original replicas, bumping the leader epoch."""
    rc, img = setup((0, 1, 2, 3, 4), {"foo": [(1, 2, 3, 4), (0, 1, 2, 3), (4, 3, 1, 0), (2, 3, 4, 1)],
                                      "bar": [(4, 3, 2)]})
    img = replay(img, fenced_changes(img, 3))
    assert reg(img, "foo", 0).isr == (1, 2, 4) and reg(img, "foo", 0).partition_epoch == 1
    res = reassign(img, [("foo", [(0, [1, 2, 4]), (1, [1, 2, 3, 0]), (2, [5, 6, 7]), (3, [])]),
                         ("bar", [(0, [1, 2, 3, 4, 0])])])
    assert answers(res) == [
        ("foo", [(0, 0, None), (1, 0, None),
                 (2, ec.INVALID_REPLICA_ASSIGNMENT,
                  "The manual partition assignment includes broker 5, but no such broker is registered."),
                 (3, ec.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")]),
        ("bar", [(0, 0, None)])]
    img = replay(img, res.records)
    p = reg(img, "foo", 0)
    assert (p.replicas, p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2, 4), (1, 2, 4), 1, 1, 2)
    assert p.directories == (d(1), d(2), d(4))
    p = reg(img, "foo", 1)
    assert (p.replicas, p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2, 3, 0), (0, 1, 2), 0, 0, 2)
    bar = reg(img, "bar")
    assert (bar.replicas, bar.isr, bar.adding_replicas, bar.leader, bar.leader_epoch, bar.partition_epoch) == \
        ((1, 2, 3, 4, 0), (4, 2), (0, 1), 4, 0, 2)
    ongoing = [("bar", [(0, [1, 2, 3, 4, 0], [0, 1], [])])]
    assert listed(img) == ongoing and listed(img, [("foo", [0, 1, 2])]) == [] and \
        listed(img, [("bar", [0, 1, 2])]) == ongoing

    expanded = alter(rc, img, img.topic("bar"), (4, 1, 2, 0))
    (pd,) = expanded.response.topics[0].partitions
    assert (pd.error_code, pd.leader_id, pd.leader_epoch, pd.isr, pd.partition_epoch) == (0, 4, 0, [4, 1, 2, 0], 3)

    cancel = reassign(img, [("foo", [(0, None)]), ("bar", [(0, None)])])  # against the image before the expansion
    assert answers(cancel) == [("foo", [(0, ec.NO_REASSIGNMENT_IN_PROGRESS, None)]), ("bar", [(0, 0, None)])]
    (change,) = [r.message for r in cancel.records]
    assert (change.leader, change.replicas, change.directories) == (4, [2, 3, 4], [d(2), d(3), d(4)])
    assert (change.removing_replicas, change.adding_replicas) == (None, [])
    img = replay(img, cancel.records)
    assert listed(img) == []
    bar = reg(img, "bar")
    assert (bar.replicas, bar.isr, bar.leader, bar.leader_epoch, bar.partition_epoch) == ((2, 3, 4), (4, 2), 4, 1, 3)


def test_new_reassignment_removes_previously_adding_replicas():
    """testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas: a second target while one
    moves starts from the current (union) replicas: everything not in the new target is removing."""
    rc, img = setup((0, 1, 2, 3, 4, 5), {"topic-1": [(0, 1)]})
    img = replay(img, reassign(img, [("topic-1", [(0, [2, 3])])]).records)
    assert listed(img) == [("topic-1", [(0, [2, 3, 0, 1], [2, 3], [0, 1])])]
    t = img.topic("topic-1")
    res = alter(rc, img, t, (0, 1, 2))
    (pd,) = res.response.topics[0].partitions
    assert (pd.error_code, pd.isr, pd.partition_epoch) == (0, [0, 1, 2], t.partitions[0].partition_epoch + 1)
    img = replay(img, res.records)
    E = m.ElectLeadersRequest
    elected = rc.elect_leaders(img, E(election_type=0, timeout_ms=30000, topic_partitions=[
        E.TopicPartitions(topic="topic-1", partitions=[0])]), 2)
    assert [(r.partition_id, r.error_code) for t in elected.response.replica_election_results
            for r in t.partition_result] == [(0, 0)]
    img = replay(img, elected.records)
    assert reg(img, "topic-1").leader == 2
    res = reassign(img, [("topic-1", [(0, [4, 5])])])
    assert answers(res) == [("topic-1", [(0, 0, None)])]
    img = replay(img, res.records)
    assert listed(img) == [("topic-1", [(0, [4, 5, 0, 1, 2, 3], [4, 5], [0, 1, 2, 3])])]
    assert reg(img, "topic-1").leader == 2  # still a replica (removing): it leads until the move completes


def test_completion_on_fencing_elects_among_the_target():
    """Completion happens on any change (Kafka's builder), here a fencing that shrinks the ISR: the move to [2, 3]
    completes once broker 0, the leader and a removing replica, is fenced and leaves the ISR [0, 2, 3]."""
    rc, img = setup((0, 1, 2, 3), {"t": [(0, 1)]})
    img = replay(img, reassign(img, [("t", [(0, [2, 3])])]).records)
    img = replay(img, alter(rc, img, img.topic("t"), (0, 1, 2, 3)).records)
    p = reg(img, "t")
    assert (p.replicas, p.isr, p.leader) == ((2, 3), (2, 3), 2)  # the ISR covered the target: done
    assert listed(img) == []


def test_kip_860_replication_factor_change_refused_when_not_allowed():
    """With AllowReplicationFactorChange false (v1) a target of another size than the replicas the partition is
    headed for is INVALID_REPLICATION_FACTOR; v0 (no such field) and true allow it; the answer echoes the flag."""
    rc, img = setup((0, 1, 2, 3), {"t": [(0, 1, 2), (0, 1, 2)]})
    res = reassign(img, [("t", [(0, [0, 1]), (1, [3, 2, 1])])], allow_rf_change=False)
    assert answers(res) == [("t", [(0, ec.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 2"),
                                   (1, 0, None)])]
    assert res.response.allow_replication_factor_change is False and len(res.records) == 1
    assert answers(reassign(img, [("t", [(0, [0, 1])])], version=0, allow_rf_change=False)) == [("t", [(0, 0, None)])]
    # while a move is in progress the size counted is that of its target
    img = replay(img, res.records)
    assert reg(img, "t", 1).replicas == (3, 2, 1, 0)
    res = reassign(img, [("t", [(1, [3, 2, 1, 0])])], allow_rf_change=False)
    assert answers(res) == [("t", [(1, ec.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 4")])]


def test_refusals_change_nothing_and_name_kafkas_reasons():
    rc, img = setup((0, 1, 2), {"t": [(0, 1)]})
    res = reassign(img, [("nope", [(0, [0])]), ("t", [(0, [1, 1]), (0, [0, 5]), (7, [0])])])
    assert answers(res) == [
        ("nope", [(0, ec.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope.")]),
        ("t", [(0, ec.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the broker 1 more than once."),
               (0, ec.INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes broker 5, but no such broker is registered."),
               (7, ec.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:7.")])]
    assert res.records == ()
    assert answers(reassign(img, [("t", [(0, [0, 1])])])) == [("t", [(0, 0, None)])]  # the same replicas: nothing
    assert reassign(img, [("t", [(0, [0, 1])])]).records == ()


def test_a_request_is_capped_at_ten_thousand_records(monkeypatch):
    """Kafka's BoundedList of MAX_RECORDS_PER_USER_OP: the partition whose record is one too many fails
    (UNKNOWN_SERVER_ERROR, no message), the others stand."""
    monkeypatch.setattr(ra, "MAX_RECORDS_PER_USER_OP", 2)
    rc, img = setup((0, 1, 2), {"t": [(0, 1)] * 3})
    res = reassign(img, [("t", [(0, [1, 2]), (1, [1, 2]), (2, [1, 2])])])
    assert answers(res) == [("t", [(0, 0, None), (1, 0, None), (2, ec.UNKNOWN_SERVER_ERROR, None)])]
    assert [r.message.partition_id for r in res.records] == [0, 1]


def test_cancel_that_needs_an_unclean_election():
    """Kafka's PartitionReassignmentRevert: an ISR made only of adding replicas reverts to the first original one,
    which needs the topic's unclean.leader.election.enable; without it INVALID_REPLICA_ASSIGNMENT."""
    for unclean in (False, True):
        rc, img = setup((0, 1, 2), {"t": [(0, 1)]}, unclean={"t"} if unclean else ())
        img = replay(img, reassign(img, [("t", [(0, [1, 2])])]).records)  # [1, 2, 0], adding [2], removing [0]
        img = replay(img, alter(rc, img, img.topic("t"), (0, 2)).records)  # 2 in, 1 out: not complete
        img = replay(img, fenced_changes(img, 0))
        p = reg(img, "t")
        assert (p.replicas, p.adding_replicas, p.removing_replicas, p.isr, p.leader) == ((1, 2, 0), (2,), (0,), (2,), 2)
        res = reassign(img, [("t", [(0, None)])], rc=rc)
        if not unclean:
            assert answers(res) == [("t", [(0, ec.INVALID_REPLICA_ASSIGNMENT, "Unable to revert partition "
                                            "assignment for t:0 because it would require an unclean leader election.")])]
            assert res.records == ()
        else:
            assert answers(res) == [("t", [(0, 0, None)])]
            p = reg(replay(img, res.records), "t")
            assert (p.replicas, p.adding_replicas, p.removing_replicas, p.isr, p.leader) == ((1, 0), (), (), (1,), 1)


def test_quorum_controller_routes_both_apis():
    """The two APIs reach the reassignment rules through the QuorumController, as the edge calls it."""
    qc = QuorumController(1, "c", rng=__import__("random").Random(1), new_uuid=lambda: uuid.UUID(int=9))
    assert qc.handles("AlterPartitionReassignments") and qc.handles("ListPartitionReassignments")
