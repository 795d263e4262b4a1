"""Byte-exact fixtures for the small files: quorum-state, leader-epoch-checkpoint, partition.metadata,
meta.properties, offset checkpoints; atomic replacement; and the config keys the log reads."""

from __future__ import annotations

import os
import uuid

import pytest

from kraftwire.config import Config, parse_properties
from kraftwire.errors import ConfigError, LogIOError, StorageNotFormattedError
from kraftwire.ids import METADATA_TOPIC_ID, uuid_from_base64, uuid_to_base64
from kraftwire.log.checkpoint import (
    LeaderEpochCheckpointFile,
    OffsetCheckpointFile,
    PartitionMetadataFile,
    write_atomic,
)
from kraftwire.log.epoch_cache import EpochEntry
from kraftwire.log.meta_properties import (
    MetaProperties,
    MetaPropertiesError,
    ensure_formatted,
    format_meta_properties,
    read_meta_properties,
    write_meta_properties,
)
from kraftwire.log.quorum_state_store import (
    FileQuorumStateStore,
    QuorumStateData,
    QuorumStateFormatError,
    decode_quorum_state,
    encode_quorum_state,
)

DIR_ID = uuid_from_base64("vTN5m1yVRL2wT2sXVjLOSg")


def test_quorum_state_v1_exact():
    state = QuorumStateData(leader_epoch=7, leader_id=2, voted_id=2, voted_directory_id=DIR_ID, data_version=1)
    text = encode_quorum_state(state)
    assert text == '{"leaderId":2,"leaderEpoch":7,"votedId":2,"votedDirectoryId":"vTN5m1yVRL2wT2sXVjLOSg","data_version":1}'
    assert decode_quorum_state(text) == state


def test_quorum_state_v1_unknown_directory_is_zero_uuid():
    text = encode_quorum_state(QuorumStateData(leader_epoch=1, data_version=1))
    assert text == '{"leaderId":-1,"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}'
    assert decode_quorum_state(text).voted_directory_id is None


def test_quorum_state_v0_exact():
    state = QuorumStateData(leader_epoch=3, leader_id=1, voted_id=-1, current_voters=(1, 2, 3), data_version=0)
    text = encode_quorum_state(state)
    assert text == (
        '{"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,'
        '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}'
    )
    assert decode_quorum_state(text) == state


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "not json",
        "[]",
        '{"leaderId":1,"leaderEpoch":1,"votedId":1}',
        '{"leaderId":1,"leaderEpoch":1,"votedId":1,"data_version":2}',
        '{"leaderId":1,"leaderEpoch":1,"votedId":1,"data_version":-1}',
        '{"leaderEpoch":1,"votedId":1,"data_version":1}',
    ],
)
def test_quorum_state_rejects(bad):
    with pytest.raises(QuorumStateFormatError):
        decode_quorum_state(bad)


def test_quorum_state_store_roundtrip(tmp_path):
    store = FileQuorumStateStore(str(tmp_path))
    assert store.read() is None
    state = QuorumStateData(leader_epoch=5, leader_id=-1, voted_id=3, data_version=1)
    store.write(state)
    assert store.read() == state
    assert os.listdir(tmp_path) == ["quorum-state"]  # no .tmp left behind
    assert (tmp_path / "quorum-state").read_bytes() == encode_quorum_state(state).encode()
    store.clear()
    assert store.read() is None


def test_leader_epoch_checkpoint_file(tmp_path):
    f = LeaderEpochCheckpointFile(str(tmp_path))
    assert f.read() == []
    f.write([EpochEntry(1, 0), EpochEntry(4, 1234)])
    assert (tmp_path / "leader-epoch-checkpoint").read_bytes() == b"0\n2\n1 0\n4 1234\n"
    assert f.read() == [EpochEntry(1, 0), EpochEntry(4, 1234)]


def test_partition_metadata_exact(tmp_path):
    f = PartitionMetadataFile(str(tmp_path))
    f.write(METADATA_TOPIC_ID)
    assert (tmp_path / "partition.metadata").read_bytes() == b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    assert f.read() == METADATA_TOPIC_ID


def test_offset_checkpoint_exact(tmp_path):
    f = OffsetCheckpointFile(str(tmp_path / "high-watermark-checkpoint"), "__cluster_metadata")
    assert f.read() is None
    f.write(42)
    assert (tmp_path / "high-watermark-checkpoint").read_bytes() == b"0\n1\n__cluster_metadata 0 42\n"
    assert f.read() == 42


def test_meta_properties_exact(tmp_path):
    meta = MetaProperties(cluster_id="MkU3OEVBNTcwNTJENDM2Qk", node_id=1, directory_id=DIR_ID)
    text = format_meta_properties(meta, now=0)
    assert text == (
        "#\n#Thu Jan 01 00:00:00 UTC 1970\n"
        "cluster.id=MkU3OEVBNTcwNTJENDM2Qk\n"
        "directory.id=vTN5m1yVRL2wT2sXVjLOSg\n"
        "node.id=1\n"
        "version=1\n"
    )
    write_meta_properties(str(tmp_path), meta)
    assert read_meta_properties(str(tmp_path)) == meta
    assert ensure_formatted(str(tmp_path), node_id=1) == meta
    with pytest.raises(MetaPropertiesError, match="node.id 1"):
        ensure_formatted(str(tmp_path), node_id=2)


def test_meta_properties_written_by_kafka_parse(tmp_path):
    # A file as Kafka's Properties.store writes it (unsorted keys, comment lines).
    (tmp_path / "meta.properties").write_text(
        "#\n#Tue Oct 29 10:00:00 UTC 2024\nnode.id=3\nversion=1\ndirectory.id=vTN5m1yVRL2wT2sXVjLOSg\ncluster.id=abc\n"
    )
    assert read_meta_properties(str(tmp_path)) == MetaProperties("abc", 3, DIR_ID, 1)


