"""Golden vectors derived by hand from the RecordBatch v2 layout (kraft-facts §6), not from our encoder.

Each vector is spelled out field by field. The CRC-32C constants were computed once with the
independent ``crc32c`` package over bytes [21, end) and pasted; a test re-checks them.
"""

from __future__ import annotations

import crc32c
import pytest

from kraftwire.records import api

# Two records, uncompressed, CreateTime, base offset 0, partition leader epoch 5.
GOLDEN_PLAIN = bytes.fromhex(
    "0000000000000000"  # BaseOffset 0
    "00000048"  # Length 72 = 84 - 12
    "00000005"  # PartitionLeaderEpoch 5
    "02"  # Magic 2
    "55a63c0b"  # CRC-32C over [21, 84)
    "0000"  # Attributes: no compression, CreateTime, not transactional, not control
    "00000001"  # LastOffsetDelta 1
    "0000018bcfe56800"  # BaseTimestamp 1700000000000
    "0000018bcfe56801"  # MaxTimestamp 1700000000001
    "ffffffffffffffff"  # ProducerId -1
    "ffff"  # ProducerEpoch -1
    "ffffffff"  # BaseSequence -1
    "00000002"  # RecordsCount 2
    # record 0: length 12 (zigzag 0x18) | attrs 0 | ts delta 0 | offset delta 0 | key len 1 (0x02) "k"
    #           | value len 5 (0x0a) "hello" | 0 headers
    "18" "00" "00" "00" "02" "6b" "0a" "68656c6c6f" "00"
    # record 1: length 9 (0x12) | attrs 0 | ts delta +1 (0x02) | offset delta 1 (0x02) | key null (0x01)
    #           | value len 0 (0x00) | 1 header (0x02): key len 1 (0x02) "h", value null (0x01)
    "12" "00" "02" "02" "01" "00" "02" "02" "68" "01"
)  # fmt: skip

# A control batch (LeaderChange key) with one record at offset 41, epoch 7.
GOLDEN_CONTROL = bytes.fromhex(
    "0000000000000029"  # BaseOffset 41
    "00000040"  # Length 64 = 76 - 12
    "00000007"  # PartitionLeaderEpoch 7
    "02"  # Magic
    "866a5308"  # CRC-32C
    "0020"  # Attributes: control bit (0x20)
    "00000000"  # LastOffsetDelta 0
    "00000000000003e8"  # BaseTimestamp 1000
    "00000000000003e8"  # MaxTimestamp 1000
    "ffffffffffffffff" "ffff" "ffffffff"  # no producer
    "00000001"  # RecordsCount 1
    # record: length 14 (0x1c) | attrs | ts delta 0 | offset delta 0 | key len 4 (0x08) = version 0, type 2
    #         (LEADER_CHANGE) | value len 4 (0x08) 00010203 | 0 headers
    "1c" "00" "00" "00" "08" "00000002" "08" "00010203" "00"
)  # fmt: skip

# Multi-byte varints, a negative timestamp delta, a transactional producer batch.
GOLDEN_VARINTS = bytes.fromhex(
    "0000000000000064"  # BaseOffset 100
    "00000109"  # Length 265 = 277 - 12
    "ffffffff"  # PartitionLeaderEpoch -1
    "02"
    "ce62a5f2"  # CRC-32C
    "0010"  # Attributes: transactional (0x10)
    "00000001"  # LastOffsetDelta 1
    "00000000000003e8"  # BaseTimestamp 1000
    "00000000000003e8"  # MaxTimestamp 1000 (record 1 is older)
    "0000000000000007"  # ProducerId 7
    "0001"  # ProducerEpoch 1
    "00000000"  # BaseSequence 0
    "00000002"  # RecordsCount 2
    # record 0: length 207 -> zigzag 414 = 0x19e -> varint 9e 03 | attrs | ts 0 | offset 0 | key null
    #           | value len 200 -> zigzag 400 = 0x190 -> varint 90 03 | 200 x 'a' | 0 headers
    "9e03" "00" "00" "00" "01" "9003" + "61" * 200 + "00"
    # record 1: length 6 (0x0c) | attrs | ts delta -1 (zigzag 0x01) | offset 1 (0x02) | key null | value null | 0 headers
    "0c" "00" "01" "02" "01" "01" "00"
)  # fmt: skip

