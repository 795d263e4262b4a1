"""Kafka's byte layout of ``__consumer_offsets`` records and Java's String.hashCode partitioning."""

from __future__ import annotations

import pytest

from kraftwire.coordinator import records as r
from kraftwire.coordinator.partitioning import java_abs, java_string_hash, partition_for
from kraftwire.protocol import messages as m


@pytest.mark.parametrize("s,h", [
    ("", 0),
    ("a", 97),
    ("hello", 99162322),
    ("console-consumer-12345", java_string_hash("console-consumer-12345")),
    ("polygenelubricants", -2147483648),  # Integer.MIN_VALUE: Utils.abs makes it 0
    ("é", 233),
    ("日本", 26085 * 31 + 26412),
    ("\U0001D11E", 0xD834 * 31 + 0xDD1E),  # outside the BMP: two UTF-16 code units
])
def test_java_string_hash_goldens(s, h):
    assert java_string_hash(s) == h


def test_hash_wraps_as_a_signed_int32():
    # "zzzzzzzz" overflows many times over; Java's value is -1604951558... checked by recomputing with int32 wrap
    h = 0
    for ch in "zzzzzzzz":
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    assert java_string_hash("zzzzzzzz") == (h - 2**32 if h >= 2**31 else h)
    assert -2**31 <= java_string_hash("zzzzzzzz") < 2**31


def test_partition_for_uses_utils_abs():
    assert java_abs(-2147483648) == 0 and java_abs(-5) == 5
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("hello", 50) == 99162322 % 50
    # a negative hash: Math.abs, not Python's modulo of a negative number
    neg = next(s for s in (f"consumer-group-{i}" for i in range(1000)) if java_string_hash(s) < 0)
    assert partition_for(neg, 50) == (-java_string_hash(neg)) % 50
    with pytest.raises(ValueError):
        partition_for("g", 0)


def test_offset_commit_record_bytes():
    key = r.offset_commit_key("g", "t", 3)
    # int16 type 1, then group "g", topic "t" (int16 lengths), partition int32
    assert key.hex() == "0001" + "0001" + "67" + "0001" + "74" + "00000003"
    value = r.offset_commit_value(42, 5, "m", 1000)
    # int16 version 3, offset int64, leader epoch int32, metadata, commit timestamp int64
    assert value.hex() == "0003" + "000000000000002a" + "00000005" + "0001" + "6d" + "00000000000003e8"
    rec = r.decode(key, value)
    assert rec.record_type == 1 and rec.value_version == 3
    assert (rec.key.group, rec.key.topic, rec.key.partition) == ("g", "t", 3)
    assert (rec.value.offset, rec.value.leader_epoch, rec.value.metadata, rec.value.commit_timestamp) == (
        42, 5, "m", 1000)


def test_an_explicit_expiry_is_written_at_value_version_1():
    value = r.offset_commit_value(7, -1, "", 1000, expire_timestamp=2000)
    assert value[:2] == b"\x00\x01"
    rec = r.decode(r.offset_commit_key("g", "t", 0), value)
    assert rec.value.expire_timestamp == 2000 and rec.value_version == 1


def test_kafka_type_0_offset_key_is_read_too():
    """Type 0 is Kafka's legacy offset commit (``LegacyOffsetCommitKey``/``Value``): the same key fields, value v0."""
    key = r.encode_key(m.LegacyOffsetCommitKey(group="g", topic="t", partition=0), 0)
    assert key == b"\x00\x00" + r.offset_commit_key("g", "t", 0)[2:]
    assert r.decode(key, None) == r.CoordinatorRecord(0, m.LegacyOffsetCommitKey(group="g", topic="t", partition=0),
                                                      None)
    value = r.encode_value(m.LegacyOffsetCommitValue(offset=42, metadata="m", commit_timestamp=1000), 0)
    rec = r.decode(key, value)
    assert (rec.value.offset, rec.value.metadata, rec.value.commit_timestamp, rec.value_version) == (42, "m", 1000, 0)
    with pytest.raises(r.CoordinatorRecordError, match="LegacyOffsetCommitValue version 1 is not supported"):
        r.decode(key, b"\x00\x01" + value[2:])


