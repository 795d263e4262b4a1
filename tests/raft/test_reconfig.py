"""KIP-853 voter changes in the core, mirrored from Kafka's ``KafkaRaftClientReconfigTest``.

Every test of that class has a row here: mirrored (the test below of the same name, in snake case), covered
elsewhere, or not yet, and why.

==============================================  ===================================================================
Kafka test                                      here
==============================================  ===================================================================
testLeaderWritesBootstrapRecords                mirrored
testBootstrapCheckpointIsNotReturnedOnFetch     covered: tests/raft/test_node.py (an empty follower is never sent the
                                                0-0 snapshot)
testLeaderDoesNotBootstrapRecordsWithKraftVer.  mirrored (test_leader_does_not_bootstrap_records_with_kraft_version_0)
testFollowerDoesNotRequestLeaderBootstrapSnap.  covered with the previous row
testFollowerReadsKRaftBootstrapRecords          mirrored
testAddVoter                                    mirrored
testAddVoterInvalidClusterId                    mirrored
testAddVoterToNotLeader                         mirrored
testAddVoterWithMissingDefaultListener          edge: tests/server (the core never sees a request without one)
testAddVoterWithPendingAddVoter                 mirrored
testAddVoterWithoutFencedPreviousLeaders        mirrored
testAddVoterWithKraftVersion0                   mirrored
testAddVoterWithExistingVoter                   mirrored
testAddVoterTimeout                             mirrored
testAddVoterWithApiVersionsFromIncorrectNode    edge: the ApiVersions exchange is the edge's (tests/server)
testAddVoterInvalidFeatureVersion               mirrored
testAddVoterWithLaggingNewVoter                 mirrored
testAddVoterFailsWhenLosingLeadership           mirrored
testAddVoterWithMissingDirectoryId              edge: the wire translation refuses it (tests/server)
(AddRaftVoter v1, AckWhenCommitted false)       test_add_voter_answered_at_the_append_when_not_acked_on_commit,
                                                test_add_voter_not_acked_on_commit_times_out_silently
testRemoveVoter                                 mirrored
testRemoveVoterIsLeader                         mirrored
testRemoveVoterInvalidClusterId                 mirrored
testRemoveVoterToNotLeader                      mirrored
testRemoveVoterWithPendingRemoveVoter           mirrored
testRemoveVoterWithoutFencedPreviousLeaders     mirrored (with the add test of the same kind)
testRemoveVoterWithKraftVersion0                mirrored
testRemoveVoterWithNoneVoter                    mirrored
testRemoveVoterWithNoneVoterId                  mirrored (a voter id with another directory id)
testRemoveVoterToEmptyVoterSet                  mirrored
testRemoveVoterTimedOut                         mirrored
testRemoveVoterFailsWhenLosingLeadership        mirrored
testAddVoterWithPendingRemoveVoter              mirrored
testRemoveVoterWithPendingAddVoter              mirrored
testUpdateVoter                                 mirrored
testLeaderUpdatesVoter                          mirrored
testUpdateVoterInvalidClusterId                 mirrored
testUpdateVoterOldEpoch                         mirrored
testUpdateVoterNewEpoch                         mirrored
testUpdateVoterToNotLeader                      mirrored
testUpdateVoterWithoutFencedPreviousLeaders     mirrored
testUpdateVoterWithKraftVersion0                mirrored (UNSUPPORTED_VERSION, as at the Kafka commit in kraft-facts)
testUpdateVoterWithNoneVoter                    mirrored
testUpdateVoterWithNoneVoterId                  mirrored
testUpdateVoterWithPendingAddVoter              mirrored
testFollowerSendsUpdateVoter                    mirrored
testFollowerSendsUpdateVoterWhenDifferent       mirrored (and not when the entry is already right)
testUpdateVoterResponseCausesEpochChange        mirrored
testObserverDiscoversLeaderWithUnknownVoters    covered: the edge discovers the quorum with DescribeQuorum before
                                                the core starts (tests/roles)
testHandleBeginQuorumRequestMoreEndpoints       not applicable: endpoints live at the edge
==============================================  ===================================================================

Beyond Kafka's class: directory ids decide who is a voter (a wiped voter's fetches do not count, its vote requests
go nowhere), and a snapshot records the voter set in force at its own offset.
"""

from __future__ import annotations

import random
import uuid

import pytest

