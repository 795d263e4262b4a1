"""SegmentedLog on disk: byte-exact index files, Kafka compatibility, rolling, locks, snapshots files, retention."""

from __future__ import annotations

import os
import stat
import struct
import uuid

import pytest

from kraftwire.config import Config
from kraftwire.errors import LogError, LogLockedError
from kraftwire.ids import PERFORMANCE_TEST_TOPIC_ID, SnapshotId
from kraftwire.log.segmented import CLEAN_SHUTDOWN, SegmentedLog, partition_dir
from kraftwire.records import RecordBatchBuilder, control_key, read_batches, CONTROL_SNAPSHOT_HEADER


def one_record_batch(value_size: int, timestamp: int, epoch: int = 1) -> bytes:
    b = RecordBatchBuilder(partition_leader_epoch=epoch)
    b.append(None, b"x" * value_size, timestamp=timestamp)
    return b.build()


def files(d) -> list[str]:
    return sorted(n for n in os.listdir(d) if not n.startswith("."))


def test_layout_of_a_new_log(tmp_path):
    d = tmp_path / "__cluster_metadata-0"
    log = SegmentedLog(str(d))
    log.append_as_leader(one_record_batch(10, 1000), 1)
    log.flush()
    log.close()
    assert files(d) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "clean-shutdown",
        "high-watermark-checkpoint",
        "leader-epoch-checkpoint",
        "partition.metadata",
        "recovery-point-offset-checkpoint",
    ]
    assert (d / "leader-epoch-checkpoint").read_bytes() == b"0\n1\n1 0\n"
    assert (d / "partition.metadata").read_bytes() == b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    assert (d / "high-watermark-checkpoint").read_bytes() == b"0\n1\n__cluster_metadata 0 0\n"
    assert os.path.exists(d / ".lock")
    log = SegmentedLog(str(d))
    assert not os.path.exists(d / CLEAN_SHUTDOWN)  # removed while the log is open
    log.close()


def test_index_and_timeindex_are_byte_exact(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d))
    batch0 = one_record_batch(930, 5000)
    assert len(batch0) == 1000  # 61 header + 939 record bytes: positions are multiples of 1000
    for k in range(12):
        log.append_as_leader(one_record_batch(930, 5000 + k), 1)
    log.close()
    # An entry when more than 4096 bytes were written since the last one: batches 5 and 10 (Kafka's rule),
    # mapping the batch's last offset (relative) to its position.
    assert (d / "00000000000000000000.index").read_bytes() == (
        b"\x00\x00\x00\x05\x00\x00\x13\x88"  # offset 5 @ 5000
        b"\x00\x00\x00\x0a\x00\x00\x27\x10"  # offset 10 @ 10000
    )
    # Time index: (max timestamp so far, its offset) with each index entry, plus one when the segment closes.
    assert (d / "00000000000000000000.timeindex").read_bytes() == (
        struct.pack(">qi", 5005, 5) + struct.pack(">qi", 5010, 10) + struct.pack(">qi", 5011, 11)
    )


def test_rebuilt_indexes_equal_written_ones(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d), segment_bytes=20_000, index_interval_bytes=1500)
    for k in range(60):
        log.append_as_leader(one_record_batch(100 + 37 * (k % 11), 10_000 + k), 1 + k // 20)
    log.close()
    written = {n: (d / n).read_bytes() for n in files(d) if n.endswith(("index", "timeindex"))}
    assert len(written) >= 4  # several segments
    for n in written:
        os.unlink(d / n)
    (d / "00000000000000000000.log").chmod(0o644)
    log = SegmentedLog(str(d), segment_bytes=20_000, index_interval_bytes=1500)  # clean open, indexes missing
    assert log.end_offset() == 60
    log.close()
    assert {n: (d / n).read_bytes() for n in written} == written
    # Garbage index files are detected and rebuilt too.
    victim = sorted(written)[0]
    (d / victim).write_bytes(b"\xff" * 8)
    log = SegmentedLog(str(d), segment_bytes=20_000, index_interval_bytes=1500)
    assert len(log.read(0, 1 << 20).records) > 0
    log.close()
    assert (d / victim).read_bytes() == written[victim]


def test_segment_decodes_with_kafka_python(tmp_path):
    from kafka.record import MemoryRecords

    d = tmp_path / "t-0"
    log = SegmentedLog(str(d))
    b = RecordBatchBuilder(base_offset=999)
    for i in range(5):
        b.append(b"key%d" % i, b"value%d" % i, headers=[("h", b"v")], timestamp=1_700_000_000_000 + i)
    log.append_as_leader(b.build(), 3)
    log.append_as_leader(one_record_batch(20, 1_700_000_000_100), 4)
    log.close()
    records = MemoryRecords((d / "00000000000000000000.log").read_bytes())
    seen = []
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        for r in batch:
            seen.append((batch.base_offset, r.offset, r.key, r.value, batch.leader_epoch))
    assert [s[1] for s in seen] == [0, 1, 2, 3, 4, 5]
    assert [s[4] for s in seen] == [3, 3, 3, 3, 3, 4]
    assert seen[0][2:4] == (b"key0", b"value0")
    assert seen[5][3] == b"x" * 20
    assert [s[0] for s in seen] == [0, 0, 0, 0, 0, 5]


def test_roll_by_size_and_time(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d), segment_bytes=2500, segment_ms=1000)
    for k in range(5):
        log.append_as_leader(one_record_batch(930, 0 + k), 1)  # 1000 bytes each: two per segment
    assert log.segment_base_offsets() == [0, 2, 4]
    log.append_as_leader(one_record_batch(10, 400), 1)  # fits, and 400 ms after the segment's first batch
    log.append_as_leader(one_record_batch(10, 1004), 1)  # 1000 ms after batch 4: time to roll
    assert log.segment_base_offsets() == [0, 2, 4, 6]
    log.close()
    assert [n for n in files(d) if n.endswith(".log")] == [
        "00000000000000000000.log",
        "00000000000000000002.log",
        "00000000000000000004.log",
        "00000000000000000006.log",
    ]