def test_group_metadata_record_round_trip():
    M = m.GroupMetadataValue
    value = M(protocol_type="consumer", generation=4, protocol="range", leader="a", current_state_timestamp=99,
              members=[M.MemberMetadata(member_id="a", group_instance_id="i", client_id="c", client_host="/1.2.3.4",
                                        rebalance_timeout=300000, session_timeout=45000, subscription=b"s",
                                        assignment=b"x")])
    key = r.group_metadata_key("grp")
    assert key.hex() == "0002" + "0003" + b"grp".hex()
    raw = r.group_metadata_value(value)
    assert raw[:2] == b"\x00\x03"
    rec = r.decode(key, raw)
    assert rec.record_type == 2 and rec.value == value


def test_every_group_record_type_has_its_key_and_value():
    # Kafka 4.4.0's group coordinator records: 9 and 18 (share and streams group partition metadata) are gone
    assert sorted(r.GROUP_RECORDS) == [t for t in range(24) if t not in (9, 18)]
    assert r.GROUP_RECORDS[0] == (m.LegacyOffsetCommitKey, m.LegacyOffsetCommitValue)
    assert r.GROUP_RECORDS[1] == (m.OffsetCommitKey, m.OffsetCommitValue)
    assert r.GROUP_RECORDS[2][0] is m.GroupMetadataKey and r.GROUP_RECORDS[3][0] is m.ConsumerGroupMetadataKey
    assert r.TRANSACTION_RECORDS == {0: (m.TransactionLogKey, m.TransactionLogValue)}


@pytest.mark.parametrize("key,value,why", [
    (None, None, "at least 2 bytes"),
    (b"\x00", None, "at least 2 bytes"),
    (b"\x00\x63", None, "unknown coordinator record type 99"),
    (b"\x00\x01\x00\x05g", None, "malformed OffsetCommitKey"),
    (bytes.fromhex("000100016700017400000003"), b"\x00", "too short"),
    (bytes.fromhex("000100016700017400000003"), b"\x00\x09", "version 9 is not supported"),
    (bytes.fromhex("000100016700017400000003"), b"\x00\x03\x00", "malformed OffsetCommitValue"),
    (bytes.fromhex("000100016700017400000003") + b"\x00", None, "malformed OffsetCommitKey"),
])
def test_bad_records_are_refused_with_the_reason(key, value, why):
    with pytest.raises(r.CoordinatorRecordError, match=why):
        r.decode(key, value)


def test_a_nullable_tagged_struct_is_left_out_when_null_and_marked_when_present():
    V = m.ConsumerGroupMemberMetadataValue
    from kraftwire.protocol import codec

    bare = V(instance_id=None, rack_id=None, client_id="c", client_host="h", subscribed_topic_names=["t"],
             rebalance_timeout_ms=1, server_assignor=None)
    assert bare.classic_member_metadata is None
    raw = codec.encode(bare, 0)
    assert raw.endswith(b"\x00")  # no tagged fields at all
    assert codec.decode(V, raw, 0).classic_member_metadata is None
    C = V.ClassicMemberMetadata
    full = V(client_id="c", client_host="h", subscribed_topic_names=["t"], rebalance_timeout_ms=1,
             classic_member_metadata=C(session_timeout_ms=10, supported_protocols=[]))
    raw = codec.encode(full, 0)
    back = codec.decode(V, raw, 0)
    assert back.classic_member_metadata.session_timeout_ms == 10
    # one tagged field, tag 0, 7 bytes: int8 1, then the struct (int32 10, an empty compact array, no tags)
    assert raw.endswith(bytes.fromhex("01" + "00" + "07" + "01" + "0000000a" + "01" + "00"))