from kraftwire.ids import ReplicaKey
from kraftwire.raft import messages as m
from kraftwire.raft.dynamic_voters import read_voter_set
from kraftwire.raft.events import Received
from kraftwire.raft.node import RaftNode
from kraftwire.raft.states import UnattachedState
from kraftwire.raft.voter_set import VoterNode, VoterSet
from kraftwire.records import read_batches
from kraftwire.records.control import KRAFT_VERSION, KRAFT_VOTERS, LEADER_CHANGE, decode_control_record

from harness.raft import NodeHarness

LOCAL = 1
DIRS = {i: uuid.UUID(int=0x1000 + i) for i in range(1, 8)}


def key(i: int, directory: uuid.UUID | None = None) -> ReplicaKey:
    return ReplicaKey(i, directory or DIRS[i])


def node(i: int) -> VoterNode:
    return VoterNode(key(i), (("CONTROLLER", "localhost", 9990 + i),))


def voter_set(*ids) -> VoterSet:
    return VoterSet.of(node(i) for i in ids)


def leader(voters=(1,), kraft_version=1) -> NodeHarness:
    """Node 1 elected leader of ``voters`` (a one-voter set elects itself; otherwise node 2 grants the votes)."""
    h = NodeHarness(node_id=LOCAL, voters=voters, kraft_version=kraft_version, directory_id=DIRS[LOCAL],
                    voter_set=voter_set(*voters) if kraft_version else None)
    return win(h)


def win(h: NodeHarness) -> NodeHarness:
    sent = h.poll(at=1_000)
    for _ in range(6):
        if h.node.state_name == "Leader":
            break
        requests = [s for s in sent if isinstance(s, m.VoteRequest)]
        if not requests:
            sent = h.poll(at=h.now + 500)
            continue
        sent = []
        for req in requests:
            sent += h.deliver(m.VoteResponse(req.dst, LOCAL, req.correlation_id, m.NONE, -1, req.candidate_epoch,
                                             vote_granted=True, pre_vote=req.pre_vote))
    assert h.node.state_name == "Leader", h.node.state_name
    return h


def fetch(h: NodeHarness, replica: int, directory=None, offset=None, cid=500) -> m.FetchResponse:
    """A replica fetches from the leader's end (so it is caught up); returns the leader's answer."""
    epoch = h.node.epoch
    req = m.FetchRequest(replica, LOCAL, cid, "kraftwire", replica_id=replica, replica_epoch=-1,
                         current_leader_epoch=epoch, fetch_offset=h.log.end_offset() if offset is None else offset,
                         last_fetched_epoch=h.log.last_fetched_epoch(), max_wait_ms=0, max_bytes=1 << 20,
                         replica_directory_id=DIRS[replica] if directory is None else directory)
    [resp] = [s for s in h.deliver(req) if isinstance(s, m.FetchResponse)]
    return resp


def commit(h: NodeHarness, *followers) -> None:
    """The followers fetch up to the leader's end: everything the leader has is committed."""
    for f in followers:
        fetch(h, f)
    h.poll()
    assert h.node.high_watermark == h.log.end_offset()


def add_request(i: int, directory=None, cid=900, cluster="kraftwire", timeout_ms=30_000, kv=(0, 1), ack=True):
    return m.AddRaftVoterRequest(-1, LOCAL, cid, cluster, voter_key=key(i, directory),
                                 endpoints=(("CONTROLLER", "localhost", 9990 + i),), timeout_ms=timeout_ms,
                                 kraft_version_min=kv[0], kraft_version_max=kv[1], ack_when_committed=ack)


def remove_request(i: int, directory=None, cid=901, cluster="kraftwire"):
    return m.RemoveRaftVoterRequest(-1, LOCAL, cid, cluster, voter_key=key(i, directory))


def answers(sent, kind):
    return [s for s in sent if isinstance(s, kind)]


def control_records(h: NodeHarness, start=0):
    out = []
    for batch in read_batches(h.log.read(start, 1 << 20).records):
        if batch.is_control:
            for r in batch:
                out.append((r.offset, *decode_control_record(r.key, r.value)))
    return out


def follow(f: NodeHarness, src: NodeHarness) -> list:
    """``f`` learns ``src`` leads (an observer asks a voter) and sends its first Fetch."""
    sent = f.poll(at=1_000)
    sent += f.deliver(m.BeginQuorumEpochRequest(1, f.node.local_id, 5, "kraftwire", voter_id=f.node.local_id,
                                                new_leader_id=1, new_leader_epoch=src.node.epoch))
    sent += f.poll()
    return [s for s in sent if isinstance(s, m.FetchRequest)][-1:]