def test_lock_refuses_a_second_opener(tmp_path):
    d = str(tmp_path / "t-0")
    log = SegmentedLog(d)
    with pytest.raises(LogLockedError):
        SegmentedLog(d)
    log.close()
    SegmentedLog(d).close()


def test_topic_id_is_recorded_and_checked(tmp_path):
    d = str(tmp_path / "__raft_performance_test-0")
    SegmentedLog(d, topic_id=PERFORMANCE_TEST_TOPIC_ID).close()
    log = SegmentedLog(d)
    assert log.topic_id == PERFORMANCE_TEST_TOPIC_ID
    log.close()
    with pytest.raises(LogError):
        SegmentedLog(d, topic_id=uuid.UUID(int=7))


def test_partition_dir_from_config(tmp_path):
    c = Config.from_properties({"log.dirs": f"{tmp_path}/a,{tmp_path}/b", "metadata.log.segment.bytes": "9000000"})
    assert partition_dir(c) == f"{tmp_path}/a/__cluster_metadata-0"
    log = SegmentedLog.from_config(c)
    assert log.segment_bytes == 9_000_000 and log.directory == f"{tmp_path}/a/__cluster_metadata-0"
    log.close()


def snapshot_bytes(timestamp: int) -> bytes:
    header = RecordBatchBuilder(is_control=True)
    header.append(control_key(CONTROL_SNAPSHOT_HEADER), struct.pack(">hqb", 0, timestamp, 0), timestamp=timestamp)
    return header.build()


def test_snapshot_files(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d))
    for k in range(4):
        log.append_as_leader(one_record_batch(10, k), 1)
    log.update_high_watermark(4)
    w = log.create_new_snapshot(SnapshotId(2, 1))
    w.append(snapshot_bytes(123))
    parts = [n for n in files(d) if n.endswith(".checkpoint.part")]
    assert len(parts) == 1 and parts[0].startswith("00000000000000000002-0000000001-")
    w.freeze()
    name = "00000000000000000002-0000000001.checkpoint"
    assert name in files(d) and not any(n.endswith(".part") for n in files(d))
    assert not os.stat(d / name).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)  # frozen read-only
    assert log.snapshot_timestamp(SnapshotId(2, 1)) == 123
    w2 = log.create_new_snapshot(SnapshotId(4, 1))
    w2.append(b"abandoned")
    w2.close()
    assert not any(n.endswith(".part") for n in files(d))
    # Stray files from a crash are cleaned up at open.
    log._simulate_power_loss()
    (d / "00000000000000000004-0000000001-99.checkpoint.part").write_bytes(b"junk")
    (d / "00000000000000000001-0000000001.checkpoint.deleted").write_bytes(b"junk")
    log = SegmentedLog(str(d))
    assert list(log.snapshot_ids()) == [SnapshotId(2, 1)]
    assert [n for n in files(d) if "checkpoint" in n and n != "leader-epoch-checkpoint" and "offset" not in n
            and n != "high-watermark-checkpoint"] == [name]
    log.close()


def test_delete_before_snapshot_deletes_whole_segments_only(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d), segment_bytes=2500)
    for k in range(9):
        log.append_as_leader(one_record_batch(930, k), 1)  # segments [0,1] [2,3] [4,5] [6,7] [8]
    log.update_high_watermark(9)
    for end in (3, 5):
        w = log.create_new_snapshot(SnapshotId(end, 1))
        w.append(snapshot_bytes(end))
        w.freeze()
    assert log.delete_before_snapshot(SnapshotId(5, 1))
    assert log.start_offset() == 5
    assert log.segment_base_offsets() == [4, 6, 8]  # segment 4 holds offset 4 < 5 but also 5: kept whole
    assert not (d / "00000000000000000003-0000000001.checkpoint").exists()
    log.close()
    log = SegmentedLog(str(d), segment_bytes=2500)
    assert log.start_offset() == 5  # from log-start-offset-checkpoint, not the first segment's base
    assert log.read(5, 1 << 20).start_offset == 5
    log.close()


