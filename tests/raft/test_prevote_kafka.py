"""Pre-vote as Kafka's raft client does it (KIP-996), mirrored from Kafka's ``KafkaRaftClientPreVoteTest``.

Every test of that class has a row here: mirrored (the test below of the same name, in snake case) or not, and why.

=====================================================  ==========================================================
Kafka test                                             here
=====================================================  ==========================================================
testHandlePreVoteRequestAsFollowerWithElectedLeader    mirrored (both values of hasFetchedFromLeader)
testHandlePreVoteRequestAsCandidate                    mirrored
testHandlePreVoteRequestAsUnattachedObserver           differs: with static voters a non-voter answers "not
                                                       granted"; its answer is counted by no prospective (adopt with
                                                       KIP-853's dynamic voter sets, where the set may be stale)
testHandlePreVoteRequestAsUnattachedVoted              mirrored
testHandlePreVoteRequestAsUnattachedWithLeader         not applicable: kraftwire has no unattached-with-leader state
testHandlePreVoteRequestAsFollowerObserver             differs: as for the unattached observer
testHandleInvalidPreVoteRequestWithOlderEpoch          mirrored
testLeaderRejectPreVoteRequestOnSameEpoch              mirrored
testPreVoteRequestClusterIdValidation                  mirrored (null accepted; empty and another id refused)
testInvalidVoterReplicaPreVoteRequest                  mirrored for the voter id (directory ids come with KIP-853)
testLeaderAcceptPreVoteFromObserver                    mirrored (an observer's pre-vote: FENCED_LEADER_EPOCH when
                                                       older, not granted otherwise)
testHandlePreVoteRequestAsResigned                     mirrored, but the answer names no leader (Kafka's resigned
                                                       leader names itself)
testInvalidVoteRequest                                 mirrored
testFollowerGrantsPreVoteIfHasNotFetchedYet            mirrored
testRejectPreVoteIfRemoteLogIsNotUpToDate              mirrored
testPreVoteResponseIgnoredAfterBecomingFollower        mirrored
testStaticQuorumDoesNotSendPreVoteRequest              differs: kraftwire runs pre-vote with static voters too
                                                       (``pre_vote``, default on); Kafka only with kraft.version 1
testPreVoteNotSupportedByRemote                        mirrored in the core (an UNSUPPORTED_VERSION answer); the edge
                                                       asks each peer's versions with ApiVersions and gives the core
                                                       that answer for a peer without Vote v2
                                                       (tests/server/test_peer_versions.py)
testProspectiveReceivesBeginQuorumRequest              mirrored
testProspectiveSendsFetchRequests                      not yet: a kraftwire prospective does not fetch while it waits
testPreVoteResponseIncludesLeaderId                    mirrored
=====================================================  ==========================================================
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.raft import messages as m
from kraftwire.raft.election import ElectionState
from kraftwire.raft.events import Received

from harness.raft import NodeHarness

LOCAL = 1


def pre_vote(epoch, cand=2, last_epoch=None, last=1, cid=77, cluster="kraftwire", voter=LOCAL):
    return m.VoteRequest(cand, LOCAL, cid, cluster, candidate_epoch=epoch, candidate_key=ReplicaKey(cand),
                         voter_id=voter, last_offset_epoch=epoch if last_epoch is None else last_epoch,
                         last_offset=last, pre_vote=True)


def answer(h: NodeHarness, req) -> m.VoteResponse:
    [resp] = [s for s in h.apply(h.node.handle(Received(req), h.now)) if isinstance(s, m.VoteResponse)]
    return resp


def follower(epoch=2, leader=3, fetched=False, voters=(1, 2, 3)) -> NodeHarness:
    h = NodeHarness(node_id=LOCAL, voters=voters, stored=ElectionState(epoch, leader, None))
    assert h.node.state_name == "Follower"
    [h.fetch] = [s for s in h.poll() if isinstance(s, m.FetchRequest)]
    if fetched:
        fetch_succeeds(h)
    return h


def fetch_succeeds(h: NodeHarness) -> None:
    f = h.fetch
    h.deliver(m.FetchResponse(f.dst, LOCAL, f.correlation_id, m.NONE, f.dst, f.current_leader_epoch, high_watermark=0))


def prospective(epoch=5, voters=(1, 2, 3)) -> tuple[NodeHarness, list]:
    h = NodeHarness(node_id=LOCAL, voters=voters, stored=ElectionState(epoch, NO_ID, None))
    sent = h.poll(at=250)  # the election timeout: Prospective, pre-votes out
    assert h.node.state_name == "Prospective"
    return h, [s for s in sent if isinstance(s, m.VoteRequest)]


@pytest.mark.parametrize("has_fetched_from_leader", [True, False])
def test_handle_pre_vote_request_as_follower_with_elected_leader(has_fetched_from_leader):
    h = follower(fetched=has_fetched_from_leader)
    resp = answer(h, pre_vote(2))
    assert resp.error == m.NONE and resp.vote_granted is not has_fetched_from_leader
    assert (resp.leader_id, resp.leader_epoch) == (3, 2) and h.node.state_name == "Follower"
    # a pre-vote in a higher epoch moves the follower to Unattached in that epoch, and is granted there
    resp = answer(h, pre_vote(3, cid=78))
    assert resp.vote_granted and (resp.leader_id, resp.leader_epoch) == (NO_ID, 3)
    assert h.node.state_name == "Unattached" and h.node.epoch == 3


def test_handle_pre_vote_request_as_candidate():
    h = NodeHarness(node_id=LOCAL, voters=(1, 2), pre_vote=False, stored=ElectionState(1, NO_ID, None))
    h.poll(at=250)
    assert h.node.state_name == "Candidate" and h.node.epoch == 2
    resp = answer(h, pre_vote(2))
    assert resp.vote_granted and h.node.state_name == "Candidate"
    resp = answer(h, pre_vote(3, cid=78))
    assert resp.vote_granted and h.node.state_name == "Unattached" and h.node.epoch == 3


def test_handle_pre_vote_request_as_unattached_voted():
    h = NodeHarness(node_id=LOCAL, stored=ElectionState(2, NO_ID, ReplicaKey(3)))
    for cand in (2, 2, 3):
        resp = answer(h, pre_vote(2, cand=cand))
        assert resp.vote_granted and h.node.state_name == "Voted"
    assert h.persisted is None or h.persisted.voted_key == ReplicaKey(3)  # a pre-vote records nothing


def test_handle_invalid_pre_vote_request_with_older_epoch():
    h = NodeHarness(node_id=LOCAL, stored=ElectionState(2, NO_ID, None))
    resp = answer(h, pre_vote(1))
    assert (resp.error, resp.leader_epoch, resp.vote_granted) == (m.FENCED_LEADER_EPOCH, 2, False)
    assert h.node.epoch == 2 and h.node.state_name == "Unattached"


def _leader(voters=(1, 2)) -> NodeHarness:
    h = NodeHarness(node_id=LOCAL, voters=voters, pre_vote=False)
    sent = h.poll(at=250)
    for req in [s for s in sent if isinstance(s, m.VoteRequest)]:
        h.deliver(m.VoteResponse(req.dst, LOCAL, req.correlation_id, m.NONE, NO_ID, 1, vote_granted=True))
    assert h.node.is_leader()
    return h


def test_leader_reject_pre_vote_request_on_same_epoch():
    h = _leader()
    resp = answer(h, pre_vote(h.node.epoch))
    assert (resp.error, resp.vote_granted, resp.leader_id) == (m.NONE, False, LOCAL) and h.node.is_leader()


def test_pre_vote_request_cluster_id_validation():
    h = _leader()
    epoch = h.node.epoch
    assert answer(h, pre_vote(epoch, last=0)).error == m.NONE
    assert answer(h, pre_vote(epoch, last=0, cluster=None)).error == m.NONE
    assert answer(h, pre_vote(epoch, last=0, cluster="")).error == m.INCONSISTENT_CLUSTER_ID
    assert answer(h, pre_vote(epoch, last=0, cluster="invalid-uuid")).error == m.INCONSISTENT_CLUSTER_ID


def test_invalid_voter_replica_pre_vote_request():
    h = _leader()
    resp = answer(h, pre_vote(h.node.epoch, last=100, voter=10))
    assert (resp.error, resp.vote_granted, resp.leader_id) == (m.INVALID_VOTER_KEY, False, LOCAL)


def test_leader_accept_pre_vote_from_observer():
    h = _leader()
    epoch = h.node.epoch
    resp = answer(h, pre_vote(epoch - 1, cand=9, last_epoch=0, last=0))
    assert (resp.error, resp.vote_granted, resp.leader_epoch) == (m.FENCED_LEADER_EPOCH, False, epoch)
    resp = answer(h, pre_vote(epoch, cand=9, last_epoch=0, last=0))
    assert (resp.error, resp.vote_granted) == (m.NONE, False)


def test_handle_pre_vote_request_as_resigned():
    h = _leader()
    h.node.resign(h.now)
    h.apply(h.node.poll(h.now))
    assert h.node.state_name == "Resigned"
    epoch = h.node.epoch
    resp = answer(h, pre_vote(epoch, last=h.log.end_offset()))
    assert resp.vote_granted and resp.leader_id == NO_ID  # Kafka's resigned leader names itself here
    resp = answer(h, pre_vote(epoch + 1, last_epoch=epoch, last=h.log.end_offset(), cid=78))
    assert resp.vote_granted and resp.leader_id == NO_ID and h.node.state_name == "Unattached"


def test_invalid_vote_request():
    h = follower(epoch=5, leader=2)
    for req in (pre_vote(5, last_epoch=0, last=-5), pre_vote(5, last_epoch=-1, last=0),
                pre_vote(5, last_epoch=6, last=0)):
        resp = answer(h, req)
        assert (resp.error, resp.leader_id, resp.leader_epoch, resp.vote_granted) == (m.INVALID_REQUEST, 2, 5, False)
        assert h.node.epoch == 5 and h.node.state_name == "Follower"


def test_follower_grants_pre_vote_if_has_not_fetched_yet():
    h = follower(epoch=2, leader=2, voters=(1, 2, 3))
    resp = answer(h, pre_vote(2, cand=3))
    assert resp.vote_granted and resp.leader_id == 2 and h.node.state_name == "Follower"
    fetch_succeeds(h)
    assert not answer(h, pre_vote(2, cand=3, cid=78)).vote_granted and h.node.state_name == "Follower"


def test_reject_pre_vote_if_remote_log_is_not_up_to_date():
    h = NodeHarness(node_id=LOCAL, stored=ElectionState(2, NO_ID, None))
    h.log.append_as_leader(_batch(3, epoch=2), 2)
    assert h.log.end_offset() == 3
    resp = answer(h, pre_vote(1, last_epoch=1, last=0))
    assert (resp.error, resp.vote_granted) == (m.FENCED_LEADER_EPOCH, False)
    resp = answer(h, pre_vote(2, last_epoch=1, last=2, cid=78))
    assert (resp.error, resp.vote_granted) == (m.NONE, False) and h.node.state_name == "Unattached"


def test_pre_vote_response_ignored_after_becoming_follower():
    h, votes = prospective(epoch=5)
    assert {v.candidate_epoch for v in votes} == {5} and all(v.pre_vote for v in votes)  # the current epoch
    h.deliver(m.BeginQuorumEpochRequest(3, LOCAL, 9, "kraftwire", voter_id=LOCAL, new_leader_id=3,
                                        new_leader_epoch=5))
    assert (h.node.state_name, h.node.quorum.leader_id) == ("Follower", 3)
    for v in votes:
        h.deliver(m.VoteResponse(v.dst, LOCAL, v.correlation_id, m.NONE, NO_ID, 5, vote_granted=True, pre_vote=True))
    assert (h.node.state_name, h.node.epoch, h.node.quorum.leader_id) == ("Follower", 5, 3)


def test_pre_vote_not_supported_by_remote():
    h, votes = prospective(epoch=5, voters=(1, 2))
    [v] = votes
    h.deliver(m.VoteResponse(v.dst, LOCAL, v.correlation_id, m.UNSUPPORTED_VERSION, NO_ID, -1, vote_granted=False,
                             pre_vote=True))
    assert h.node.state_name == "Candidate" and h.node.epoch == 6


def test_prospective_receives_begin_quorum_request():
    h, _ = prospective(epoch=5, voters=(1, 2))
    h.deliver(m.BeginQuorumEpochRequest(2, LOCAL, 9, "kraftwire", voter_id=LOCAL, new_leader_id=2, new_leader_epoch=5))
    assert (h.node.state_name, h.node.epoch, h.node.quorum.leader_id) == ("Follower", 5, 2)


def test_pre_vote_response_includes_leader_id():
    h, votes = prospective(epoch=5)
    v = votes[0]
    h.deliver(m.VoteResponse(v.dst, LOCAL, v.correlation_id, m.NONE, 2, 5, vote_granted=True, pre_vote=True))
    assert (h.node.state_name, h.node.quorum.leader_id) == ("Follower", 2)


def test_a_stale_real_vote_is_fenced_too():
    h = NodeHarness(node_id=LOCAL, stored=ElectionState(4, NO_ID, None))
    req = replace(pre_vote(3, last_epoch=1), pre_vote=False)
    resp = answer(h, req)
    assert (resp.error, resp.leader_epoch, resp.vote_granted) == (m.FENCED_LEADER_EPOCH, 4, False)


def _batch(n: int, epoch: int) -> bytes:
    from kraftwire.records import RecordBatchBuilder

    b = RecordBatchBuilder(base_offset=0, partition_leader_epoch=epoch)
    for i in range(n):
        b.append(None, b"v%d" % i)
    return b.build()
