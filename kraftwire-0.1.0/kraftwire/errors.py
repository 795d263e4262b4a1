"""The exception hierarchy. A leaf module: it imports nothing from kraftwire.

Exceptions carry fields (offset, reason, position) rather than only prose, so callers can
map them to wire error codes (see ``kraftwire.error_codes``) and tests can assert on them.
"""

from __future__ import annotations


class KraftwireError(Exception):
    """Base class of every error kraftwire raises on purpose."""


class CorruptRecordError(KraftwireError):
    """A RecordBatch (or a record inside it) is malformed.

    ``reason`` is a short, stable, machine-comparable phrase (e.g. ``"crc mismatch"``);
    ``position`` is the byte offset in the input buffer where the problem was detected.
    Both codec implementations raise the same reason and position for the same input.
    """

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(f"corrupt record batch at byte {position}: {reason}")
        self.reason = reason
        self.position = position

    def __reduce__(self):  # keep fields across pickling (Spark workers, multiprocessing)
        return (type(self), (self.reason, self.position))


class ProtocolError(KraftwireError):
    """A Kafka protocol frame or message could not be decoded (or encoded)."""


class UnsupportedVersionError(ProtocolError):
    """An API key / version pair this node does not support."""

    def __init__(self, api_key: int, api_version: int, message: str | None = None) -> None:
        super().__init__(message or f"unsupported api key {api_key} version {api_version}")
        self.api_key = api_key
        self.api_version = api_version


class ConfigError(KraftwireError):
    """A configuration value is invalid. The message names the key and the value."""

    def __init__(self, key: str, value: object, reason: str) -> None:
        super().__init__(f"invalid value {value!r} for configuration {key}: {reason}")
        self.key = key
        self.value = value
        self.reason = reason


class LogError(KraftwireError):
    """Base class for log and storage errors."""


class OffsetOutOfRangeError(LogError):
    def __init__(self, offset: int, start: int, end: int) -> None:
        super().__init__(f"offset {offset} is outside the log range [{start}, {end}]")
        self.offset = offset
        self.start = start
        self.end = end


class InvalidAppendError(LogError):
    """An append that would break the log's invariants (gap, overlap, epoch going backwards)."""


class LogIOError(LogError):
    """An I/O error in a log directory. The node must stop (fail-stop); the log refuses writes after it."""


class StorageNotFormattedError(LogError):
    """A log directory has no meta.properties (run ``kraftwire storage format``)."""


class RecordTooLargeError(KraftwireError):
    """An append is larger than the maximum batch size."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"append of {size} bytes exceeds the maximum batch size of {limit} bytes")
        self.size = size
        self.limit = limit


class NotLeaderError(KraftwireError):
    """An operation that needs the leader was attempted on a non-leader (or with a stale epoch)."""


# --- appended by the log work -----------------------------------------------------------------------------------------


class InvalidTruncationError(LogError, ValueError):
    """A truncation the log must refuse (below the high watermark, or below the log start)."""


class InvalidSnapshotIdError(LogError, ValueError):
    """A snapshot id the log must refuse: above the high watermark, not on a batch boundary, or not valid
    against the log's epochs."""


class LogLockedError(LogError):
    """Another process holds the log directory's ``.lock``."""


class RaftFatalError(KraftwireError):
    """A Raft safety rule would break (e.g. a follower asked to truncate below its high watermark): the node must
    stop rather than continue with a log it can no longer trust."""
