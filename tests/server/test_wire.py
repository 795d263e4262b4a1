"""Core Raft messages survive the trip through Kafka's wire messages (encoded to bytes and back) at every version
this node sends, and requests at older versions Kafka peers use still translate."""

from __future__ import annotations

import uuid

import pytest

from kraftwire.ids import OffsetAndEpoch, ReplicaKey, SnapshotId, replica_key_text
from kraftwire.protocol import codec
from kraftwire.protocol import messages as w
from kraftwire.raft import messages as m
from kraftwire.server.edge import wire

TOPIC = wire.Topic("__raft_performance_test", uuid.UUID(int=2))
DIR = uuid.UUID("12345678-1234-5678-1234-567812345678")

REQUESTS = [
    m.VoteRequest(1, 2, 77, "cid", candidate_epoch=5, candidate_key=ReplicaKey(1), voter_id=2, last_offset_epoch=4,
                  last_offset=100, pre_vote=True),
    m.VoteRequest(1, 2, 78, "cid", candidate_epoch=5, candidate_key=ReplicaKey(1), voter_id=2, last_offset_epoch=4,
                  last_offset=100, pre_vote=False),
    m.BeginQuorumEpochRequest(1, 3, 79, "cid", voter_id=3, new_leader_id=1, new_leader_epoch=6),
    m.EndQuorumEpochRequest(1, 2, 80, "cid", resigned_leader_id=1, resigned_leader_epoch=6,
                            preferred_candidates=(ReplicaKey(3), ReplicaKey(2))),
    m.FetchRequest(2, 1, 81, "cid", replica_id=2, replica_epoch=-1, current_leader_epoch=6, fetch_offset=1234,
                   last_fetched_epoch=5, max_wait_ms=500, max_bytes=8 << 20),
    m.FetchSnapshotRequest(2, 1, 82, None, replica_id=2, current_leader_epoch=6, snapshot_id=SnapshotId(100, 4),
                           position=4096, max_bytes=1 << 20),
    m.UpdateRaftVoterRequest(2, 1, 83, "cid", current_leader_epoch=6, voter_key=ReplicaKey(2, DIR),
                             endpoints=(("CONTROLLER", "host2", 9094), ("OTHER", "h", 1)), kraft_version_min=0,
                             kraft_version_max=1),
    # KIP-853: where the leader listens (v1 LeaderEndpoints)
    m.BeginQuorumEpochRequest(1, 3, 79, "cid", voter_id=3, new_leader_id=1, new_leader_epoch=6,
                              leader_endpoints=(("CONTROLLER", "host1", 9093), ("OTHER", "h", 1))),
]


def _src(req):
    return {m.VoteRequest: lambda r: r.candidate_key.id, m.BeginQuorumEpochRequest: lambda r: r.new_leader_id,
            m.EndQuorumEpochRequest: lambda r: r.resigned_leader_id, m.FetchRequest: lambda r: r.replica_id,
            m.FetchSnapshotRequest: lambda r: r.replica_id,
            m.UpdateRaftVoterRequest: lambda r: r.voter_key.id}[type(req)](req)


@pytest.mark.parametrize("req", REQUESTS, ids=lambda r: type(r).__name__)
def test_request_round_trip(req):
    key, version, body = wire.request_to_wire(req, TOPIC)
    data = codec.encode(body, version)
    decoded = codec.decode(w.api(key).request, data, version)
    back = wire.request_to_core(key, version, decoded, req.dst, req.correlation_id, TOPIC)
    assert back == req
    assert _src(back) == req.src


def test_older_vote_and_end_quorum_versions():
    req = REQUESTS[1]
    key, _, body = wire.request_to_wire(req, TOPIC)
    for version in (0, 1):
        decoded = codec.decode(w.VoteRequest, codec.encode(body, version), version)
        back = wire.request_to_core(key, version, decoded, 2, 5, TOPIC)
        assert back.candidate_epoch == 5 and back.last_offset == 100 and not back.pre_vote
    end = REQUESTS[3]
    key, _, body = wire.request_to_wire(end, TOPIC)
    decoded = codec.decode(w.EndQuorumEpochRequest, codec.encode(body, 0), 0)
    back = wire.request_to_core(key, 0, decoded, 2, 5, TOPIC)
    assert [k.id for k in back.preferred_candidates] == [3, 2]


