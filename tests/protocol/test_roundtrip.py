"""Every declared message round-trips at every version with hypothesis-generated values."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire.protocol import codec, messages
from kraftwire.protocol import messages as m

from harness.messages import message_strategy


def _cases():
    for name, cls in messages.MESSAGES.items():
        lo, hi = cls.VALID_VERSIONS
        for v in range(lo, hi + 1):
            yield pytest.param(name, v, id=f"{name}-v{v}")


@pytest.mark.parametrize("name,version", list(_cases()))
@settings(max_examples=25, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_round_trip(name, version, data):
    cls = messages.get(name)
    msg = data.draw(message_strategy(cls, version))
    wire = codec.encode(msg, version)
    back = codec.decode(cls, wire, version)
    assert back == msg
    assert codec.encode(back, version) == wire
    # the chunked form is the same bytes
    assert b"".join(codec.encode_chunks(msg, version)) == wire


def test_every_requested_range_is_declared():
    want = {
        # Kafka 4.4.0's ranges; Produce keeps v0-2, which Kafka 4 advertises and refuses (KAFKA-18659)
        "ApiVersions": (0, 5), "Metadata": (0, 13), "Produce": (0, 13), "Fetch": (4, 18), "ListOffsets": (1, 11),
        "FindCoordinator": (0, 6), "InitProducerId": (0, 6), "DescribeCluster": (0, 2), "Vote": (0, 2),
        "BeginQuorumEpoch": (0, 1), "EndQuorumEpoch": (0, 1), "DescribeQuorum": (0, 2), "FetchSnapshot": (0, 1),
        "AddRaftVoter": (0, 1), "RemoveRaftVoter": (0, 0), "UpdateRaftVoter": (0, 0), "JoinGroup": (0, 9),
        "SyncGroup": (0, 5), "Heartbeat": (0, 4), "LeaveGroup": (0, 5), "OffsetCommit": (2, 10), "OffsetFetch": (1, 10),
    }
    for name, rng in want.items():
        assert messages.api(name).valid_versions == rng, name
    for name in ("RequestHeader", "ResponseHeader", "LeaderChangeMessage", "SnapshotHeaderRecord",
                 "SnapshotFooterRecord", "KRaftVersionRecord", "VotersRecord", "QuorumStateData",
                 "KraftwireGroupOffsetRecord", "KraftwireGroupGenerationRecord", "KraftwireBrokerRegistrationRecord"):
        assert messages.get(name)
    assert messages.get("KraftwireGroupOffsetRecord").KRAFTWIRE_SPECIFIC
    assert not messages.get("VotersRecord").KRAFTWIRE_SPECIFIC


def test_vote_v2_pre_vote_is_the_last_partition_field():
    part = messages.VoteRequest.PartitionData
    assert [f.attr for f in part._info.fields][-1] == "pre_vote"
    p = part(partition_index=0, replica_epoch=5, replica_id=1, last_offset_epoch=4, last_offset=10, pre_vote=True)
    req = messages.VoteRequest(cluster_id="c", voter_id=2, topics=[messages.VoteRequest.TopicData(topic_name="t", partitions=[p])])
    v1, v2 = codec.encode(req, 1), codec.encode(req, 2)
    # v2 = v1 with one extra byte (PreVote=1) just before the partition's and topic's tag sections (2 bytes) + top-level tags (1)
    assert v2[:-4] == v1[:-3] and v2[-4:] == b"\x01\x00\x00\x00"
    assert codec.decode(messages.VoteRequest, v2, 2).topics[0].partitions[0].pre_vote is True
    assert codec.decode(messages.VoteRequest, v1, 1).topics[0].partitions[0].pre_vote is False


def test_construction_defaults_and_snake_case():
    m = messages
    r = m.FetchResponse()
    assert r.responses == [] and r.session_id == 0 and r.node_endpoints == []
    p = m.FetchResponse.PartitionData(partition_index=3)
    assert p.last_stable_offset == -1 and p.records is None and p.diverging_epoch.epoch == -1
    assert m.FetchResponse.PartitionData() is not m.FetchResponse.PartitionData()
    assert m.FetchResponse.PartitionData().aborted_transactions is not m.FetchResponse.PartitionData().aborted_transactions
    assert m.UpdateRaftVoterRequest().kraft_version_feature.max_supported_version == 0
    with pytest.raises(TypeError):
        m.FetchResponse(no_such_field=1)
    with pytest.raises(TypeError):
        m.FetchResponse(0)  # keyword-only


def test_unknown_tags_are_preserved_and_can_be_dropped():
    from kraftwire.protocol import wire_types as wt

    msg = messages.SnapshotFooterRecord(version=0)
    base = codec.encode(msg, 0)
    assert base == b"\x00\x00\x00"
    # add tag 7 (2 bytes) and tag 3 (1 byte), out of order on purpose in the dict
    wire = b"\x00\x00" + b"\x02" + b"\x03\x01\xaa" + b"\x07\x02\xbb\xcc"
    dec = codec.decode(messages.SnapshotFooterRecord, wire, 0)
    assert dec._unknown_tags == {3: b"\xaa", 7: b"\xbb\xcc"}
    assert codec.encode(dec, 0) == wire
    dec._unknown_tags = None
    assert codec.encode(dec, 0) == base
    assert wt.uvarint_bytes(300) == b"\xac\x02"


@pytest.mark.parametrize("length", [0, 1, 126, 127, 128, 300, 20000])
def test_length_boundaries_of_strings_and_arrays(length):
    """Compact lengths switch from one to two varint bytes at 127 (length + 1 = 128): both paths decode."""
    name = "é" * (length // 2) + "x" * (length % 2)
    for version in (0, 9, 12):  # classic and flexible Metadata requests
        R = m.MetadataRequest
        msg = R(topics=[R.MetadataRequestTopic(name=name)] * min(length, 300))
        assert codec.decode(R, codec.encode(msg, version), version) == msg
    F = m.FetchRequest
    msg = F(topics=[F.FetchTopic(topic=name, partitions=[F.FetchPartition(partition=i) for i in range(length % 400)])])
    for version in (4, 12):
        assert codec.decode(F, codec.encode(msg, version), version) == msg
    E = m.EndQuorumEpochRequest
    msg = E(topics=[E.TopicData(partitions=[E.PartitionData(preferred_successors=list(range(length)))])])
    assert codec.decode(E, codec.encode(msg, 0), 0) == msg
