"""Leader epoch cache: which epoch started at which offset (Kafka's LeaderEpochFileCache rules). Pure.

The cache is a list of ``EpochEntry(epoch, start_offset)`` strictly increasing in both fields. The rules (facts of
Kafka's behaviour, in our words):

* ``assign(e, o)`` is a no-op when ``e`` is the latest epoch and ``o`` >= its start offset. Otherwise every entry at
  the tail with ``epoch >= e`` or ``start_offset >= o`` is removed, then ``(e, o)`` is appended. Negative values are
  rejected.
* ``end_offset_for(e, log_end_offset)``: ``e`` is -1 → (-1, -1); ``e`` is the latest epoch → (e, log end offset);
  ``e`` is above the latest (or the cache is empty) → (-1, -1); ``e`` is below the first entry → (e, first start
  offset); otherwise (largest epoch ≤ e, start offset of the first entry above e).
* ``truncate_from_end(o)`` drops entries starting at or after ``o`` (the log was truncated to end at ``o``).
* ``truncate_from_start(o)`` drops entries starting at or before ``o`` and re-adds the last dropped one's epoch
  starting at ``o`` (the log start moved to ``o``).

The persisted form is Kafka's ``leader-epoch-checkpoint`` text: the version line ``0``, the entry count, then one
``"<epoch> <start offset>"`` line per entry, each newline-terminated. ``format_checkpoint``/``parse_checkpoint``
convert; the file I/O (tmp + fsync + rename) lives in ``kraftwire.log.checkpoint``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

__all__ = [
    "UNDEFINED_EPOCH",
    "UNDEFINED_EPOCH_OFFSET",
    "CHECKPOINT_VERSION",
    "EpochEntry",
    "LeaderEpochCache",
    "CheckpointFormatError",
    "format_checkpoint",
    "parse_checkpoint",
]

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
CHECKPOINT_VERSION = 0


@dataclass(frozen=True, slots=True, order=True)
class EpochEntry:
    epoch: int
    start_offset: int

    def __str__(self) -> str:
        return f"{self.epoch} {self.start_offset}"


class LeaderEpochCache:
    """Epoch → start offset, with Kafka's assignment and truncation rules. Holds no file; see module docstring."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Iterable[EpochEntry | tuple[int, int]] = ()) -> None:
        self._entries: list[EpochEntry] = []
        for e in entries:
            entry = e if isinstance(e, EpochEntry) else EpochEntry(*e)
            self.assign(entry.epoch, entry.start_offset)

    # ------------------------------------------------------------------------------------------------- queries

    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LeaderEpochCache) and self._entries == other._entries

    def __repr__(self) -> str:
        return f"LeaderEpochCache({[(e.epoch, e.start_offset) for e in self._entries]})"

    def latest_entry(self) -> EpochEntry | None:
        return self._entries[-1] if self._entries else None

    def earliest_entry(self) -> EpochEntry | None:
        return self._entries[0] if self._entries else None

    def latest_epoch(self) -> int | None:
        return self._entries[-1].epoch if self._entries else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch whose range contains ``offset`` (the largest entry with start ≤ offset), or None."""
        found = None
        for entry in self._entries:
            if entry.start_offset <= offset:
                found = entry.epoch
            else:
                break
        return found

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's ``endOffsetFor``: ``(epoch found, end offset)``; ``(-1, -1)`` when undefined."""
        undefined = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        if epoch == UNDEFINED_EPOCH or not self._entries:
            return undefined
        latest = self._entries[-1]
        if latest.epoch == epoch:
            return (epoch, log_end_offset)
        # First entry strictly above the requested epoch.
        higher_index = next((i for i, e in enumerate(self._entries) if e.epoch > epoch), None)
        if higher_index is None:
            return undefined
        higher = self._entries[higher_index]
        if higher_index == 0:
            return (epoch, higher.start_offset)
        return (self._entries[higher_index - 1].epoch, higher.start_offset)

    # ------------------------------------------------------------------------------------------------- updates

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Learn that ``epoch`` starts at ``start_offset``. Returns whether the cache changed."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid leader epoch entry: epoch {epoch}, start offset {start_offset}")
        if self._entries:
            last = self._entries[-1]
            if last.epoch == epoch and start_offset >= last.start_offset:
                return False
        while self._entries and (self._entries[-1].epoch >= epoch or self._entries[-1].start_offset >= start_offset):
            self._entries.pop()
        self._entries.append(EpochEntry(epoch, start_offset))
        return True

    def truncate_from_end(self, end_offset: int) -> bool:
        """Drop entries starting at or after ``end_offset``. Returns whether anything was dropped."""
        if end_offset < 0 or not self._entries or self._entries[-1].start_offset < end_offset:
            return False
        while self._entries and self._entries[-1].start_offset >= end_offset:
            self._entries.pop()
        return True

    def truncate_from_start(self, start_offset: int) -> bool:
        """Drop entries starting at or before ``start_offset``; the last one dropped comes back starting there."""
        removed: EpochEntry | None = None
        i = 0
        while i < len(self._entries) and self._entries[i].start_offset <= start_offset:
            removed = self._entries[i]
            i += 1
        if removed is None:
            return False
        replacement = EpochEntry(removed.epoch, start_offset)
        changed = i != 1 or self._entries[0] != replacement
        self._entries[:i] = [replacement]
        return changed

    def clear(self) -> bool:
        changed = bool(self._entries)
        self._entries.clear()
        return changed

    def copy(self) -> "LeaderEpochCache":
        c = LeaderEpochCache()
        c._entries = list(self._entries)
        return c


class CheckpointFormatError(ValueError):
    """A ``leader-epoch-checkpoint`` (or other Kafka checkpoint text) is malformed."""


def format_checkpoint(entries: Iterable[EpochEntry]) -> str:
    """Kafka's checkpoint text: ``0\\n<count>\\n`` then ``<epoch> <start offset>\\n`` per entry."""
    items = list(entries)
    lines = [str(CHECKPOINT_VERSION), str(len(items))]
    lines.extend(f"{e.epoch} {e.start_offset}" for e in items)
    return "\n".join(lines) + "\n"


def parse_checkpoint(text: str) -> list[EpochEntry]:
    """Parse ``format_checkpoint`` output. Raises ``CheckpointFormatError`` on a bad version, a malformed line,
    or an entry count that does not match the entries present."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2:
        raise CheckpointFormatError("truncated checkpoint: missing version or count line")
    try:
        version = int(lines[0].strip())
        count = int(lines[1].strip())
    except ValueError:
        raise CheckpointFormatError(f"malformed header lines {lines[:2]!r}") from None
    if version != CHECKPOINT_VERSION:
        raise CheckpointFormatError(f"unrecognized checkpoint version {version}")
    if count < 0:
        raise CheckpointFormatError(f"negative entry count {count}")
    body = lines[2:]
    if len(body) != count:
        raise CheckpointFormatError(f"expected {count} entries but found {len(body)}")
    entries: list[EpochEntry] = []
    for line in body:
        parts = line.split()
        if len(parts) != 2:
            raise CheckpointFormatError(f"malformed entry line {line!r}")
        try:
            entries.append(EpochEntry(int(parts[0]), int(parts[1])))
        except ValueError:
            raise CheckpointFormatError(f"malformed entry line {line!r}") from None
    return entries
