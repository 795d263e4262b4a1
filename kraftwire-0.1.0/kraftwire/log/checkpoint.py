"""Atomic small-file writes (tmp, fsync, rename, fsync dir) and the Kafka checkpoint files built on them.

Every small file in a log directory (``quorum-state``, ``leader-epoch-checkpoint``, ``partition.metadata``,
``high-watermark-checkpoint``, ``meta.properties``) is replaced with ``write_atomic``: the new content goes to
``<name>.tmp``, is fsynced, renamed over the old file, and the directory is fsynced. A crash leaves either the old
or the new content, never a mix. Any ``OSError`` becomes ``LogIOError`` (fail-stop: the caller must stop).
"""

from __future__ import annotations

import os
import uuid

from kraftwire.errors import LogIOError
from kraftwire.log.epoch_cache import EpochEntry, format_checkpoint, parse_checkpoint

__all__ = [
    "TMP_SUFFIX",
    "fsync_dir",
    "write_atomic",
    "read_file_or_none",
    "LeaderEpochCheckpointFile",
    "OffsetCheckpointFile",
    "PartitionMetadataFile",
    "format_offset_checkpoint",
    "parse_offset_checkpoint",
    "format_partition_metadata",
    "parse_partition_metadata",
]

TMP_SUFFIX = ".tmp"


def fsync_dir(path: str) -> None:
    """fsync a directory so a create/rename/delete inside it is durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_atomic(path: str, data: bytes | str, *, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (``path.tmp`` → fsync → rename → fsync dir)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    tmp = path + TMP_SUFFIX
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        if fsync:
            fsync_dir(os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise LogIOError(f"failed to write {path}: {exc}") from exc


def read_file_or_none(path: str) -> str | None:
    """The file's text, or None if it does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


class LeaderEpochCheckpointFile:
    """``leader-epoch-checkpoint``: Kafka's text checkpoint of (epoch, start offset) entries."""

    NAME = "leader-epoch-checkpoint"

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, self.NAME)

    def write(self, entries: list[EpochEntry] | tuple[EpochEntry, ...], *, fsync: bool = True) -> None:
        write_atomic(self.path, format_checkpoint(entries), fsync=fsync)

    def read(self) -> list[EpochEntry]:
        """Entries on disk; an absent file reads as empty. Malformed content raises ``CheckpointFormatError``."""
        text = read_file_or_none(self.path)
        return [] if text is None else parse_checkpoint(text)


# ------------------------------------------------------------------------------------------ offset checkpoints
# Kafka's replication-offset-checkpoint / log-start-offset-checkpoint text: "0\n<count>\n" then one
# "<topic> <partition> <offset>" line per entry.


def format_offset_checkpoint(entries: dict[tuple[str, int], int]) -> str:
    lines = ["0", str(len(entries))]
    lines.extend(f"{topic} {partition} {offset}" for (topic, partition), offset in entries.items())
    return "\n".join(lines) + "\n"


def parse_offset_checkpoint(text: str) -> dict[tuple[str, int], int]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2 or lines[0].strip() != "0":
        raise ValueError("malformed offset checkpoint header")
    count = int(lines[1])
    body = lines[2:]
    if len(body) != count:
        raise ValueError(f"expected {count} entries but found {len(body)}")
    out: dict[tuple[str, int], int] = {}
    for line in body:
        parts = line.split()
        if len(parts) != 3:
            raise ValueError(f"malformed offset checkpoint line {line!r}")
        out[(parts[0], int(parts[1]))] = int(parts[2])
    return out


class OffsetCheckpointFile:
    """A one-partition offset checkpoint (``high-watermark-checkpoint``, ``log-start-offset-checkpoint``)."""

    def __init__(self, path: str, topic: str, partition: int = 0) -> None:
        self.path = path
        self.key = (topic, partition)

    def write(self, offset: int, *, fsync: bool = True) -> None:
        write_atomic(self.path, format_offset_checkpoint({self.key: offset}), fsync=fsync)

    def read(self) -> int | None:
        """The checkpointed offset, or None when the file is absent, unreadable or names another partition."""
        text = read_file_or_none(self.path)
        if text is None:
            return None
        try:
            return parse_offset_checkpoint(text).get(self.key)
        except ValueError:
            return None


# ------------------------------------------------------------------------------------------ partition.metadata


def format_partition_metadata(topic_id: uuid.UUID) -> str:
    from kraftwire.ids import uuid_to_base64

    return f"version: 0\ntopic_id: {uuid_to_base64(topic_id)}"


def parse_partition_metadata(text: str) -> uuid.UUID:
    from kraftwire.ids import uuid_from_base64

    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"malformed partition.metadata line {line!r}")
        fields[key.strip()] = value.strip()
    if fields.get("version") != "0":
        raise ValueError(f"unsupported partition.metadata version {fields.get('version')!r}")
    if "topic_id" not in fields:
        raise ValueError("partition.metadata has no topic_id")
    return uuid_from_base64(fields["topic_id"])


class PartitionMetadataFile:
    """``partition.metadata``: ``version: 0`` and ``topic_id: <base64 uuid>``."""

    NAME = "partition.metadata"

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, self.NAME)

    def write(self, topic_id: uuid.UUID) -> None:
        write_atomic(self.path, format_partition_metadata(topic_id))

    def read(self) -> uuid.UUID | None:
        text = read_file_or_none(self.path)
        return None if text is None else parse_partition_metadata(text)
