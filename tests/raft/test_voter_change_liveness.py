"""KIP-853 liveness bugs the seeded simulation found (``grow_and_shrink``, ``replace_wiped_voter``), each pinned here
at the level of one node.

* a leader outside the voter set (it removed itself, not yet committed) skipped check-quorum: cut off, it led its
  stale epoch forever (fixed by the third point: it is still a voter of the previous set until the removal commits);
* a leader whose self-removal committed after the RemoveRaftVoter request had timed out never resigned;
* the leader that removed itself from two voters and lost leadership before the other voter had the record holds
  the longest log, which the remaining voter needs to be elected; it stopped acting as a voter, so no leader ever
  again (openraft#2091): it stays a voter of the previous set until it knows the removal committed;
* an observer (kraft.version 1: possibly a voter that has not fetched its VotersRecord yet) whose leader went quiet
  refused pre-votes forever, so a quorum that needs its vote could not elect anyone; Kafka's rule is "fetched from the
  leader within the fetch timeout";
* (not KIP-853 specific) an observer whose fetch to its leader went unanswered once, and whose only responsive voter
  kept answering NOT_LEADER naming that leader, asked that voter forever and never caught up again;
* a node whose disk was wiped observes under the id of a voter it no longer is: it picked itself to fetch from;
* (not KIP-853 specific) an observer downloading a snapshot from a voter that does not lead ignored its NOT_LEADER
  answers and asked it again and again until its fetch timeout.
"""

from __future__ import annotations

import uuid

from kraftwire.ids import ReplicaKey
from kraftwire.raft import messages as m
from kraftwire.raft.states import FollowerState, ResignedState
from kraftwire.raft.voter_set import VoterNode, VoterSet

from harness.raft import NodeHarness

DIRS = {i: uuid.UUID(int=0x2000 + i) for i in range(1, 5)}


def voter_set(*ids) -> VoterSet:
    return VoterSet.of(VoterNode(ReplicaKey(i, DIRS[i]), (("CONTROLLER", "localhost", 9990 + i),)) for i in ids)


def replica(node_id: int, voters) -> NodeHarness:
    return NodeHarness(node_id=node_id, voters=voters, kraft_version=1, directory_id=DIRS[node_id],
                       voter_set=voter_set(*voters))


def grant(h: NodeHarness, sent) -> list:
    """Every VoteRequest in ``sent`` is granted."""
    out = []
    for req in (s for s in sent if isinstance(s, m.VoteRequest)):
        out += h.deliver(m.VoteResponse(req.dst, req.src, req.correlation_id, m.NONE, -1, req.candidate_epoch,
                                        vote_granted=True, pre_vote=req.pre_vote))
    return out


def elect(h: NodeHarness) -> NodeHarness:
    sent = h.poll(at=h.now + 1_000)
    for _ in range(4):
        if h.node.is_leader():
            return h
        sent = grant(h, sent) or h.poll(at=h.now + 500)
    assert h.node.is_leader(), h.node.state_name
    return h


def fetch(h: NodeHarness, replica_id: int, offset: int | None = None, cid: int = 500) -> list:
    return h.deliver(m.FetchRequest(
        replica_id, h.node.local_id, cid, "kraftwire", replica_id=replica_id, replica_epoch=-1,
        current_leader_epoch=h.node.epoch, fetch_offset=h.log.end_offset() if offset is None else offset,
        last_fetched_epoch=h.log.last_fetched_epoch(), max_wait_ms=0, max_bytes=1 << 20,
        replica_directory_id=DIRS[replica_id]))


def remove_self(h: NodeHarness) -> int:
    """The leader (node 1) removes itself; returns the VotersRecord's offset."""
    for f in sorted(h.node.quorum.voters - {1}):
        fetch(h, f)
    h.poll()
    h.deliver(m.RemoveRaftVoterRequest(-1, 1, 900, "kraftwire", voter_key=ReplicaKey(1, DIRS[1])))
    assert not h.node.membership.is_local_voter()
    return h.node.membership.history.last_offset()


def test_a_leader_outside_the_voter_set_still_resigns_by_check_quorum():
    h = elect(replica(1, (1, 2, 3)))
    remove_self(h)
    h.poll(at=h.now + 2 * h.config.fetch_timeout_ms)  # neither 2 nor 3 fetches any more
    assert isinstance(h.node.quorum.state, ResignedState)


def test_a_leader_resigns_once_its_removal_commits_even_after_the_request_timed_out():
    h = elect(replica(1, (1, 2, 3)))
    offset = remove_self(h)
    fetch(h, 2, offset)  # the others keep fetching, but not past the record yet
    fetch(h, 3, offset)
    sent = h.poll(at=h.now + h.config.request_timeout_ms)
    [resp] = [s for s in sent if isinstance(s, m.RemoveRaftVoterResponse)]
    assert resp.error == m.REQUEST_TIMED_OUT and h.node.is_leader()
    fetch(h, 2)
    fetch(h, 3)
    h.poll()
    assert h.node.high_watermark > offset
    assert isinstance(h.node.quorum.state, ResignedState)


