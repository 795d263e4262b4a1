"""VoterSet and VoterHistory: Kafka's membership rules (``VoterSetTest``, ``VoterSetHistoryTest``) re-expressed."""

from __future__ import annotations

import uuid

import pytest

from kraftwire.ids import ReplicaKey
from kraftwire.raft.voter_set import BEFORE_LOG, VoterHistory, VoterNode, VoterSet

D = {i: uuid.UUID(int=0x2000 + i) for i in range(1, 8)}


def node(i, directory=None, endpoints=None):
    return VoterNode(ReplicaKey(i, D[i] if directory is None else directory),
                     endpoints or (("CONTROLLER", "localhost", 9000 + i),))


def vs(*ids):
    return VoterSet.of(node(i) for i in ids)


def test_is_voter_needs_the_directory_id_the_set_knows():
    voters = vs(1, 2)
    assert voters.is_voter(ReplicaKey(1, D[1]))
    assert not voters.is_voter(ReplicaKey(1, uuid.UUID(int=5)))  # another disk under the same id
    assert not voters.is_voter(ReplicaKey(1, None))
    assert not voters.is_voter(ReplicaKey(3, D[3]))


def test_static_set_knows_no_directory_ids():
    voters = VoterSet.from_ids([3, 1, 2])
    assert voters.ids == {1, 2, 3} and [n.id for n in voters.nodes] == [1, 2, 3]
    assert voters.is_voter(ReplicaKey(1, uuid.UUID(int=5))) and voters.is_voter(ReplicaKey(1))


def test_add_needs_a_new_id():
    assert vs(1, 2).add(node(3)) == vs(1, 2, 3)
    assert vs(1, 2).add(node(2, directory=uuid.UUID(int=9))) is None


def test_remove_needs_the_exact_key_and_leaves_one():
    assert vs(1, 2).remove(ReplicaKey(2, D[2])) == vs(1)
    assert vs(1, 2).remove(ReplicaKey(2, uuid.UUID(int=9))) is None
    assert vs(1, 2).remove(ReplicaKey(3, D[3])) is None
    assert vs(1).remove(ReplicaKey(1, D[1])) is None


def test_update_needs_the_voter():
    moved = node(2, endpoints=(("CONTROLLER", "otherhost", 1),))
    assert vs(1, 2).update(moved).node(2).endpoints == (("CONTROLLER", "otherhost", 1),)
    assert vs(1, 2).update(node(2, directory=uuid.UUID(int=9))) is None
    assert vs(1, 2).update(node(3)) is None


def test_record_round_trip():
    voters = VoterSet.of([node(1), VoterNode(ReplicaKey(2, D[2]), (("A", "h", 1), ("B", "h2", 2)), 0, 1)])
    assert VoterSet.from_record(voters.to_record()) == voters


def test_duplicate_ids_refused():
    with pytest.raises(ValueError):
        VoterSet.of([node(1), node(1)])


def test_overlapping_majority():
    assert vs(1, 2, 3).overlapping_majority(vs(1, 2, 3, 4))
    assert vs(1, 2, 3).overlapping_majority(vs(1, 2))
    assert vs(1, 2, 3).overlapping_majority(vs(1, 2, 4))  # one out, one in
    assert not vs(1, 2, 3).overlapping_majority(vs(1, 4, 5))


def test_endpoint_by_listener():
    n = VoterNode(ReplicaKey(1, D[1]), (("A", "ha", 1), ("CONTROLLER", "hc", 2)))
    assert n.endpoint("CONTROLLER") == ("hc", 2)
    assert n.endpoint() == ("ha", 1)
    assert VoterNode(ReplicaKey(1)).endpoint() is None


def test_history_at_offsets_and_truncation():
    h = VoterHistory(vs(1))
    assert h.last() == vs(1) and h.last_offset() == BEFORE_LOG
    h.add(2, vs(1, 2))
    h.add(10, vs(1, 2, 3))
    assert h.at(1) == vs(1) and h.at(2) == vs(1, 2) and h.at(9) == vs(1, 2) and h.at(10) == vs(1, 2, 3)
    with pytest.raises(ValueError):
        h.add(10, vs(1))
    assert h.truncate(10) and h.last() == vs(1, 2)  # an entry at the truncation offset is gone
    assert not h.truncate(5)
    assert h.truncate(0) and h.last() == vs(1)  # the base survives every truncation


def test_history_prune_keeps_the_set_in_force_at_the_start():
    h = VoterHistory(vs(1))
    for offset, ids in ((2, (1, 2)), (5, (1, 2, 3)), (9, (1, 3))):
        h.add(offset, vs(*ids))
    h.prune(6)
    assert h.at(6) == vs(1, 2, 3) and h.last() == vs(1, 3)
    assert [o for o, _ in h.entries] == [5, 9]
