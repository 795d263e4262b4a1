"""Reading a frozen snapshot file (``%020d-%010d.checkpoint``): size, byte slices for FetchSnapshot, all bytes.

The file descriptor stays open, so a reader keeps working even after the snapshot is deleted.
"""

from __future__ import annotations

import os

from kraftwire.ids import SnapshotId
from kraftwire.snapshot.paths import parse_snapshot_path

__all__ = ["FileRawSnapshotReader", "open_snapshot"]


class FileRawSnapshotReader:
    """``FileRawSnapshotReader(path, snapshot_id)``: read-only access to one frozen snapshot file."""

    def __init__(self, path: str, snapshot_id: SnapshotId) -> None:
        self.path = path
        self._id = snapshot_id
        self._fd = os.open(path, os.O_RDONLY)
        self._size = os.fstat(self._fd).st_size

    @property
    def snapshot_id(self) -> SnapshotId:
        return self._id

    def size_in_bytes(self) -> int:
        return self._size

    def slice(self, position: int, max_bytes: int) -> bytes:
        if position < 0 or position > self._size:
            raise ValueError(f"position {position} is outside the snapshot (size {self._size})")
        return os.pread(self._fd, max(0, min(max_bytes, self._size - position)), position)

    def records(self) -> bytes:
        out = bytearray()
        pos = 0
        while pos < self._size:
            chunk = os.pread(self._fd, min(1 << 24, self._size - pos), pos)
            if not chunk:
                break
            out += chunk
            pos += len(chunk)
        return bytes(out)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "FileRawSnapshotReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def open_snapshot(path: str) -> FileRawSnapshotReader:
    """Open a snapshot by path; its id comes from the file name."""
    parsed = parse_snapshot_path(path)
    if parsed is None:
        raise ValueError(f"not a snapshot file name: {path}")
    return FileRawSnapshotReader(path, parsed.snapshot_id)
