"""Issue #35 item 13: a two-voter quorum whose follower comes back on another port while its leader has resigned.

The voter set still names the follower's old address, so the former leader cannot dial it: it can never collect the
follower's vote. The follower can reach the former leader, but the former leader holds records the follower never
fetched (what it appended after the follower stopped) and refuses it every vote. Two rules, pinned here at the level
of one node, let an election complete (the ``voter_moves_while_leaderless`` simulation property covers the whole):

* a leader that resigned and is still in its epoch refuses a Fetch (the replica's fetch timer keeps running), but
  sends its records with the refusal; the follower appends them, and so catches up to the log it needs to win;
* a leader says where it listens in BeginQuorumEpoch (Kafka's LeaderEndpoints) and its followers reach it there
  (``RaftNode.leader_endpoints``), not only where their voter set says (KAFKA-16927).
"""

from __future__ import annotations

import uuid

from kraftwire.ids import ReplicaKey
from kraftwire.raft import messages as m
from kraftwire.raft.states import FollowerState, ProspectiveState, ResignedState
from kraftwire.raft.voter_set import VoterNode, VoterSet

from harness.raft import NodeHarness

DIRS = {i: uuid.UUID(int=0x3000 + i) for i in (1, 2)}
MOVED = (("CONTROLLER", "localhost", 7002),)


def replica(node_id: int, **kw) -> NodeHarness:
    voters = VoterSet.of(VoterNode(ReplicaKey(i, DIRS[i]), (("CONTROLLER", "localhost", 9990 + i),)) for i in (1, 2))
    return NodeHarness(node_id=node_id, voters=(1, 2), kraft_version=1, directory_id=DIRS[node_id],
                       voter_set=voters, **kw)


def elect(h: NodeHarness) -> NodeHarness:
    sent = h.poll(at=h.now + 1_000)
    for _ in range(4):
        if h.node.is_leader():
            return h
        granted = []
        for req in (s for s in sent if isinstance(s, m.VoteRequest)):
            granted += h.deliver(m.VoteResponse(req.dst, req.src, req.correlation_id, m.NONE, -1, req.candidate_epoch,
                                                vote_granted=True, pre_vote=req.pre_vote))
        sent = granted or h.poll(at=h.now + 500)
    assert h.node.is_leader(), h.node.state_name
    return h


def fetch(h: NodeHarness, offset: int, last_epoch: int, cid: int = 500) -> m.FetchResponse:
    sent = h.deliver(m.FetchRequest(
        2, 1, cid, "kraftwire", replica_id=2, replica_epoch=-1, current_leader_epoch=h.node.epoch,
        fetch_offset=offset, last_fetched_epoch=last_epoch, max_wait_ms=0, max_bytes=1 << 20,
        replica_directory_id=DIRS[2]))
    [resp] = [s for s in sent if isinstance(s, m.FetchResponse)]
    return resp


def resigned_leader_with_a_tail() -> tuple[NodeHarness, int, int]:
    """Leader 1 of {1, 2}: 2 fetched everything up to ``caught`` (epoch ``epoch``), then stopped; 1 appended three
    records more, and resigned at check-quorum."""
    h = elect(replica(1))
    epoch = h.node.epoch
    fetch(h, h.log.end_offset(), epoch)
    caught = h.log.end_offset()
    fetch(h, caught, epoch, cid=501)
    assert h.node.high_watermark == caught
    for value in (b"a", b"b", b"c"):
        h.node.schedule_append([value], h.now)
        h.poll()
    assert h.log.end_offset() == caught + 3
    h.poll(at=h.now + 2 * h.config.fetch_timeout_ms)
    assert isinstance(h.node.quorum.state, ResignedState)
    return h, caught, epoch


def test_a_resigned_leader_refuses_a_fetch_but_sends_its_tail_with_the_refusal():
    h, caught, epoch = resigned_leader_with_a_tail()
    resp = fetch(h, caught, epoch)
    assert resp.error == m.BROKER_NOT_AVAILABLE and resp.leader_id == -1 and resp.leader_epoch == epoch
    assert resp.records and resp.high_watermark == caught
    # still in its epoch after its election timeout (a lost pre-vote, voted for itself): the log is still the
    # epoch leader's
    h.poll(at=h.now + 1_000)
    assert isinstance(h.node.quorum.state, ProspectiveState) and h.node.epoch == epoch
    resp = fetch(h, caught, epoch, cid=502)
    assert resp.error == m.NOT_LEADER_OR_FOLLOWER and resp.records
    # nothing for a replica that already has it all
    assert not fetch(h, h.log.end_offset(), epoch, cid=503).records


def test_a_voter_that_never_led_the_epoch_sends_no_records():
    h = replica(1)
    h.deliver(m.BeginQuorumEpochRequest(2, 1, 5, "kraftwire", voter_id=1, new_leader_id=2, new_leader_epoch=3))
    assert isinstance(h.node.quorum.state, FollowerState)
    resp = fetch(h, 0, 0)
    assert resp.error == m.NOT_LEADER_OR_FOLLOWER and not resp.records


def test_a_follower_appends_its_former_leaders_tail_and_still_runs_for_election():
    leader, caught, epoch = resigned_leader_with_a_tail()
    f = replica(2, seed=11)
    sent = f.deliver(m.BeginQuorumEpochRequest(1, 2, 5, "kraftwire", voter_id=2, new_leader_id=1,
                                               new_leader_epoch=epoch))
    state = f.node.quorum.state
    assert isinstance(state, FollowerState) and state.leader_id == 1
    deadline = state.fetch_deadline_ms
    [req] = [s for s in sent + f.poll() if isinstance(s, m.FetchRequest)]
    # an empty follower: the former leader refuses it, with its whole log
    everything = fetch(leader, req.fetch_offset, req.last_fetched_epoch, cid=510)
    f.deliver(m.FetchResponse(1, 2, req.correlation_id, everything.error, -1, epoch,
                              high_watermark=everything.high_watermark, records=everything.records))
    assert f.log.end_offset() == leader.log.end_offset()
    assert f.node.high_watermark == caught
    assert f.node.quorum.state.fetch_deadline_ms == deadline  # a refusal: no news from a leader
    assert f.node.counters["appended_from_former_leader"] == 1
    f.poll(at=deadline)
    assert isinstance(f.node.quorum.state, ProspectiveState)  # and its pre-vote now finds a log as long as 1's


def test_a_follower_reaches_its_leader_where_the_leader_said_it_listens():
    f = replica(1)
    f.deliver(m.BeginQuorumEpochRequest(2, 1, 5, "kraftwire", voter_id=1, new_leader_id=2, new_leader_epoch=3,
                                        leader_endpoints=MOVED))
    assert f.node.leader_endpoints() == (2, MOVED)
    f.poll(at=f.now + 10 * f.config.fetch_timeout_ms)  # no leader any more: the voter set's addresses again
    assert f.node.leader_endpoints() is None


def test_a_leader_says_where_it_listens():
    h = elect(replica(2, local_endpoints=MOVED))
    sent = h.poll(at=h.now + 1)
    begins = [s for s in sent if isinstance(s, m.BeginQuorumEpochRequest)] or [
        s for r in h.readies for s in r.send if isinstance(s, m.BeginQuorumEpochRequest)]
    assert begins and all(b.leader_endpoints == MOVED for b in begins)
