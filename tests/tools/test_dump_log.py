"""``kraftwire dump-log``: text and JSON output for segments, snapshots and indexes; corrupt tails reported."""

from __future__ import annotations

import json
import uuid

from kraftwire.cli import main
from kraftwire.ids import SnapshotId
from kraftwire.log.segmented import SegmentedLog
from kraftwire.metadata import version as mv
from kraftwire.metadata.bootstrap import bootstrap_records, encode_bootstrap_file, metadata_batches
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import codec
from kraftwire.protocol import messages as m
from kraftwire.records import RecordBatchBuilder, control_key

SEG = "00000000000000000000.log"


def build_log(d):
    log = SegmentedLog(str(d))
    lc = m.LeaderChangeMessage(
        version=0, leader_id=1,
        voters=[m.LeaderChangeMessage.Voter(voter_id=1)], granting_voters=[m.LeaderChangeMessage.Voter(voter_id=1)],
    )
    b = RecordBatchBuilder(is_control=True)
    b.append(control_key(2), codec.encode(lc, 0), timestamp=5)
    log.append_as_leader(b.build(), 1)
    b = RecordBatchBuilder()
    b.append(b"k", b"hello", headers=[("h", b"v")], timestamp=6)
    b.append(None, b"world", timestamp=7)
    log.append_as_leader(b.build(), 2)
    log.update_high_watermark(3)
    w = log.create_new_snapshot(SnapshotId(3, 2))
    h = RecordBatchBuilder(is_control=True)
    h.append(control_key(3), codec.encode(m.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=7), 0),
             timestamp=7)
    f = RecordBatchBuilder(is_control=True)
    f.append(control_key(4), codec.encode(m.SnapshotFooterRecord(version=0), 0), timestamp=7)
    w.append(h.build() + f.build())
    w.freeze()
    log.close()
    return d