EXPECTED = {
    "plain": [(0, 1700000000000, b"k", b"hello", []), (1, 1700000000001, None, b"", [("h", None)])],
    "control": [(41, 1000, bytes.fromhex("00000002"), bytes.fromhex("00010203"), [])],
    "varints": [(100, 1000, None, b"a" * 200, []), (101, 999, None, None, [])],
}
VECTORS = {"plain": GOLDEN_PLAIN, "control": GOLDEN_CONTROL, "varints": GOLDEN_VARINTS}


@pytest.mark.parametrize("name", VECTORS)
def test_golden_crc_constants_are_right(name):
    v = VECTORS[name]
    assert int.from_bytes(v[api.CRC_POS : api.CRC_POS + 4], "big") == crc32c.crc32c(v[api.CRC_START :])
    assert int.from_bytes(v[api.LENGTH_POS : api.LENGTH_POS + 4], "big") + api.LOG_OVERHEAD == len(v)


@pytest.mark.parametrize("name", VECTORS)
def test_golden_decodes(codec, name):
    (batch,) = list(codec.read_batches(VECTORS[name]))
    assert [tuple(r) for r in batch] == EXPECTED[name]
    assert batch.magic == 2 and batch.size_in_bytes == len(VECTORS[name])
    assert codec.validate_batches(VECTORS[name]).valid_bytes == len(VECTORS[name])


def test_golden_header_fields(codec):
    (b,) = list(codec.read_batches(GOLDEN_PLAIN))
    assert (b.base_offset, b.last_offset, b.partition_leader_epoch, b.crc, b.attributes) == (0, 1, 5, 0x55A63C0B, 0)
    assert (b.base_timestamp, b.max_timestamp, b.producer_id, b.producer_epoch, b.base_sequence) == (
        1700000000000, 1700000000001, -1, -1, -1)
    assert (b.compression, b.is_control, b.is_transactional, b.timestamp_type, b.record_count) == ("none", False, False, 0, 2)
    (c,) = list(codec.read_batches(GOLDEN_CONTROL))
    assert c.is_control and c.partition_leader_epoch == 7 and c.base_offset == 41
    (v,) = list(codec.read_batches(GOLDEN_VARINTS))
    assert v.is_transactional and (v.producer_id, v.producer_epoch, v.base_sequence) == (7, 1, 0)


def test_builder_reproduces_the_golden_bytes(codec):
    b = codec.RecordBatchBuilder(partition_leader_epoch=5)
    assert b.append(b"k", b"hello", timestamp=1700000000000) == 0
    assert b.append(None, b"", [("h", None)], timestamp=1700000000001) == 1
    assert b.build() == GOLDEN_PLAIN

    c = codec.RecordBatchBuilder(base_offset=41, partition_leader_epoch=7, is_control=True)
    c.append(api.control_key(api.CONTROL_LEADER_CHANGE), bytes.fromhex("00010203"), timestamp=1000)
    assert c.build() == GOLDEN_CONTROL

    v = codec.RecordBatchBuilder(base_offset=100, is_transactional=True, producer_id=7, producer_epoch=1, base_sequence=0)
    v.append(None, b"a" * 200, timestamp=1000)
    assert v.append(None, None, timestamp=999) == 101
    assert v.build() == GOLDEN_VARINTS


def test_log_append_time_uses_max_timestamp(codec):
    buf = bytearray(GOLDEN_PLAIN)
    buf[api.ATTRIBUTES_POS + 1] |= api.TIMESTAMP_TYPE_MASK
    from_crc = crc32c.crc32c(bytes(buf[api.CRC_START :]))
    buf[api.CRC_POS : api.CRC_POS + 4] = from_crc.to_bytes(4, "big")
    (batch,) = list(codec.read_batches(bytes(buf)))
    assert batch.timestamp_type == 1
    assert [r.timestamp for r in batch] == [1700000000001, 1700000000001]
