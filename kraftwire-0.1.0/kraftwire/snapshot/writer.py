"""Writing a snapshot file: ``<id>-<random>.checkpoint.part`` → fsync → read-only → rename → fsync dir.

A snapshot is invisible (no ``.checkpoint`` name) until ``freeze()`` returns, so a crash can leave only a
``.part`` file, which the log deletes when it opens (KAFKA-15312: the rename happens after the fsync).
Any ``OSError`` becomes ``LogIOError`` and the ``.part`` file is removed.
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable

from kraftwire.errors import LogError, LogIOError
from kraftwire.ids import SnapshotId
from kraftwire.snapshot.paths import PARTIAL_SUFFIX, snapshot_filename, snapshot_path

__all__ = ["FileRawSnapshotWriter"]


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileRawSnapshotWriter:
    """``FileRawSnapshotWriter(directory, snapshot_id, on_frozen=None, on_error=None)``.

    ``on_frozen(snapshot_id, size)`` runs after the rename is durable; ``on_error(exc)`` runs on an I/O error
    (the log uses it to stop: fail-stop)."""

    def __init__(
        self,
        directory: str,
        snapshot_id: SnapshotId,
        on_frozen: Callable[[SnapshotId, int], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._dir = directory
        self._id = snapshot_id
        self._on_frozen = on_frozen
        self._on_error = on_error
        self._size = 0
        self._frozen = False
        self._closed = False
        prefix = snapshot_filename(snapshot_id)[: -len(".checkpoint")] + "-"
        try:
            self._fd, self._tmp = tempfile.mkstemp(prefix=prefix, suffix=PARTIAL_SUFFIX, dir=directory)
        except OSError as exc:
            self._fail(exc)

    @property
    def snapshot_id(self) -> SnapshotId:
        return self._id

    @property
    def path(self) -> str:
        return snapshot_path(self._dir, self._id) if self._frozen else self._tmp

    def size_in_bytes(self) -> int:
        return self._size

    def _fail(self, exc: OSError):
        if self._on_error is not None:
            self._on_error(exc)
        raise LogIOError(f"I/O error writing snapshot {self._id}: {exc}") from exc

    def append(self, data: bytes | memoryview) -> None:
        if self._frozen or self._closed:
            raise LogError(f"snapshot {self._id} is {'frozen' if self._frozen else 'closed'}; cannot append")
        view = memoryview(data)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
                self._size += n
        except OSError as exc:
            self._abandon()
            self._fail(exc)

    def freeze(self) -> None:
        if self._frozen:
            raise LogError(f"snapshot {self._id} is already frozen")
        if self._closed:
            raise LogError(f"snapshot {self._id} was closed before it was frozen")
        final = snapshot_path(self._dir, self._id)
        try:
            os.fsync(self._fd)
            os.close(self._fd)
            self._closed = True
            os.chmod(self._tmp, 0o444)
            os.replace(self._tmp, final)
            _fsync_dir(self._dir)
        except OSError as exc:
            self._abandon()
            self._fail(exc)
        self._frozen = True
        if self._on_frozen is not None:
            self._on_frozen(self._id, self._size)

    def _abandon(self) -> None:
        if not self._closed:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._closed = True
        try:
            os.unlink(self._tmp)
        except OSError:
            pass

    def close(self) -> None:
        """Abandon the snapshot unless it was frozen (the ``.part`` file is removed)."""
        if not self._frozen:
            self._abandon()
        self._closed = True