def test_fetch_for_another_topic_is_refused():
    key, version, body = wire.request_to_wire(REQUESTS[4], wire.Topic("__cluster_metadata", uuid.UUID(int=1)))
    with pytest.raises(wire.WireError):
        wire.request_to_core(key, version, body, 1, 9, TOPIC)


@pytest.mark.parametrize("request_", REQUESTS[:4], ids=lambda r: type(r).__name__)
def test_a_quorum_request_for_another_partition_is_invalid(request_):
    """Kafka's hasValidTopicPartition: a Vote, BeginQuorumEpoch or EndQuorumEpoch naming another topic or partition
    than the quorum's is INVALID_REQUEST (the fuzzer, tests/fuzz, sent the quorum an EndQuorumEpoch for
    __transaction_state, and it was obeyed)."""
    for other in (wire.Topic("__transaction_state", uuid.UUID(int=2)), TOPIC):
        key, version, body = wire.request_to_wire(request_, other)
        if other == TOPIC:
            body.topics[0].partitions[0].partition_index = 1
        with pytest.raises(wire.WireError) as info:
            wire.request_to_core(key, version, body, 1, 9, TOPIC)
        assert info.value.error == m.INVALID_REQUEST


RESPONSES = [
    (m.VoteResponse(2, 1, 77, 0, 3, 5, vote_granted=True, pre_vote=True), REQUESTS[0]),
    (m.VoteResponse(2, 1, 78, 74, -1, 6, vote_granted=False), REQUESTS[1]),
    (m.BeginQuorumEpochResponse(3, 1, 79, 0, 1, 6), REQUESTS[2]),
    (m.EndQuorumEpochResponse(2, 1, 80, 104, -1, 6), REQUESTS[3]),
    (m.FetchResponse(1, 2, 81, 0, 1, 6, high_watermark=1200, records=b"\x00" * 70, log_start_offset=0), REQUESTS[4]),
    (m.FetchResponse(1, 2, 81, 0, 1, 6, high_watermark=1200, diverging_epoch=OffsetAndEpoch(900, 4),
                     log_start_offset=0), REQUESTS[4]),
    (m.FetchResponse(1, 2, 81, 0, 1, 6, high_watermark=1200, snapshot_id=SnapshotId(500, 3), log_start_offset=500),
     REQUESTS[4]),
    (m.FetchSnapshotResponse(1, 2, 82, 0, 1, 6, snapshot_id=SnapshotId(100, 4), size=9000, position=4096,
                             unaligned_records=b"abc"), REQUESTS[5]),
    (m.UpdateRaftVoterResponse(1, 2, 83, 0, 1, 6), REQUESTS[6]),
    (m.UpdateRaftVoterResponse(1, 2, 83, 74, 3, 7), REQUESTS[6]),
]


@pytest.mark.parametrize("resp, req", RESPONSES, ids=lambda x: type(x).__name__)
def test_response_round_trip(resp, req):
    key, version, _ = wire.request_to_wire(req, TOPIC)
    body = wire.response_to_wire(resp, TOPIC)
    decoded = codec.decode(w.api(key).response, codec.encode(body, version), version)
    back = wire.response_to_core(key, decoded, resp.src, resp.dst, resp.correlation_id, req)
    assert back == resp


def test_describe_quorum_response_carries_endpoints_and_directory_ids():
    resp = m.DescribeQuorumResponse(1, -1, 5, 0, 1, 6, high_watermark=42,
                                    current_voters=(m.ReplicaStateInfo(1, 50, 1000, 1000, DIR),
                                                    m.ReplicaStateInfo(2, 42, 990, 990)))
    body = wire.describe_quorum_to_wire(resp, TOPIC, {1: [("PLAINTEXT", "h1", 9092)], 2: [("PLAINTEXT", "h2", 9093)]})
    decoded = codec.decode(w.DescribeQuorumResponse, codec.encode(body, 2), 2)
    part = decoded.topics[0].partitions[0]
    assert (part.leader_id, part.leader_epoch, part.high_watermark) == (1, 6, 42)
    assert [(r.replica_id, r.log_end_offset, r.replica_directory_id) for r in part.current_voters] == [
        (1, 50, DIR), (2, 42, uuid.UUID(int=0))]
    assert [(n.node_id, n.listeners[0].host, n.listeners[0].port) for n in decoded.nodes] == [(1, "h1", 9092),
                                                                                              (2, "h2", 9093)]


