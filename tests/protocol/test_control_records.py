"""Control records: hand-derived value goldens (flexible v0), keys, batch builders, decode errors."""

from __future__ import annotations

import uuid

import pytest

from kraftwire.errors import ProtocolError
from kraftwire.ids import ReplicaKey
from kraftwire.protocol import messages as m
from kraftwire.records import control, read_batches


def H(*parts: str) -> bytes:
    return bytes.fromhex("".join(p.replace(" ", "") for p in parts))


DIR_ID = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")
VR = m.VotersRecord

VALUE_GOLDENS = [
    pytest.param(control.LEADER_CHANGE, m.LeaderChangeMessage(leader_id=1, voters=[
        m.LeaderChangeMessage.Voter(voter_id=i) for i in (1, 2, 3)], granting_voters=[
        m.LeaderChangeMessage.Voter(voter_id=i) for i in (1, 2)]), H(
        "0000",                      # Version 0
        "00000001",                  # LeaderId 1
        "04",                        # Voters: compact array of 3
        "00000001 00", "00000002 00", "00000003 00",   # VoterId + tags each (VoterDirectoryId is v1+)
        "03",                        # GrantingVoters: 2
        "00000001 00", "00000002 00",
        "00",                        # tags
    ), id="LeaderChangeMessage"),
    pytest.param(control.SNAPSHOT_HEADER, m.SnapshotHeaderRecord(last_contained_log_timestamp=0x0102030405060708), H(
        "0000",                      # Version 0
        "0102030405060708",          # LastContainedLogTimestamp (int64)
        "00",                        # tags
    ), id="SnapshotHeaderRecord"),
    pytest.param(control.SNAPSHOT_FOOTER, m.SnapshotFooterRecord(), H("0000", "00"), id="SnapshotFooterRecord"),
    pytest.param(control.KRAFT_VERSION, m.KRaftVersionRecord(kraft_version=1), H(
        "0000",                      # Version 0
        "0001",                      # KRaftVersion 1
        "00",
    ), id="KRaftVersionRecord"),
    pytest.param(control.KRAFT_VOTERS, VR(voters=[VR.Voter(voter_id=1, voter_directory_id=DIR_ID, endpoints=[
        VR.Endpoint(name="CONTROLLER", host="localhost", port=9093)],
        kraft_version_feature=VR.KRaftVersionFeature(min_supported_version=0, max_supported_version=1))]), H(
        "0000",                      # Version 0
        "02",                        # Voters: 1
        "00000001",                  #   VoterId 1
        "000102030405060708090a0b0c0d0e0f",  # VoterDirectoryId
        "02",                        #   Endpoints: 1
        "0b 434f4e54524f4c4c4552",   #     Name "CONTROLLER"
        "0a 6c6f63616c686f7374",     #     Host "localhost"
        "2385",                      #     Port 9093 = 0x2385
        "00",                        #     endpoint tags
        "0000 0001 00",              #   KRaftVersionFeature{Min 0, Max 1} + tags
        "00",                        #   voter tags
        "00",                        # tags
    ), id="VotersRecord"),
]


@pytest.mark.parametrize("ctype,message,golden", VALUE_GOLDENS)
def test_control_value_golden(ctype, message, golden):
    assert control.encode_control_value(ctype, message).hex() == golden.hex()
    assert control.decode_control_value(ctype, golden) == message
    assert control.decode_control_record(H("0000", "%04x" % ctype), golden) == (ctype, message)


def test_control_key_layout():
    assert control.control_record_key(control.LEADER_CHANGE) == H("0000 0002")  # int16 version 0, int16 type 2
    assert control.control_record_key(control.KRAFT_VOTERS) == H("0000 0006")
    assert control.KRAFTWIRE_GROUP_OFFSET > 0xFF and control.KRAFTWIRE_GROUP_OFFSET < 0x8000


def test_leader_change_batch_reads_back():
    batch = control.leader_change_batch(1, [1, ReplicaKey(2, DIR_ID), 3], [1, 2], epoch=7, base_offset=42, timestamp=99)
    (b,) = list(read_batches(batch))
    assert b.is_control and b.base_offset == 42 and b.partition_leader_epoch == 7
    (r,) = list(b)
    assert r.timestamp == 99
    ctype, msg = control.decode_control_record(r.key, r.value)
    assert ctype == control.LEADER_CHANGE
    assert msg.leader_id == 1 and [v.voter_id for v in msg.voters] == [1, 2, 3]
    assert [v.voter_id for v in msg.granting_voters] == [1, 2]


def test_snapshot_header_and_footer_batches():
    voters = VR(voters=[VR.Voter(voter_id=1, voter_directory_id=DIR_ID)])
    header = control.snapshot_header_batch(1234, epoch=3, timestamp=5, kraft_version=1, voters=voters)
    (b,) = list(read_batches(header))
    got = [control.decode_control_record(r.key, r.value) for r in b]
    assert [t for t, _ in got] == [control.SNAPSHOT_HEADER, control.KRAFT_VERSION, control.KRAFT_VOTERS]
    assert got[0][1].last_contained_log_timestamp == 1234 and got[1][1].kraft_version == 1 and got[2][1] == voters
    footer = control.snapshot_footer_batch(epoch=3, base_offset=10, timestamp=5)
    (fb,) = list(read_batches(footer))
    assert fb.base_offset == 10
    assert control.decode_control_record(next(iter(fb)).key, next(iter(fb)).value)[0] == control.SNAPSHOT_FOOTER


def test_kraftwire_state_records_round_trip_in_a_batch():
    offset = m.KraftwireGroupOffsetRecord(group_id="g", topic="t", partition=0, offset=10, commit_timestamp=5)
    reg = m.KraftwireBrokerRegistrationRecord(broker_id=1, incarnation_id=DIR_ID, endpoints=[
        m.KraftwireBrokerRegistrationRecord.Endpoint(name="PLAINTEXT", host="h", port=9092)])
    batch = control.control_batch([(control.KRAFTWIRE_GROUP_OFFSET, offset),
                                   (control.KRAFTWIRE_BROKER_REGISTRATION, reg)], epoch=1, timestamp=0)
    (b,) = list(read_batches(batch))
    assert [control.decode_control_record(r.key, r.value) for r in b] == [
        (control.KRAFTWIRE_GROUP_OFFSET, offset), (control.KRAFTWIRE_BROKER_REGISTRATION, reg)]


@pytest.mark.parametrize("key,value,problem", [
    (None, b"\x00\x00\x00", "key"),
    (b"\x00", b"\x00\x00\x00", "key"),
    (H("0000 0063"), b"\x00\x00\x00", "unknown control record type 99"),
    (H("0000 0002"), None, "null"),
    (H("0000 0002"), b"\x00", "too short"),
    (H("0000 0004"), b"\x00\x07\x00", "unsupported value version 7"),
    (H("0000 0004"), b"\x00\x00\x00\xff", "trailing"),
    (H("0000 0002"), b"\x00\x00\x00\x00\x00\x01\x05", "past the end"),
])
def test_bad_control_records_raise_protocol_error(key, value, problem):
    with pytest.raises(ProtocolError, match=problem):
        control.decode_control_record(key, value)


def test_wrong_message_for_type_is_rejected():
    with pytest.raises(ProtocolError):
        control.encode_control_value(control.LEADER_CHANGE, m.SnapshotFooterRecord())
    with pytest.raises(ProtocolError):
        control.control_batch([], epoch=1)
