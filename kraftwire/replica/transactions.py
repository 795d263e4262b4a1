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

from kraftwire.records.api import CONTROL_ABORT, CONTROL_COMMIT, CONTROL_KEY_STRUCT, parse_control_key

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


#: an end-transaction marker's value (Kafka's ``EndTransactionMarker``): int16 version 0, int32 coordinator epoch
_MARKER_VALUE = struct.Struct(">hi")


def marker_key(commit: bool) -> bytes:
    """The control record key of a COMMIT / ABORT marker: int16 version 0, int16 type (0 ABORT, 1 COMMIT)."""
    return CONTROL_KEY_STRUCT.pack(0, CONTROL_COMMIT if commit else CONTROL_ABORT)


def marker_value(coordinator_epoch: int) -> bytes:
    return _MARKER_VALUE.pack(0, coordinator_epoch)


def read_marker(batch) -> tuple[int | None, int]:
    """(CONTROL_COMMIT / CONTROL_ABORT / another control type, coordinator epoch) of a control batch's first record;
    (None, -1) for an empty control batch (its transaction was cleaned away, as Kafka says)."""
    for record in batch:
        _version, ctype = parse_control_key(record.key)
        value = record.value
        epoch = _MARKER_VALUE.unpack_from(value, 0)[1] if value is not None and len(value) >= _MARKER_VALUE.size \
            else -1
        return ctype, epoch
    return None, -1


def by_segment(entries: list[AbortedTxn], bases: list[int]) -> dict[int, list[AbortedTxn]]:
    """Which segment's ``.txnindex`` holds each entry: the segment (by base offset, ``bases`` ascending) holding its
    marker (``last_offset``), in marker order; entries below the first base go nowhere."""
    out: dict[int, list[AbortedTxn]] = {}
    for e in sorted(entries, key=lambda a: a.last_offset):
        base = None
        for b in bases:
            if b > e.last_offset:
                break
            base = b
        if base is not None:
            out.setdefault(base, []).append(e)
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

    def apply_batch(self, batch) -> AbortedTxn | None:
        """Fold a batch read from the log (a ``RecordBatch``): its header, and for a transactional control batch the
        marker its record holds. The AbortedTxn's last stable offset is Kafka's: the first offset of the oldest
        transaction still open, else the marker's offset + 1."""
        if not batch.is_transactional or batch.producer_id < 0:
            return None
        marker = None
        if batch.is_control:
            marker, _epoch = read_marker(batch)
            if marker is None:
                return None
        return self.apply(batch.producer_id, batch.base_offset, batch.last_offset, True, batch.is_control, marker,
                          high_watermark=batch.last_offset + 1)

    def truncate_to(self, offset: int) -> None:
        """The log was cut at ``offset``: transactions opened past it and aborts recorded past it go; a transaction
        whose marker was cut is open again (the caller replays the kept tail to find it)."""
        self.ongoing = {pid: first for pid, first in self.ongoing.items() if first < offset}
        self.aborted = [a for a in self.aborted if a.last_offset < offset]

    def delete_before(self, offset: int) -> None:
        """The log start moved to ``offset``: aborts wholly below it are of no use to any fetch."""
        self.aborted = [a for a in self.aborted if a.last_offset >= offset]