def test_a_leader_that_removed_itself_from_two_voters_can_run_again_until_the_removal_commits():
    """{1, 2} -> {2}: node 1 appends the record, loses leadership before 2 fetched it. 2 (still {1, 2}) needs 1's
    vote, and 1's log is longer than 2's: 1 must run, be elected by 2 alone, commit {2} and then resign."""
    h = elect(replica(1, (1, 2)))
    offset = remove_self(h)
    assert h.node.quorum.is_voter  # a voter of {1, 2} while {2} may be uncommitted
    h.poll(at=h.now + 2 * h.config.fetch_timeout_ms)  # 2 is cut off: check-quorum
    assert isinstance(h.node.quorum.state, ResignedState)
    sent = h.poll(at=h.now + 1_000)
    assert [(s.dst, s.pre_vote) for s in sent if isinstance(s, m.VoteRequest)] == [(2, True)]
    for _ in range(3):  # 2 grants the pre-vote and the vote: a majority of {2}
        sent = grant(h, sent)
    assert h.node.is_leader() and h.node.quorum.state.voters == {2}
    fetch(h, 2)
    h.poll()
    assert h.node.high_watermark > offset
    assert isinstance(h.node.quorum.state, ResignedState)
    assert not h.node.quorum.is_voter  # the removal is committed: an observer from now on


def test_an_observer_whose_leader_went_quiet_grants_a_pre_vote():
    """Node 2 observes {1}; the leader adds it ({1, 2}) and dies before 2 fetches that record. 1 restarts with
    {1, 2} and needs 2's vote: 2 must not refuse forever because it once fetched from 1."""
    f = replica(2, (1,))
    sent = f.poll(at=100)
    sent += f.deliver(m.BeginQuorumEpochRequest(1, 2, 5, "kraftwire", voter_id=2, new_leader_id=1,
                                                new_leader_epoch=1))
    sent += f.poll()
    req = [s for s in sent if isinstance(s, m.FetchRequest)][-1]
    assert req.current_leader_epoch == 1
    f.deliver(m.FetchResponse(1, 2, req.correlation_id, m.NONE, 1, 1, high_watermark=0))
    state = f.node.quorum.state
    assert isinstance(state, FollowerState) and state.last_fetch_success_ms >= 0

    def pre_vote(cid):
        return m.VoteRequest(1, 2, cid, "kraftwire", candidate_epoch=1, candidate_key=ReplicaKey(1, DIRS[1]),
                             voter_id=2, last_offset_epoch=1, last_offset=5, pre_vote=True,
                             voter_directory_id=DIRS[2])

    [early] = [s for s in f.deliver(pre_vote(10)) if isinstance(s, m.VoteResponse)]
    assert not early.vote_granted  # it fetched from its leader just now
    f.poll(at=f.now + f.config.fetch_timeout_ms)
    [late] = [s for s in f.deliver(pre_vote(11)) if isinstance(s, m.VoteResponse)]
    assert late.vote_granted


def test_an_observer_returns_to_a_quiet_leader_its_one_responsive_voter_keeps_naming():
    """An observer's fetch to its leader got no answer (a lost response), so the leader is 'quiet'; so are the voters
    that did not answer since. The one voter that answers says NOT_LEADER, naming that leader: skipping the answerer
    must not leave the answerer as the only choice forever - every voter is tried again."""
    import random

    from kraftwire.raft.observer import ObserverTarget

    o = ObserverTarget({1, 2, 3, 4, 5}, random.Random(7))
    o.quiet.update({1, 2, 3, 5})
    picks = {o.pick(skip=(4,)) for _ in range(20)}
    assert 4 not in picks and 3 in picks


def test_a_wiped_node_never_fetches_from_itself():
    """Voter 2's disk was wiped: the voter set names 2 with its old directory id, so node 2 (new disk) observes, and
    must fetch from 1 or 3, never from the id it shares with the voter it was."""
    wiped_set = VoterSet.of([*voter_set(1, 3).nodes, VoterNode(ReplicaKey(2, uuid.UUID(int=99)))])
    h = NodeHarness(node_id=2, voters=(1, 2, 3), kraft_version=1, directory_id=DIRS[2], voter_set=wiped_set)
    assert not h.node.quorum.is_voter
    assert h.node.observer.voters == [1, 3]
    sent = h.poll(at=100)
    for _ in range(8):  # nobody answers: it moves from voter to voter
        sent += h.poll(at=h.now + 1_000)
    assert {s.dst for s in sent if isinstance(s, m.FetchRequest)} <= {1, 3}


def test_an_observer_downloading_a_snapshot_leaves_a_voter_that_does_not_lead():
    """Observer 4 downloads leader 1's snapshot; 1 goes quiet, so it asks another voter, which answers NOT_LEADER
    (naming 1): it must ask elsewhere, not that voter again and again until its fetch timeout."""
    from kraftwire.ids import SnapshotId

    h = replica(4, (1, 2, 3))
    sent = h.poll(at=100)
    sent += h.deliver(m.BeginQuorumEpochRequest(1, 4, 5, "kraftwire", voter_id=4, new_leader_id=1,
                                                new_leader_epoch=1))
    sent += h.poll()
    fetch = [s for s in sent if isinstance(s, m.FetchRequest) and s.current_leader_epoch == 1][-1]
    sent = h.deliver(m.FetchResponse(1, 4, fetch.correlation_id, m.NONE, 1, 1, high_watermark=50,
                                     snapshot_id=SnapshotId(50, 1)))
    sent += h.poll()
    assert [s.dst for s in sent if isinstance(s, m.FetchSnapshotRequest)] == [1]
    sent = h.poll(at=h.now + h.config.fetch_timeout_ms)  # 1 went quiet: ask another voter
    [req] = [s for s in sent if isinstance(s, m.FetchSnapshotRequest)]
    assert req.dst in (2, 3)
    sent = h.deliver(m.FetchSnapshotResponse(req.dst, 4, req.correlation_id, m.NOT_LEADER_OR_FOLLOWER, 1, 1))
    sent += h.poll(at=h.now + h.config.retry_backoff_ms)
    assert [s.dst for s in sent if isinstance(s, m.FetchSnapshotRequest)] not in ([], [req.dst])