# --- bootstrap records ---------------------------------------------------------------------------------------------
def test_leader_writes_bootstrap_records():
    h = leader(voters=(1, 2, 3))
    records = control_records(h)
    assert [(o, t) for o, t, _ in records] == [(0, LEADER_CHANGE), (1, KRAFT_VERSION), (2, KRAFT_VOTERS)]
    assert records[1][2].kraft_version == 1
    assert VoterSet.from_record(records[2][2]) == voter_set(1, 2, 3)
    assert h.node.membership.history.last_offset() == 2
    # one batch: the three records share the epoch-start batch
    assert len(list(read_batches(h.log.read(0, 1 << 20).records))) == 1


def test_leader_does_not_bootstrap_records_with_kraft_version_0():
    h = leader(voters=(1, 2, 3), kraft_version=0)
    assert [t for _, t, _ in control_records(h)] == [LEADER_CHANGE]


def test_follower_reads_kraft_bootstrap_records():
    """A replica that replicates the leader's epoch-start batch takes its voter set at that offset."""
    src = leader(voters=(1, 2, 3))
    data = src.log.read(0, 1 << 20).records
    f = NodeHarness(node_id=2, voters=(1,), kraft_version=1, directory_id=DIRS[2], voter_set=voter_set(1))
    assert not f.node.quorum.is_voter  # its base set (what it learned) does not name it yet
    [req] = follow(f, src)
    assert req.replica_directory_id == DIRS[2]
    f.deliver(m.FetchResponse(1, 2, req.correlation_id, m.NONE, 1, src.node.epoch, high_watermark=0,
                              records=bytes(data)))
    assert f.node.membership.voters() == voter_set(1, 2, 3)
    assert f.node.quorum.is_voter and f.node.quorum.voters == {1, 2, 3}


def test_describe_quorum_with_only_static_voters():
    """Kafka's KafkaRaftClientTest.testDescribeQuorumWithOnlyStaticVoters: a static voter set records no directory
    ids, so DescribeQuorum names none, not even the leader's own (which its meta.properties has) nor the one a
    follower's Fetch carries."""
    h = leader(voters=(1, 2), kraft_version=0)
    fetch(h, 2)
    [resp] = answers(h.deliver(m.DescribeQuorumRequest(99, LOCAL, 21)), m.DescribeQuorumResponse)
    assert [(v.replica_id, v.directory_id) for v in resp.current_voters] == [(1, None), (2, None)]


def test_describe_quorum_names_the_directory_ids_of_the_voter_set():
    h = leader(voters=(1, 2), kraft_version=1)
    fetch(h, 2)
    [resp] = answers(h.deliver(m.DescribeQuorumRequest(99, LOCAL, 21)), m.DescribeQuorumResponse)
    assert [(v.replica_id, v.directory_id) for v in resp.current_voters] == [(1, DIRS[1]), (2, DIRS[2])]


# --- AddRaftVoter ----------------------------------------------------------------------------------------------------
def test_add_voter():
    h = leader(voters=(1, 2))
    commit(h, 2)
    fetch(h, 3)  # the new voter is a caught-up observer
    assert not h.node.membership.voters().is_voter(key(3))
    sent = h.deliver(add_request(3))
    assert not answers(sent, m.AddRaftVoterResponse)  # answered once committed
    assert h.node.membership.voters() == voter_set(1, 2, 3)  # in force as soon as appended
    assert h.node.quorum.state.voters == {1, 2, 3}
    record_offset = h.node.membership.history.last_offset()
    assert [t for o, t, _ in control_records(h) if o == record_offset] == [KRAFT_VOTERS]
    sent = answers(h.deliver(fetch_req(h, 2)), m.AddRaftVoterResponse)
    assert sent and sent[0].error == m.NONE and sent[0].correlation_id == 900


def fetch_req(h, replica, cid=501):
    return m.FetchRequest(replica, LOCAL, cid, "kraftwire", replica_id=replica, replica_epoch=-1,
                          current_leader_epoch=h.node.epoch, fetch_offset=h.log.end_offset(),
                          last_fetched_epoch=h.log.last_fetched_epoch(), max_wait_ms=0, max_bytes=1 << 20,
                          replica_directory_id=DIRS[replica])