def test_text_output(tmp_path, capsys):
    d = build_log(tmp_path / "__cluster_metadata-0")
    assert main(["dump-log", "--files", str(d / SEG), "--print-records"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"Dumping {d / SEG}"
    assert lines[1] == "Log starting offset: 0"
    assert lines[2].startswith(
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 1 isTransactional: false isControl: true deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: 5 size: 91 magic: 2 compresscodec: none crc: "
    )
    assert lines[2].endswith(" isvalid: true")
    assert lines[3] == (
        "| offset: 0 CreateTime: 5 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] "
        'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}'
    )
    assert "partitionLeaderEpoch: 2" in lines[4] and "position: 91" in lines[4] and "count: 2" in lines[4]
    # Kafka prints a data record's key before its payload (DumpLogSegments --print-data-log)
    assert lines[5] == ("| offset: 1 CreateTime: 6 keySize: 1 valueSize: 5 sequence: -1 headerKeys: [h] key: k "
                        "payload: hello")
    assert lines[6] == "| offset: 2 CreateTime: 7 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [] payload: world"
    assert len(lines) == 7


def test_json_output(tmp_path, capsys):
    d = build_log(tmp_path / "__cluster_metadata-0")
    assert main(["dump-log", "--files", str(d / SEG), "--json"]) == 0
    objs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [list(o) for o in objs] == [[
        "base_offset", "last_offset", "partition_leader_epoch", "crc", "crc_valid", "is_control", "compression",
        "record_count", "size_in_bytes", "position",
    ]] * 2
    assert [(o["base_offset"], o["last_offset"], o["partition_leader_epoch"], o["is_control"], o["position"],
             o["crc_valid"], o["record_count"], o["compression"]) for o in objs] == [
        (0, 0, 1, True, 0, True, 1, "none"), (1, 2, 2, False, 91, True, 2, "none")]
    assert main(["dump-log", "--files", str(d / SEG), "--json", "--print-records"]) == 0
    objs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert objs[0]["records"][0]["control_type"] == "LeaderChange"
    assert objs[0]["records"][0]["control"]["leaderId"] == 1
    assert objs[1]["records"][0]["value"] == "aGVsbG8="  # base64 of b"hello"


def test_snapshot_and_index_files(tmp_path, capsys):
    d = build_log(tmp_path / "__cluster_metadata-0")
    snap = d / "00000000000000000003-0000000002.checkpoint"
    assert main(["dump-log", "--files", str(snap), "--print-records"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "Snapshot end offset: 3, epoch: 2"
    assert out[3].endswith('SnapshotHeader: {"version":0,"lastContainedLogTimestamp":7}')
    assert out[5].endswith('SnapshotFooter: {"version":0}')
    assert main(["dump-log", "--files", str(d / "00000000000000000000.timeindex")]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["timestamp: 7 offset: 2"]


def test_corrupt_and_torn_tails_are_reported(tmp_path, capsys):
    d = build_log(tmp_path / "__cluster_metadata-0")
    data = (d / SEG).read_bytes()
    torn = tmp_path / "torn.log"
    torn.write_bytes(data[:150])
    assert main(["dump-log", "--files", str(torn)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "Found 59 invalid bytes at the end of torn.log (incomplete batch at position 91)"
    flipped = bytearray(data)
    flipped[-1] ^= 0xFF
    bad = tmp_path / "bad.log"
    bad.write_bytes(bytes(flipped))
    assert main(["dump-log", "--files", str(bad), "--json", "--print-records"]) == 0  # as Kafka: isvalid false
    objs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert objs[1]["crc_valid"] is False and objs[0]["crc_valid"] is True
    garbage = tmp_path / "garbage.log"
    garbage.write_bytes(data[:91] + b"\xff" * 40)
    assert main(["dump-log", "--files", str(garbage), "--json"]) == 1
    objs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert objs[-1]["position"] == 91 and "error" in objs[-1] and objs[-1]["invalid_bytes"] == 40


def test_cluster_metadata_decoder_prints_records_as_kafka_does(tmp_path, capsys):
    """bootstrap.checkpoint as storage format writes it, and a segment of metadata records, decoded."""
    boot = tmp_path / "bootstrap.checkpoint"
    boot.write_bytes(encode_bootstrap_file(bootstrap_records(mv.DEFAULT), 1_700_000_000_000))
    assert main(["dump-log", "--cluster-metadata-decoder", "--files", str(boot)]) == 0
    lines = capsys.readouterr().out.splitlines()
    payloads = [line.split(" payload: ", 1)[1] for line in lines if " payload: " in line]
    assert payloads == ['{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version",'
                        f'"featureLevel":{mv.DEFAULT.level}}}}}',
                        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"eligible.leader.replicas.version",'
                        '"featureLevel":1}}',
                        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"group.version","featureLevel":1}}',
                        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"share.version","featureLevel":2}}',
                        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"transaction.version",'
                        '"featureLevel":2}}']
    assert any("SnapshotHeader" in line for line in lines) and any("SnapshotFooter" in line for line in lines)

    topic_id = uuid.UUID(int=7)
    items = [ApiMessageAndVersion(m.TopicRecord(name="orders", topic_id=topic_id), 0),
             ApiMessageAndVersion(m.PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=[1, 2]), 0)]
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(b"".join(metadata_batches(items, base_offset=0, epoch=3, timestamp=1_700_000_000_000)))
    assert main(["dump-log", "--cluster-metadata-decoder", "--json", "--files", str(seg)]) == 0
    (batch,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    meta = [r["metadata"] for r in batch["records"]]
    assert meta[0] == {"type": "TOPIC_RECORD", "version": 0, "data": {"name": "orders", "topicId": "AAAAAAAAAAAAAAAAAAAABw"}}
    assert meta[1]["type"] == "PARTITION_CHANGE_RECORD" and meta[1]["data"]["isr"] == [1, 2]
    assert meta[1]["data"]["leader"] == -2  # tagged, absent: its default (unchanged)


def test_cluster_metadata_decoder_names_what_is_not_a_metadata_record(tmp_path, capsys):
    b = RecordBatchBuilder(base_offset=0, partition_leader_epoch=1)
    b.append(None, b"\x01\x63\x00", timestamp=1)  # type 99
    b.append(b"k", b"hello", timestamp=2)
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(b.build())
    assert main(["dump-log", "--cluster-metadata-decoder", "--files", str(seg)]) == 0
    out = capsys.readouterr().out
    assert "payload: (not a metadata record: unknown metadata record type 99)" in out
    assert "payload: (not a metadata record: unsupported metadata record frame version 104" in out


def test_a_delete_horizon_prints_as_kafkas_optional_long(tmp_path, capsys):
    """Kafka's DumpLogSegments prints ``deleteHorizonMs: OptionalLong[<ms>]`` for a batch the log cleaner stamped
    (KIP-534, attribute bit 6); ``CreateTime`` stays the batch's max timestamp, the records keep their own."""
    b = RecordBatchBuilder(base_offset=0, partition_leader_epoch=1, delete_horizon_ms=86_400_123)
    b.append(b"k", None, timestamp=5)
    b.append(b"j", b"v", timestamp=9)
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(b.build())
    assert main(["dump-log", "--files", str(seg), "--print-records"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert " isControl: false deleteHorizonMs: OptionalLong[86400123] position: 0 CreateTime: 9 " in lines[2]
    assert lines[2].endswith(" isvalid: true")
    assert lines[3].startswith("| offset: 0 CreateTime: 5 keySize: 1 valueSize: -1 ")
    assert lines[4].startswith("| offset: 1 CreateTime: 9 keySize: 1 valueSize: 1 ")
