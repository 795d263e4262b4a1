"""A partition's transactions, pure: which are open, the last stable offset, and the aborted ones a
``read_committed`` consumer must skip (Kafka's ``ProducerStateManager`` transaction part and ``.txnindex``).

Fed batch headers in offset order (``apply``): a transactional data batch opens its producer's transaction at its
base offset (unless one is open); a control batch of the same producer — a COMMIT or ABORT marker — closes it, and
an ABORT records ``AbortedTxn(producer id, first offset, last offset = the marker's, last stable offset then)``,
the entry Kafka appends to the segment's ``.txnindex``. The last stable offset is the first offset of the oldest
open transaction, capped by the high watermark; a ``read_committed`` fetch stops there and is told the aborted
transactions that overlap what it reads.

The ``.txnindex`` layout (Kafka's ``AbortedTxn``): int16 version 0, int64 producer id, int64 first offset, int64 last
offset, int64 last stable offset — 34 bytes per entry.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kraftwire.records.api import CONTROL_ABORT, CONTROL_COMMIT

_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def encode_txn_index(entries: list[AbortedTxn]) -> bytes:
    return b"".join(_ENTRY.pack(0, *e) for e in entries)


def decode_txn_index(data: bytes) -> list[AbortedTxn]:
    """The entries of a ``.txnindex`` file; a torn last entry (a crash mid-write) is dropped."""
    out = []
    for pos in range(0, len(data) - ENTRY_SIZE + 1, ENTRY_SIZE):
        version, pid, first, last, lso = _ENTRY.unpack_from(data, pos)
        if version != 0:
            raise ValueError(f"unsupported .txnindex entry version {version} at byte {pos}")
        out.append(AbortedTxn(pid, first, last, lso))
    return out


class PartitionTxns:
    def __init__(self) -> None:
        self.ongoing: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self.aborted: list[AbortedTxn] = []  # in marker order (last offsets ascending)

    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest open transaction (None: none open)."""
        return min(self.ongoing.values()) if self.ongoing else None

    def last_stable_offset(self, high_watermark: int) -> int:
        first = self.first_unstable_offset()
        return high_watermark if first is None else min(first, high_watermark)

    def apply(self, producer_id: int, base_offset: int, last_offset: int, transactional: bool, control: bool,
              marker: int | None = None, high_watermark: int = 0) -> AbortedTxn | None:
        """Fold one batch's header (``marker``: CONTROL_COMMIT / CONTROL_ABORT of a control batch); the AbortedTxn
        an abort marker records, else None."""
        if not transactional or producer_id < 0:
            return None
        if not control:
            self.ongoing.setdefault(producer_id, base_offset)
            return None
        first = self.ongoing.pop(producer_id, None)
        if marker != CONTROL_ABORT or first is None:
            if marker not in (CONTROL_ABORT, CONTROL_COMMIT):
                raise ValueError(f"a transactional control batch at {base_offset} is not a COMMIT or ABORT marker")
            return None
        entry = AbortedTxn(producer_id, first, last_offset, self.last_stable_offset(high_watermark))
        self.aborted.append(entry)
        return entry

    def aborted_between(self, start: int, end: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping ``[start, end)`` (what a read_committed fetch of that range is told)."""
        return [a for a in self.aborted if a.first_offset < end and a.last_offset >= start]

    def truncate_to(self, offset: int) -> None:
        """The log was cut at ``offset``: transactions opened past it and aborts recorded past it go; a transaction
        whose marker was cut is open again (the caller replays the kept tail to find it)."""
        self.ongoing = {pid: first for pid, first in self.ongoing.items() if first < offset}
        self.aborted = [a for a in self.aborted if a.last_offset < offset]

    def delete_before(self, offset: int) -> None:
        """The log start moved to ``offset``: aborts wholly below it are of no use to any fetch."""
        self.aborted = [a for a in self.aborted if a.last_offset >= offset]
