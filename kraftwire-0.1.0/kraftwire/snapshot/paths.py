"""Snapshot file names (Kafka's Snapshots naming): ``%020d-%010d.checkpoint`` = end offset (exclusive), epoch.

* frozen:   ``00000000000000000100-0000000003.checkpoint``
* partial:  ``00000000000000000100-0000000003-<random>.checkpoint.part`` (while being written)
* deleted:  ``00000000000000000100-0000000003.checkpoint.deleted`` (marked for deletion, removed later)

``00000000000000000000-0000000000.checkpoint`` is the bootstrap snapshot (never served through FetchSnapshot).
"""

from __future__ import annotations

import enum
import os
import re
from dataclasses import dataclass

from kraftwire.ids import SnapshotId

__all__ = [
    "SUFFIX",
    "PARTIAL_SUFFIX",
    "DELETED_SUFFIX",
    "BOOTSTRAP_SNAPSHOT_ID",
    "SnapshotFileKind",
    "SnapshotPath",
    "snapshot_filename",
    "snapshot_path",
    "deleted_path",
    "parse_snapshot_path",
]

SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = ".checkpoint.part"
DELETED_SUFFIX = ".checkpoint.deleted"
BOOTSTRAP_SNAPSHOT_ID = SnapshotId(0, 0)

_NAME = re.compile(r"^(\d{20})-(\d{10})(?:-[^/]*)?(\.checkpoint(?:\.part|\.deleted)?)$")


class SnapshotFileKind(enum.Enum):
    FROZEN = "frozen"
    PARTIAL = "partial"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class SnapshotPath:
    path: str
    snapshot_id: SnapshotId
    kind: SnapshotFileKind


def snapshot_filename(snapshot_id: SnapshotId) -> str:
    if snapshot_id.end_offset < 0 or snapshot_id.epoch < 0:
        raise ValueError(f"invalid snapshot id {snapshot_id!r}")
    return f"{snapshot_id.end_offset:020d}-{snapshot_id.epoch:010d}{SUFFIX}"


def snapshot_path(directory: str, snapshot_id: SnapshotId) -> str:
    return os.path.join(directory, snapshot_filename(snapshot_id))


def deleted_path(directory: str, snapshot_id: SnapshotId) -> str:
    return snapshot_path(directory, snapshot_id) + ".deleted"


def parse_snapshot_path(path: str) -> SnapshotPath | None:
    """Recognise a snapshot file by its name; None for anything else."""
    name = os.path.basename(path)
    m = _NAME.match(name)
    if m is None:
        return None
    suffix = m.group(3)
    has_random = len(name) != 20 + 1 + 10 + len(suffix)
    if suffix == SUFFIX and not has_random:
        kind = SnapshotFileKind.FROZEN
    elif suffix == PARTIAL_SUFFIX:
        kind = SnapshotFileKind.PARTIAL
    elif suffix == DELETED_SUFFIX and not has_random:
        kind = SnapshotFileKind.DELETED
    else:
        return None
    return SnapshotPath(path, SnapshotId(int(m.group(1)), int(m.group(2))), kind)