def test_retention_by_size_and_time_keeps_the_latest_snapshot(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d), segment_bytes=2500, retention_bytes=3000, retention_ms=-1)
    for k in range(10):
        log.append_as_leader(one_record_batch(930, k), 1)
    log.update_high_watermark(10)
    for end in (2, 4, 6):
        w = log.create_new_snapshot(SnapshotId(end, 1))
        w.append(snapshot_bytes(1000 * end))
        w.freeze()
    assert log.maybe_clean(now_ms=10_000)
    assert list(log.snapshot_ids()) == [SnapshotId(6, 1)]  # the latest snapshot is never deleted
    assert log.start_offset() == 6 and log.segment_base_offsets()[0] == 6
    log.close()

    d2 = tmp_path / "u-0"
    log = SegmentedLog(str(d2), segment_bytes=2500, retention_bytes=-1, retention_ms=5000)
    for k in range(10):
        log.append_as_leader(one_record_batch(930, k), 1)
    log.update_high_watermark(10)
    for end, ts in ((2, 1000), (4, 2000), (6, 9000)):
        w = log.create_new_snapshot(SnapshotId(end, 1))
        w.append(snapshot_bytes(ts))
        w.freeze()
    assert log.maybe_clean(now_ms=8000)  # snapshot 2 (ts 1000) and 4 (ts 2000) are older than 5 s
    assert list(log.snapshot_ids()) == [SnapshotId(6, 1)]
    assert not log.maybe_clean(now_ms=8000)
    log.close()


def test_reads_are_immutable_bytes_across_truncation(tmp_path):
    log = SegmentedLog(str(tmp_path / "t-0"))
    for k in range(3):
        log.append_as_leader(one_record_batch(50, k), 1)
    r = log.read(0, 1 << 20)
    assert isinstance(r.records, bytes)
    snapshot = bytes(r.records)
    log.truncate_to(1)
    log.append_as_leader(one_record_batch(70, 9), 2)
    assert r.records == snapshot
    assert [b.base_offset for b in read_batches(log.read(0, 1 << 20).records)] == [0, 1]
    log.close()


def test_batches_written_by_kafka_python_are_stored_and_served_unchanged(tmp_path):
    from kafka.record.default_records import DefaultRecordBatchBuilder

    def kafka_batch(codec: int) -> bytes:
        b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                      producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        for i in range(4):
            b.append(i, timestamp=1_700_000_000_000 + i, key=b"k%d" % i, value=b"payload-%d" % i * 5, headers=[])
        return bytes(b.build())

    log = SegmentedLog(str(tmp_path / "t-0"))
    sent = [kafka_batch(0), kafka_batch(1)]  # uncompressed and gzip
    for data in sent:
        log.append_as_leader(data, 2)
    served = log.read(0, 1 << 20).records
    batches = list(read_batches(served))
    assert [(b.base_offset, b.last_offset, b.partition_leader_epoch, b.compression) for b in batches] == [
        (0, 3, 2, "none"), (4, 7, 2, "gzip")]
    # Byte for byte what the client sent, apart from the base offset and leader epoch the leader stamps.
    for b, original in zip(batches, sent):
        assert bytes(b.buffer)[16:] == original[16:] and bytes(b.buffer)[8:12] == original[8:12]
    assert [r.value for r in batches[1]] == [b"payload-%d" % i * 5 for i in range(4)]
    log.close()


def test_locate_through_the_tail_positions_agrees_with_a_header_scan(tmp_path, monkeypatch):
    """The latest batches' positions are kept in memory (trimmed as the segment grows, rebuilt after truncation):
    every offset must be found at exactly the batch a scan of the headers finds."""
    from kraftwire.log import segment as seg
    from kraftwire.records import validate_batches

    monkeypatch.setattr(seg, "TAIL_BATCHES", 8)  # trim often
    s = seg.LogSegment(str(tmp_path), 0, index_interval_bytes=300, create=True)
    offset = 0
    for i in range(60):
        count = 1 + i % 4
        b = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=1)
        for j in range(count):
            b.append(None, b"v" * (20 + j), timestamp=i)
        data = b.build()
        v = validate_batches(data)
        s.append(data, v.batches, [i])
        offset += count

    def scanned(o):
        for base, last, _e, pos, _size, _ts in s.scan_headers(0, s.size):
            if last >= o:
                return pos, base
        return s.size, s.next_offset

    for o in range(offset + 3):
        assert s.locate(o) == scanned(o), o
    s.truncate_to(offset // 2)
    for o in range(offset + 3):
        assert s.locate(o) == scanned(o), o
    s.close()