# --- KIP-853: directory ids in Vote and Fetch, AddRaftVoter / RemoveRaftVoter -------------------------------------
DIR2 = uuid.UUID("87654321-4321-8765-4321-876543218765")
ZERO = uuid.UUID(int=0)


def test_vote_carries_the_voter_directory_id_and_fetch_the_replica_directory_id():
    vote = m.VoteRequest(1, 2, 77, "cid", candidate_epoch=5, candidate_key=ReplicaKey(1, DIR), voter_id=2,
                         last_offset_epoch=4, last_offset=100, pre_vote=True, voter_directory_id=DIR2)
    key, version, body = wire.request_to_wire(vote, TOPIC, DIR)
    decoded = codec.decode(w.VoteRequest, codec.encode(body, version), version)
    assert decoded.topics[0].partitions[0].voter_directory_id == DIR2
    assert wire.request_to_core(key, version, decoded, 2, 77, TOPIC) == vote
    v0 = codec.decode(w.VoteRequest, codec.encode(body, 0), 0)  # v0 has no directory ids
    assert wire.request_to_core(key, 0, v0, 2, 77, TOPIC).voter_directory_id is None
    unknown = m.VoteRequest(1, 2, 78, "cid", candidate_epoch=5, candidate_key=ReplicaKey(1), voter_id=2,
                            last_offset_epoch=4, last_offset=100)  # the set knows no directory id: ZERO_UUID
    assert wire.request_to_wire(unknown, TOPIC)[2].topics[0].partitions[0].voter_directory_id == ZERO

    fetch = REQUESTS[4]
    key, version, body = wire.request_to_wire(fetch, TOPIC, DIR)
    assert version == 18
    decoded = codec.decode(w.FetchRequest, codec.encode(body, version), version)
    back = wire.request_to_core(key, version, decoded, 1, 81, TOPIC)
    assert back.replica_directory_id == DIR
    v16 = codec.decode(w.FetchRequest, codec.encode(body, 16), 16)  # ReplicaDirectoryId is v17's
    assert wire.request_to_core(key, 16, v16, 1, 81, TOPIC).replica_directory_id is None


def _add_body(voter_id=2, directory=DIR2, listeners=(("CONTROLLER", "ctl-2", 9093),), cluster_id=None):
    R = w.AddRaftVoterRequest
    body = R(cluster_id=cluster_id, timeout_ms=30_000, voter_id=voter_id, voter_directory_id=directory,
             listeners=[R.Listener(name=n, host=h, port=p) for n, h, p in listeners])
    return codec.decode(R, codec.encode(body, 0), 0)  # as the node receives it


def test_add_raft_voter_translates_to_the_core_and_its_answer_back():
    body = _add_body(listeners=(("CONTROLLER", "ctl-2", 9093), ("REPLICATION", "::1", 9094)))
    assert wire.cluster_refusal(body, "abc") is None and wire.check_add_voter(body, "CONTROLLER") is None
    core = wire.add_voter_to_core(body, 1, 41, (0, 1))
    assert core == m.AddRaftVoterRequest(-1, 1, 41, None, voter_key=ReplicaKey(2, DIR2),
                                         endpoints=(("CONTROLLER", "ctl-2", 9093), ("REPLICATION", "::1", 9094)),
                                         timeout_ms=30_000, kraft_version_min=0, kraft_version_max=1)
    assert wire.add_voter_to_core(_add_body(cluster_id="abc"), 1, 41, (0, 0)).cluster_id == "abc"
    for resp, message in ((m.AddRaftVoterResponse(1, -1, 41, 0, 1, 3), None),
                          (m.AddRaftVoterResponse(1, -1, 41, 7, 1, 3, error_message="Aborted add voter operation "
                                                                                    "for ... lagging behind"),
                           "Aborted add voter operation for ... lagging behind")):
        out = codec.decode(w.AddRaftVoterResponse, codec.encode(wire.response_to_wire(resp, TOPIC), 0), 0)
        assert (out.error_code, out.error_message, out.throttle_time_ms) == (resp.error, message, 0)


