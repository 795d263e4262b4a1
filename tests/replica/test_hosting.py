"""Where a broker keeps its partitions (``kraftwire.replica.hosting``), pure: placement by partition count (Kafka's
``LogManager.nextLogDirs``) and the AssignReplicasToDirs a broker sends (KIP-858, Kafka's
``AssignmentsManager`` fed by ``ReplicaManager.applyDelta``). The end-to-end behaviour is in
tests/server/test_dir_failure.py."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from kraftwire.metadata.image import PartitionRegistration, TopicImage
from kraftwire.replica.hosting import FOLLOW, KEEP, UNFOLLOW, dirs_to_assign, fetcher_action, least_loaded
from kraftwire.replica.partition import FOLLOWER, LEADER, OFFLINE

A, B, UNASSIGNED = uuid.UUID(int=1), uuid.UUID(int=2), uuid.UUID(int=0)
T1, T2 = uuid.UUID(int=11), uuid.UUID(int=12)


def _reg(replicas, dirs) -> PartitionRegistration:
    return PartitionRegistration(replicas=tuple(replicas), directories=tuple(dirs), isr=tuple(replicas),
                                 removing_replicas=(), adding_replicas=(), leader=replicas[0],
                                 leader_recovery_state=0, leader_epoch=0, partition_epoch=0)


def _image(**topics):
    return SimpleNamespace(topics={tid: TopicImage(name=str(tid), id=tid, partitions=parts)
                                   for tid, parts in ((T1, topics.get("t1", {})), (T2, topics.get("t2", {})))})


def test_a_new_partition_goes_to_the_online_directory_holding_the_fewest():
    assert least_loaded(["/a", "/b", "/c"], set(), ["/a", "/b", "/a"]) == "/c"
    assert least_loaded(["/a", "/b"], set(), ["/a", "/b"]) == "/a"  # a tie: the first listed
    assert least_loaded(["/a", "/b"], {"/b"}, ["/a", "/a"]) == "/a"  # an offline one never
    assert least_loaded(["/a"], {"/a"}, []) is None


def test_replicas_whose_registration_names_another_directory_are_assigned():
    image = _image(t1={0: _reg([1, 2], [A, B]), 1: _reg([2, 1], [A, UNASSIGNED])}, t2={0: _reg([1], [A])})
    placed = {(T1, 0): B, (T1, 1): B, (T2, 0): A, (T2, 5): A}  # T2-5 is not in the image (yet)
    assert dirs_to_assign(image, 1, placed, assigning=set()) == {B: {T1: [0, 1]}}
    assert dirs_to_assign(image, 1, placed, assigning={(T1, 0)}) == {B: {T1: [1]}}  # on its way already
    assert dirs_to_assign(image, 1, placed, assigning=set(), topics={T2}) == {}  # only the topics that changed
    assert dirs_to_assign(image, 1, {(T1, 0): None}, assigning=set()) == {}  # a directory without an id


def test_a_follower_is_fetched_again_on_a_new_leader_epoch_or_when_no_fetcher_has_it():
    # Kafka's ReplicaManager.makeFollowers: a new leader epoch restarts the fetch from the (new) leader
    assert fetcher_action(FOLLOWER, True, True) == FOLLOW
    assert fetcher_action(FOLLOWER, False, False) == FOLLOW  # dropped after FENCED_LEADER_EPOCH, or just became one
    assert fetcher_action(FOLLOWER, False, True) == KEEP  # an ISR change: the fetch goes on
    assert fetcher_action(LEADER, True, True) == UNFOLLOW
    assert fetcher_action(OFFLINE, False, False) == UNFOLLOW
