"""Snapshot file names (byte-exact), parsing, and the writer's .part -> fsync -> rename life cycle."""

from __future__ import annotations

import os

import pytest

from kraftwire.errors import LogError
from kraftwire.ids import SnapshotId
from kraftwire.snapshot.paths import (
    BOOTSTRAP_SNAPSHOT_ID,
    SnapshotFileKind,
    parse_snapshot_path,
    snapshot_filename,
)
from kraftwire.snapshot.reader import FileRawSnapshotReader, open_snapshot
from kraftwire.snapshot.writer import FileRawSnapshotWriter


def test_names_are_byte_exact():
    assert snapshot_filename(SnapshotId(100, 3)) == "00000000000000000100-0000000003.checkpoint"
    assert snapshot_filename(BOOTSTRAP_SNAPSHOT_ID) == "00000000000000000000-0000000000.checkpoint"
    assert str(SnapshotId(2**63 - 1, 2**31 - 1)) + ".checkpoint" == snapshot_filename(SnapshotId(2**63 - 1, 2**31 - 1))
    with pytest.raises(ValueError):
        snapshot_filename(SnapshotId(-1, 0))


@pytest.mark.parametrize(
    "name, kind, sid",
    [
        ("00000000000000000100-0000000003.checkpoint", SnapshotFileKind.FROZEN, SnapshotId(100, 3)),
        ("00000000000000000100-0000000003-8123.checkpoint.part", SnapshotFileKind.PARTIAL, SnapshotId(100, 3)),
        ("00000000000000000100-0000000003.checkpoint.part", SnapshotFileKind.PARTIAL, SnapshotId(100, 3)),
        ("00000000000000000100-0000000003.checkpoint.deleted", SnapshotFileKind.DELETED, SnapshotId(100, 3)),
    ],
)
def test_parse(name, kind, sid):
    parsed = parse_snapshot_path("/some/dir/" + name)
    assert parsed.kind is kind and parsed.snapshot_id == sid


@pytest.mark.parametrize(
    "name",
    ["leader-epoch-checkpoint", "0100-0003.checkpoint", "00000000000000000100-0000000003.log",
     "00000000000000000100-0000000003-x.checkpoint", "00000000000000000100-0000000003.checkpointx"],
)
def test_parse_rejects(name):
    assert parse_snapshot_path(name) is None


def test_writer_life_cycle(tmp_path):
    frozen = []
    w = FileRawSnapshotWriter(str(tmp_path), SnapshotId(7, 2), on_frozen=lambda sid, size: frozen.append((sid, size)))
    w.append(b"abc")
    w.append(memoryview(b"defg"))
    assert w.size_in_bytes() == 7
    names = os.listdir(tmp_path)
    assert len(names) == 1 and names[0].endswith(".checkpoint.part")
    w.freeze()
    assert os.listdir(tmp_path) == ["00000000000000000007-0000000002.checkpoint"]
    assert frozen == [(SnapshotId(7, 2), 7)]
    with pytest.raises(LogError):
        w.append(b"x")
    with pytest.raises(LogError):
        w.freeze()
    with open_snapshot(str(tmp_path / "00000000000000000007-0000000002.checkpoint")) as r:
        assert r.snapshot_id == SnapshotId(7, 2)
        assert r.size_in_bytes() == 7 and r.records() == b"abcdefg"
        assert r.slice(5, 100) == b"fg" and r.slice(7, 10) == b""
        with pytest.raises(ValueError):
            r.slice(8, 1)


def test_abandoned_writer_removes_its_part_file(tmp_path):
    w = FileRawSnapshotWriter(str(tmp_path), SnapshotId(7, 2))
    w.append(b"abc")
    w.close()
    assert os.listdir(tmp_path) == []
    with pytest.raises(LogError):
        w.freeze()


def test_reader_survives_deletion(tmp_path):
    w = FileRawSnapshotWriter(str(tmp_path), SnapshotId(1, 1))
    w.append(b"payload")
    w.freeze()
    path = tmp_path / "00000000000000000001-0000000001.checkpoint"
    r = FileRawSnapshotReader(str(path), SnapshotId(1, 1))
    os.unlink(path)
    assert r.records() == b"payload"  # an in-flight FetchSnapshot keeps reading
    r.close()