def test_add_raft_voter_v1_carries_ack_when_committed_to_the_core():
    """v0 has no AckWhenCommitted: the core waits for the commit (Kafka's default true); v1 says."""
    R = w.AddRaftVoterRequest
    for version, ack in ((0, False), (1, False), (1, True)):
        body = R(cluster_id=None, timeout_ms=30_000, voter_id=2, voter_directory_id=DIR2,
                 listeners=[R.Listener(name="CONTROLLER", host="ctl-2", port=9093)], ack_when_committed=ack)
        body = codec.decode(R, codec.encode(body, version), version)
        assert wire.add_voter_to_core(body, 1, 41, (0, 1)).ack_when_committed is (ack or version == 0)


def test_remove_raft_voter_translates_to_the_core_and_its_answer_back():
    R = w.RemoveRaftVoterRequest
    body = codec.decode(R, codec.encode(R(cluster_id="abc", voter_id=3, voter_directory_id=DIR), 0), 0)
    assert wire.cluster_refusal(body, "abc") is None and wire.check_remove_voter(body) is None
    assert wire.remove_voter_to_core(body, 1, 42) == m.RemoveRaftVoterRequest(-1, 1, 42, "abc",
                                                                              voter_key=ReplicaKey(3, DIR))
    resp = m.RemoveRaftVoterResponse(1, -1, 42, 127, 1, 3, error_message="Cannot remove voter ...")
    out = codec.decode(w.RemoveRaftVoterResponse, codec.encode(wire.response_to_wire(resp, TOPIC), 0), 0)
    assert (out.error_code, out.error_message) == (127, "Cannot remove voter ...")


def test_voter_change_refusals_carry_kafkas_messages():
    assert wire.cluster_refusal(_add_body(cluster_id="other"), "abc") == (
        104, 'The given id "other" doesn\'t match the cluster id "abc"')
    assert wire.check_add_voter(_add_body(directory=ZERO), "CONTROLLER") == (
        42, "Add voter request didn't include a valid voter")
    assert wire.check_add_voter(_add_body(voter_id=-1), "CONTROLLER") == (
        42, "Add voter request didn't include a valid voter")
    assert wire.check_add_voter(_add_body(listeners=(("BROKER", "h", 9092),)), "CONTROLLER") == (
        42, "Add voter request didn't include the endpoint (Endpoints(endpoints={ListenerName(BROKER)="
            "h/<unresolved>:9092})) for the default listener CONTROLLER")
    R = w.RemoveRaftVoterRequest
    assert wire.check_remove_voter(R(cluster_id=None, voter_id=3, voter_directory_id=ZERO)) == (
        42, "Remove voter request didn't include a valid voter")
    assert replica_key_text(2, DIR2) == "ReplicaKey(id=2, directoryId=Optional[h2VDIUMhh2VDIYdlQyGHZQ])"
    assert replica_key_text(2, None) == "ReplicaKey(id=2, directoryId=Optional.empty)"
    body = wire.voter_change_response(True, 7, "New voter ... is not ready to receive requests")
    assert isinstance(body, w.AddRaftVoterResponse) and body.error_message.startswith("New voter")


def test_describe_quorum_takes_the_cores_directory_ids():
    """Only the core's: a replica it names none for (a static voter, an observer fetching below Fetch v17) reports
    the zero uuid, as Kafka's leader does."""
    resp = m.DescribeQuorumResponse(1, -1, 5, 0, 1, 6, high_watermark=42,
                                    current_voters=(m.ReplicaStateInfo(1, 50, 1000, 1000, DIR),),
                                    observers=(m.ReplicaStateInfo(4, 42, 990, 990, DIR2),
                                               m.ReplicaStateInfo(5, 40, 990, 990)))
    body = wire.describe_quorum_to_wire(resp, TOPIC, {1: [("CONTROLLER", "h1", 9093), ("OTHER", "h1", 9094)]})
    decoded = codec.decode(w.DescribeQuorumResponse, codec.encode(body, 2), 2)
    part = decoded.topics[0].partitions[0]
    assert [(r.replica_id, r.replica_directory_id) for r in part.current_voters + part.observers] == [
        (1, DIR), (4, DIR2), (5, ZERO)]
    assert [(n.node_id, [(ep.name, ep.port) for ep in n.listeners]) for n in decoded.nodes] == [
        (1, [("CONTROLLER", 9093), ("OTHER", 9094)])]