def test_unformatted_dir_is_refused_with_reason(tmp_path):
    with pytest.raises(StorageNotFormattedError, match="not formatted"):
        ensure_formatted(str(tmp_path))
    with pytest.raises(StorageNotFormattedError, match="does not exist"):
        ensure_formatted(str(tmp_path / "nope"))


def test_write_atomic_io_error_is_logioerror(tmp_path):
    with pytest.raises(LogIOError):
        write_atomic(str(tmp_path / "missing-dir" / "f"), b"x")


def test_base64_uuid():
    u = uuid.UUID("bd33799b-5c95-44bd-b04f-6b175632ce4a")
    assert uuid_to_base64(u) == "vTN5m1yVRL2wT2sXVjLOSg"
    assert uuid_from_base64("vTN5m1yVRL2wT2sXVjLOSg") == u
    for bad in ("short", "vTN5m1yVRL2wT2sXVjLOS=", "vTN5m1yVRL2wT2sXVjLOSg!"):
        with pytest.raises(ValueError):
            uuid_from_base64(bad)


# ------------------------------------------------------------------------------------------------- config


def test_properties_syntax():
    props = parse_properties(
        "# comment\n! also\n  node.id = 1\nlog.dirs:/a,\\\n   /b\nkey\\=x value with spaces\nempty=\n"
    )
    assert props == {"node.id": "1", "log.dirs": "/a,/b", "key=x": "value with spaces", "empty": ""}


def test_config_defaults_and_dirs():
    c = Config.from_properties({"node.id": "1", "log.dirs": "/tmp/kraft-logs-1, /tmp/other"}).validate()
    assert c.metadata_log_segment_bytes == 1 << 30
    assert c.metadata_max_retention_bytes == 100 << 20
    assert c.metadata_max_retention_ms == 7 * 24 * 3600 * 1000
    assert c.metadata_log_segment_ms == 7 * 24 * 3600 * 1000
    assert c.metadata_partition_dir() == "/tmp/kraft-logs-1/__cluster_metadata-0"
    assert c.all_log_dirs() == ("/tmp/kraft-logs-1", "/tmp/other")
    c2 = Config.from_properties(
        {"log.dirs": "/a", "metadata.log.dir": "/m", "kraftwire.metadata.log.topic": "__raft_performance_test", "x.y": "1"}
    )
    assert c2.metadata_partition_dir() == "/m/__raft_performance_test-0"
    assert c2.all_log_dirs() == ("/m", "/a")
    assert dict(c2.unknown) == {"x.y": "1"}


@pytest.mark.parametrize(
    "props, key",
    [
        ({"node.id": "one"}, "node.id"),
        ({"metadata.log.segment.bytes": "1000"}, "metadata.log.segment.bytes"),
        ({"metadata.max.retention.ms": "-5"}, "metadata.max.retention.ms"),
        ({"kraftwire.metadata.log.topic": "bad/topic"}, "kraftwire.metadata.log.topic"),
        ({"controller.quorum.fetch.timeout.ms": "-1"}, "controller.quorum.fetch.timeout.ms"),
    ],
)
def test_config_errors_name_key_and_value(props, key):
    with pytest.raises(ConfigError) as info:
        Config.from_properties(props).validate()
    assert info.value.key == key
    assert key in str(info.value)


def test_failed_atomic_write_keeps_the_old_file_and_no_tmp(tmp_path, monkeypatch):
    f = LeaderEpochCheckpointFile(str(tmp_path))
    f.write([EpochEntry(1, 0)])

    def broken_fsync(fd):
        raise OSError(5, "injected EIO")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(LogIOError):
        f.write([EpochEntry(1, 0), EpochEntry(2, 9)])
    monkeypatch.undo()
    assert f.read() == [EpochEntry(1, 0)]
    assert sorted(os.listdir(tmp_path)) == ["leader-epoch-checkpoint"]


def test_index_layout_is_parsed_in_one_place():
    """``.index``/``.timeindex`` bytes are read by ``log.segment.parse_index``/``parse_time_index`` for the log and
    for offline readers (Spark) alike: the leading run of sane entries, and whether anything was cut."""
    from kraftwire.log.segment import INDEX_ENTRY, TIME_INDEX_ENTRY, parse_index, parse_time_index

    entries = INDEX_ENTRY.pack(3, 4100) + INDEX_ENTRY.pack(9, 8300)
    assert parse_index(entries, 100, 9000) == ([103, 109], [4100, 8300], True)
    # Kafka preallocates an active segment's index with zeros: the prefix is usable, the file is not complete
    assert parse_index(entries + bytes(80), 100, 9000) == ([103, 109], [4100, 8300], False)
    assert parse_index(entries + b"\x00\x01", 100, 9000) == ([103, 109], [4100, 8300], False)
    # a position past the end of the .log (an index older than a truncation) ends the usable run
    assert parse_index(entries, 100, 8000) == ([103], [4100], False)
    assert parse_index(INDEX_ENTRY.pack(-1, 10), 0, 100) == ([], [], False)
    times = TIME_INDEX_ENTRY.pack(1000, 3) + TIME_INDEX_ENTRY.pack(2000, 9)
    assert parse_time_index(times, 100) == ([(1000, 103), (2000, 109)], True)
    assert parse_time_index(times + TIME_INDEX_ENTRY.pack(1500, 12), 100) == ([(1000, 103), (2000, 109)], False)
    assert parse_time_index(times + TIME_INDEX_ENTRY.pack(3000, 5), 100) == ([(1000, 103), (2000, 109)], False)