def test_new_set_counts_for_the_high_watermark_once_appended():
    """After adding 3 to {1, 2}, the majority is 2 of 3: node 2 alone commits the change, and from then on a
    record needs two of the three voters (1 and 3 without 2 do it too)."""
    h = leader(voters=(1, 2))
    commit(h, 2)
    fetch(h, 3)
    h.deliver(add_request(3))
    commit(h, 2)
    h.node.schedule_append([b"x"], h.now)
    h.poll()
    end = h.log.end_offset()
    assert h.node.high_watermark < end
    fetch(h, 3)
    h.poll()
    assert h.node.high_watermark == end


def test_add_voter_answered_at_the_append_when_not_acked_on_commit():
    """AddRaftVoter v1, AckWhenCommitted false (Kafka 4.4's ``AddVoterHandler``): NONE as soon as the VotersRecord
    is appended; the change stays pending, so a second one waits, and its commit answers nothing more."""
    h = leader(voters=(1, 2))
    commit(h, 2)
    fetch(h, 3)
    fetch(h, 4)
    [resp] = answers(h.deliver(add_request(3, ack=False)), m.AddRaftVoterResponse)
    assert (resp.error, resp.correlation_id) == (m.NONE, 900)
    assert h.node.high_watermark <= h.node.membership.history.last_offset()  # not committed yet
    [resp] = answers(h.deliver(add_request(4, cid=902)), m.AddRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT and "previous voter change" in resp.error_message
    assert not answers(h.deliver(fetch_req(h, 2)), m.AddRaftVoterResponse)  # committed: no second answer
    assert h.node.membership.pending is None and h.node.membership.voters() == voter_set(1, 2, 3)


def test_add_voter_not_acked_on_commit_times_out_silently():
    h = leader(voters=(1, 2))
    commit(h, 2)
    fetch(h, 3)
    [resp] = answers(h.deliver(add_request(3, timeout_ms=200, ack=False)), m.AddRaftVoterResponse)
    assert resp.error == m.NONE
    assert not answers(h.poll(at=h.now + 200), m.AddRaftVoterResponse)
    assert h.node.membership.pending is None


def test_add_voter_invalid_cluster_id():
    h = leader(voters=(1, 2))
    commit(h, 2)
    [resp] = answers(h.deliver(add_request(3, cluster="other")), m.AddRaftVoterResponse)
    assert resp.error == m.INCONSISTENT_CLUSTER_ID


def test_add_voter_to_not_leader():
    h = NodeHarness(node_id=LOCAL, voters=(1, 2, 3), kraft_version=1, directory_id=DIRS[1],
                    voter_set=voter_set(1, 2, 3))
    [resp] = answers(h.deliver(add_request(4)), m.AddRaftVoterResponse)
    assert resp.error == m.NOT_LEADER_OR_FOLLOWER


def test_add_voter_with_pending_add_voter():
    h = leader(voters=(1, 2))
    commit(h, 2)
    fetch(h, 3)
    fetch(h, 4)
    h.deliver(add_request(3))
    [resp] = answers(h.deliver(add_request(4, cid=902)), m.AddRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT
    assert "previous voter change" in resp.error_message


def test_add_voter_without_fenced_previous_leaders():
    """No high watermark in this epoch yet: the leader cannot know earlier changes are settled."""
    h = leader(voters=(1, 2))
    fetch(h, 3)
    [resp] = answers(h.deliver(add_request(3)), m.AddRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT and "establish HWM" in resp.error_message
    [resp] = answers(h.deliver(remove_request(2)), m.RemoveRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT and "establish HWM" in resp.error_message


def test_add_voter_with_kraft_version_0():
    h = leader(voters=(1, 2), kraft_version=0)
    commit(h, 2)
    fetch(h, 3)
    [resp] = answers(h.deliver(add_request(3)), m.AddRaftVoterResponse)
    assert resp.error == m.UNSUPPORTED_VERSION
    assert resp.error_message == "Cluster doesn't support adding voter because the kraft.version feature is 0"


def test_add_voter_with_existing_voter():
    h = leader(voters=(1, 2))
    commit(h, 2)
    [resp] = answers(h.deliver(add_request(2)), m.AddRaftVoterResponse)
    assert resp.error == m.DUPLICATE_VOTER


def test_add_voter_timeout():
    h = leader(voters=(1, 2))
    commit(h, 2)
    fetch(h, 3)
    h.deliver(add_request(3, timeout_ms=200))  # shorter than check-quorum (1.5 x the harness's 300 ms)
    [resp] = answers(h.poll(at=h.now + 200), m.AddRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT
    assert h.node.membership.pending is None
    assert h.node.membership.voters() == voter_set(1, 2, 3)  # the record stays; it may still commit


def test_add_voter_invalid_feature_version():
    h = leader(voters=(1, 2))
    commit(h, 2)
    fetch(h, 3)
    [resp] = answers(h.deliver(add_request(3, kv=(0, 0))), m.AddRaftVoterResponse)
    assert resp.error == m.INVALID_REQUEST
    assert h.node.membership.voters() == voter_set(1, 2)


def test_add_voter_with_lagging_new_voter():
    h = leader(voters=(1, 2))
    commit(h, 2)
    [resp] = answers(h.deliver(add_request(3)), m.AddRaftVoterResponse)  # 3 never fetched
    assert resp.error == m.REQUEST_TIMED_OUT and "lagging behind" in resp.error_message
    fetch(h, 3, directory=uuid.UUID(int=99))  # fetching, but from another disk than the one named
    [resp] = answers(h.deliver(add_request(3, cid=903)), m.AddRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT


def test_add_voter_fails_when_losing_leadership():
    h = leader(voters=(1, 2))
    commit(h, 2)
    fetch(h, 3)
    h.deliver(add_request(3))
    sent = h.deliver(m.BeginQuorumEpochRequest(2, LOCAL, 7, "kraftwire", voter_id=LOCAL, new_leader_id=2,
                                               new_leader_epoch=h.node.epoch + 1))
    [resp] = answers(sent, m.AddRaftVoterResponse)
    assert resp.error == m.NOT_LEADER_OR_FOLLOWER


# --- RemoveRaftVoter -------------------------------------------------------------------------------------------------
def test_remove_voter():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    sent = h.deliver(remove_request(3))
    assert not answers(sent, m.RemoveRaftVoterResponse)
    assert h.node.quorum.state.voters == {1, 2}
    assert 3 in h.node.quorum.state.observer_states  # a removed voter is an observer
    [resp] = answers(h.deliver(fetch_req(h, 2)), m.RemoveRaftVoterResponse)
    assert resp.error == m.NONE


def test_remove_voter_is_leader():
    """The leader removes itself: the others commit it (the leader no longer counts), then it resigns."""
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    h.deliver(remove_request(1))
    epoch = h.node.epoch
    assert not h.node.membership.is_local_voter() and h.node.quorum.state.voters == {2, 3}
    assert h.node.quorum.is_voter  # of the set before, until it knows the removal committed (it may run again)
    fetch(h, 2)
    h.poll()
    assert h.node.state_name == "Leader"  # one of {2, 3} is not a majority
    sent = h.deliver(fetch_req(h, 3))
    [resp] = answers(sent, m.RemoveRaftVoterResponse)
    assert resp.error == m.NONE
    assert h.node.state_name == "Resigned"
    assert {s.dst for s in answers(h.poll(), m.EndQuorumEpochRequest)} == {2, 3}
    h.poll(at=h.now + 10_000)  # after its election timeout it waits for the new leader as an observer
    assert isinstance(h.node.quorum.state, UnattachedState) and h.node.epoch == epoch
    assert all(not isinstance(s, m.VoteRequest) for s in h.poll(at=h.now + 10_000))


def test_remove_voter_invalid_cluster_id():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    [resp] = answers(h.deliver(remove_request(3, cluster="other")), m.RemoveRaftVoterResponse)
    assert resp.error == m.INCONSISTENT_CLUSTER_ID


def test_remove_voter_to_not_leader():
    h = NodeHarness(node_id=LOCAL, voters=(1, 2, 3), kraft_version=1, directory_id=DIRS[1],
                    voter_set=voter_set(1, 2, 3))
    [resp] = answers(h.deliver(remove_request(3)), m.RemoveRaftVoterResponse)
    assert resp.error == m.NOT_LEADER_OR_FOLLOWER


def test_remove_voter_with_pending_remove_voter():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    h.deliver(remove_request(3))
    [resp] = answers(h.deliver(remove_request(2, cid=905)), m.RemoveRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT


def test_remove_voter_with_kraft_version_0():
    h = leader(voters=(1, 2, 3), kraft_version=0)
    commit(h, 2, 3)
    [resp] = answers(h.deliver(remove_request(3)), m.RemoveRaftVoterResponse)
    assert resp.error == m.UNSUPPORTED_VERSION


def test_remove_voter_with_none_voter():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    [resp] = answers(h.deliver(remove_request(4)), m.RemoveRaftVoterResponse)
    assert resp.error == m.VOTER_NOT_FOUND


def test_remove_voter_with_none_voter_id():
    """The id is a voter's, the directory id is not: not that voter."""
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    [resp] = answers(h.deliver(remove_request(3, directory=uuid.UUID(int=77))), m.RemoveRaftVoterResponse)
    assert resp.error == m.VOTER_NOT_FOUND


def test_remove_voter_to_empty_voter_set():
    h = leader(voters=(1,))
    h.poll()
    [resp] = answers(h.deliver(remove_request(1)), m.RemoveRaftVoterResponse)
    assert resp.error == m.VOTER_NOT_FOUND


def test_remove_voter_timed_out():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    h.deliver(remove_request(3))
    [resp] = answers(h.poll(at=h.now + h.config.request_timeout_ms), m.RemoveRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT


def test_remove_voter_fails_when_losing_leadership():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    h.deliver(remove_request(3))
    sent = h.deliver(m.BeginQuorumEpochRequest(2, LOCAL, 7, "kraftwire", voter_id=LOCAL, new_leader_id=2,
                                               new_leader_epoch=h.node.epoch + 1))
    [resp] = answers(sent, m.RemoveRaftVoterResponse)
    assert resp.error == m.NOT_LEADER_OR_FOLLOWER


@pytest.mark.parametrize("first", ["add", "remove"])
def test_second_change_while_first_pending(first):
    """testAddVoterWithPendingRemoveVoter / testRemoveVoterWithPendingAddVoter."""
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    fetch(h, 4)
    if first == "add":
        h.deliver(add_request(4))
        [resp] = answers(h.deliver(remove_request(3)), m.RemoveRaftVoterResponse)
    else:
        h.deliver(remove_request(3))
        [resp] = answers(h.deliver(add_request(4)), m.AddRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT


def test_uncommitted_change_refuses_the_next_even_with_no_pending_answer():
    """The pending answer timed out but the change is still uncommitted: the next change waits."""
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    h.deliver(remove_request(3))
    h.poll(at=h.now + h.config.request_timeout_ms)
    assert h.node.membership.pending is None
    [resp] = answers(h.deliver(remove_request(2, cid=906)), m.RemoveRaftVoterResponse)
    assert resp.error == m.REQUEST_TIMED_OUT and "commit the latest voter change" in resp.error_message


# --- directory ids, truncation, snapshots ----------------------------------------------------------------------------
def test_wiped_voter_fetches_do_not_count():
    """Voter 2's disk was wiped (new directory id): its fetches are an observer's, so {1, 2, 3} commits nothing
    with 2 alone."""
    h = leader(voters=(1, 2, 3))
    commit(h, 2)
    h.node.schedule_append([b"x"], h.now)
    h.poll()
    end = h.log.end_offset()
    fetch(h, 2, directory=uuid.UUID(int=4242))
    h.poll()
    assert h.node.high_watermark < end
    fetch(h, 3)
    h.poll()
    assert h.node.high_watermark == end


def test_wiped_node_is_not_a_voter_and_refuses_votes_meant_for_the_old_disk():
    h = NodeHarness(node_id=2, voters=(1, 2, 3), kraft_version=1, directory_id=uuid.UUID(int=4242),
                    voter_set=voter_set(1, 2, 3))
    assert not h.node.quorum.is_voter
    assert not [s for s in h.poll(at=10_000) if isinstance(s, m.VoteRequest)]  # it never runs for election
    req = m.VoteRequest(1, 2, 11, "kraftwire", candidate_epoch=5, candidate_key=key(1), voter_id=2,
                        last_offset_epoch=0, last_offset=0, voter_directory_id=DIRS[2])
    [resp] = answers(h.apply(h.node.handle(Received(req), h.now)), m.VoteResponse)
    assert resp.error == m.INVALID_VOTER_KEY


def test_truncation_takes_an_uncommitted_voter_set_back():
    src = leader(voters=(1, 2))
    commit(src, 2)
    fetch(src, 3)
    src.deliver(add_request(3))
    data = bytes(src.log.read(0, 1 << 20).records)
    f = NodeHarness(node_id=2, voters=(1, 2), kraft_version=1, directory_id=DIRS[2], voter_set=voter_set(1, 2))
    [req] = follow(f, src)
    f.deliver(m.FetchResponse(1, 2, req.correlation_id, m.NONE, 1, src.node.epoch, high_watermark=0, records=data))
    assert f.node.membership.voters() == voter_set(1, 2, 3)
    record_offset = f.node.membership.history.last_offset()
    f.node.truncate(record_offset)
    f.poll()
    assert f.node.membership.voters() == voter_set(1, 2)
    assert f.node.quorum.voters == {1, 2}


class _Image:
    """A listener that snapshots: its records are every data record it was given."""

    def __init__(self):
        self.values = []

    def handle_commit(self, batches):
        for b in batches:
            self.values.extend(b.records)

    def handle_load_snapshot(self, reader):
        self.values = list(reader.records)

    def handle_leader_change(self, leader):
        pass

    def snapshot_records(self):
        return list(self.values)


def test_snapshot_records_the_voter_set_at_its_offset():
    """A snapshot taken after a removal committed names the new set; the node restarted from it (its log start
    moved past every VotersRecord) takes that set as its base."""
    h = NodeHarness(node_id=LOCAL, voters=(1, 2, 3), kraft_version=1, directory_id=DIRS[1],
                    voter_set=voter_set(1, 2, 3), snapshot_interval_ms=1, advance_log_start_on_snapshot=True)
    h.node.register(_Image())
    win(h)
    commit(h, 2, 3)
    h.deliver(remove_request(3))
    commit(h, 2)
    h.node.schedule_append([b"after"], h.now)
    h.poll()
    commit(h, 2)
    h.poll(at=h.now + 10)
    h.poll()
    sid = h.log.latest_snapshot_id()
    assert sid is not None and sid.end_offset == h.log.end_offset()
    kraft_version, record = read_voter_set(h.log.read_snapshot(sid).records())
    assert kraft_version == 1 and VoterSet.from_record(record) == voter_set(1, 2)
    assert h.log.start_offset() == sid.end_offset  # every VotersRecord is gone from the log
    restarted = RaftNode(h.config, h.log, h.persisted, random.Random(1), h.now)
    assert restarted.membership.voters() == voter_set(1, 2)
    assert restarted.membership.history.last_offset() == sid.end_offset - 1


# --- UpdateRaftVoter -------------------------------------------------------------------------------------------------
MOVED = (("CONTROLLER", "newhost", 7002),)


def update_request(h, i=2, epoch=None, directory=None, cid=910, cluster="kraftwire", endpoints=MOVED, kv=(0, 1)):
    return m.UpdateRaftVoterRequest(i, LOCAL, cid, cluster, current_leader_epoch=h.node.epoch if epoch is None
                                    else epoch, voter_key=key(i, directory), endpoints=endpoints,
                                    kraft_version_min=kv[0], kraft_version_max=kv[1])


def update_answer(h, req):
    [resp] = answers(h.deliver(req), m.UpdateRaftVoterResponse)
    return resp


def test_update_voter():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    resp = update_answer(h, update_request(h))
    assert resp.error == m.NONE and resp.leader_id == LOCAL  # answered at once, not at commit
    assert h.node.membership.voters().node(2).endpoints == MOVED
    assert h.node.membership.uncommitted_change(h.node.high_watermark)


def test_leader_updates_voter():
    """A leader whose own entry is stale (it restarted on another port) rewrites it at the start of its epoch."""
    base = voter_set(1, 2, 3)
    h = NodeHarness(node_id=LOCAL, voters=(1, 2, 3), kraft_version=1, directory_id=DIRS[1], voter_set=base,
                    local_endpoints=(("CONTROLLER", "localhost", 1234),))
    h.node.membership.history.base_offset = 0  # the set is in the log already (not the bootstrap checkpoint)
    win(h)
    records = control_records(h)
    assert [t for _, t, _ in records] == [LEADER_CHANGE, KRAFT_VERSION, KRAFT_VOTERS]
    assert VoterSet.from_record(records[2][2]).node(1).endpoints == (("CONTROLLER", "localhost", 1234),)


def test_update_voter_invalid_cluster_id():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    assert update_answer(h, update_request(h, cluster="other")).error == m.INCONSISTENT_CLUSTER_ID


@pytest.mark.parametrize("delta,error", [(-1, m.FENCED_LEADER_EPOCH), (1, m.UNKNOWN_LEADER_EPOCH)])
def test_update_voter_old_and_new_epoch(delta, error):
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    assert update_answer(h, update_request(h, epoch=h.node.epoch + delta)).error == error


def test_update_voter_to_not_leader():
    h = NodeHarness(node_id=LOCAL, voters=(1, 2, 3), kraft_version=1, directory_id=DIRS[1],
                    voter_set=voter_set(1, 2, 3))
    assert update_answer(h, update_request(h)).error == m.NOT_LEADER_OR_FOLLOWER


def test_update_voter_without_fenced_previous_leaders():
    h = leader(voters=(1, 2, 3))
    assert update_answer(h, update_request(h)).error == m.REQUEST_TIMED_OUT


def test_update_voter_with_kraft_version_0():
    h = leader(voters=(1, 2, 3), kraft_version=0)
    commit(h, 2, 3)
    assert update_answer(h, update_request(h)).error == m.UNSUPPORTED_VERSION


def test_update_voter_with_none_voter():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    assert update_answer(h, update_request(h, i=4)).error == m.VOTER_NOT_FOUND


def test_update_voter_with_none_voter_id():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    assert update_answer(h, update_request(h, directory=uuid.UUID(int=31))).error == m.VOTER_NOT_FOUND


def test_update_voter_with_pending_add_voter():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    fetch(h, 4)
    h.deliver(add_request(4))
    assert update_answer(h, update_request(h)).error == m.REQUEST_TIMED_OUT


def test_update_voter_invalid_range():
    h = leader(voters=(1, 2, 3))
    commit(h, 2, 3)
    assert update_answer(h, update_request(h, kv=(0, 0))).error == m.INVALID_REQUEST


def voter_follower(endpoints):
    """Node 1 as a voter following leader 2, its entry in the set naming port 9991."""
    from kraftwire.raft.election import ElectionState

    h = NodeHarness(node_id=LOCAL, voters=(1, 2, 3), kraft_version=1, directory_id=DIRS[1],
                    voter_set=voter_set(1, 2, 3), local_endpoints=endpoints, stored=ElectionState(3, 2, None))
    assert h.node.state_name == "Follower"
    return h


def keep_following(h, until):
    """Answer every Fetch (so the follower stays a follower) until ``until``; returns what it sent meanwhile."""
    sent, waiting = [], []
    while h.now < until:
        out = h.poll(at=h.now + 100)
        for f in answers(waiting + out, m.FetchRequest):  # each Fetch answered in the next round, once
            out += h.deliver(m.FetchResponse(2, LOCAL, f.correlation_id, m.NONE, 2, 3, high_watermark=0))
        sent += out
        waiting = [s for s in out if isinstance(s, m.FetchRequest)]
        waiting = waiting[-1:]
    return sent


def test_follower_sends_update_voter_when_different():
    h = voter_follower((("CONTROLLER", "localhost", 5555),))
    period = 3 * h.config.fetch_timeout_ms
    sent = keep_following(h, h.now + period - 100)
    assert not answers(sent, m.UpdateRaftVoterRequest)  # a few fetches first
    [req] = answers(keep_following(h, h.now + 200), m.UpdateRaftVoterRequest)
    assert req.dst == 2 and req.voter_key == key(1) and req.endpoints == (("CONTROLLER", "localhost", 5555),)
    assert req.current_leader_epoch == 3 and (req.kraft_version_min, req.kraft_version_max) == (0, 1)


def test_follower_sends_no_update_voter_when_its_entry_is_right():
    h = voter_follower((("CONTROLLER", "localhost", 9991),))
    assert not answers(keep_following(h, h.now + 4 * 3 * h.config.fetch_timeout_ms), m.UpdateRaftVoterRequest)


def test_update_voter_response_causes_epoch_change():
    h = voter_follower((("CONTROLLER", "localhost", 5555),))
    [req] = answers(keep_following(h, h.now + 3 * h.config.fetch_timeout_ms + 100), m.UpdateRaftVoterRequest)
    h.deliver(m.UpdateRaftVoterResponse(2, LOCAL, req.correlation_id, m.NONE, 3, 4))
    assert h.node.epoch == 4 and h.node.quorum.leader_id == 3