def test_update_raft_voter_answer_names_the_leaders_endpoint_and_needs_a_directory_id():
    body = wire.response_to_wire(m.UpdateRaftVoterResponse(1, 2, 83, 0, 1, 6), TOPIC,
                                 leader_endpoint=("leaderhost", 9093))
    assert (body.current_leader.leader_id, body.current_leader.host, body.current_leader.port) == (1, "leaderhost",
                                                                                                    9093)
    key, version, req = wire.request_to_wire(REQUESTS[6], TOPIC)
    req.voter_directory_id = uuid.UUID(int=0)
    with pytest.raises(wire.WireError) as info:
        wire.request_to_core(key, version, req, 1, 9, TOPIC)
    assert info.value.error == m.INVALID_REQUEST


def test_fetch_v18_carries_the_replicas_high_watermark():
    """KIP-1166: the follower says which high watermark it knows; absent (older versions, or not sent) is None."""
    from dataclasses import replace

    fetch = replace(REQUESTS[4], high_watermark=1200)
    key, version, body = wire.request_to_wire(fetch, TOPIC)
    decoded = codec.decode(w.FetchRequest, codec.encode(body, version), version)
    assert wire.request_to_core(key, version, decoded, 1, 81, TOPIC).high_watermark == 1200
    v17 = codec.decode(w.FetchRequest, codec.encode(body, 17), 17)
    assert wire.request_to_core(key, 17, v17, 1, 81, TOPIC).high_watermark is None
    unknown = replace(REQUESTS[4], high_watermark=-1)
    key, version, body = wire.request_to_wire(unknown, TOPIC)
    decoded = codec.decode(w.FetchRequest, codec.encode(body, version), version)
    assert wire.request_to_core(key, version, decoded, 1, 81, TOPIC).high_watermark == -1
    # not sent at all: the field keeps its default (Long.MAX_VALUE) and is left off the wire
    key, version, body = wire.request_to_wire(REQUESTS[4], TOPIC)
    assert body.topics[0].partitions[0].high_watermark == 2**63 - 1
    assert len(codec.encode(body, version)) < len(codec.encode(wire.request_to_wire(fetch, TOPIC)[2], version))


@pytest.mark.parametrize("resp, req", [RESPONSES[i] for i in (0, 2, 3, 4, 7)], ids=lambda x: type(x).__name__)
def test_raft_responses_name_where_their_leader_listens(resp, req):
    """As Kafka's ``RaftUtil`` builds them: Vote, Begin/EndQuorumEpoch and FetchSnapshot from v1, Fetch from v17,
    carry the leader's endpoint (NodeEndpoints) when they name a leader the responder knows; a Kafka observer that
    joined through ``controller.quorum.bootstrap.servers`` follows the leader there (it knows no voter yet)."""
    key, version, _ = wire.request_to_wire(req, TOPIC)
    body = wire.with_leader_endpoint(wire.response_to_wire(resp, TOPIC), resp, version, ("leaderhost", 9093))
    decoded = codec.decode(w.api(key).response, codec.encode(body, version), version)
    named = [(e.node_id, e.host, e.port) for e in decoded.node_endpoints]
    assert named == ([(resp.leader_id, "leaderhost", 9093)] if resp.leader_id >= 0 else [])
    assert not wire.with_leader_endpoint(wire.response_to_wire(resp, TOPIC), resp, version, None).node_endpoints


def test_a_fetch_before_v17_names_no_leader_endpoint():
    fetch = RESPONSES[4][0]
    assert not wire.with_leader_endpoint(wire.response_to_wire(fetch, TOPIC), fetch, 16, ("h", 1)).node_endpoints


def test_an_empty_session_fetch_is_a_brokers_not_the_quorums():
    """A Kafka replica fetcher's incremental Fetch with nothing changed names no topic: a broker serves it (it was
    refused as a malformed Raft Fetch, 'expected exactly one topic partition, got 0'); Raft's names the log."""
    _key, _version, raft = wire.request_to_wire(REQUESTS[4], TOPIC)
    assert wire.fetches_the_quorum_log(raft, TOPIC)
    assert not wire.fetches_the_quorum_log(w.FetchRequest(topics=[]), TOPIC)
    other = w.FetchRequest(topics=[w.FetchRequest.FetchTopic(topic_id=uuid.UUID(int=9), partitions=[])])
    assert not wire.fetches_the_quorum_log(other, TOPIC)
