"""A partition's transactions, pure: which are open, the last stable offset, and the aborted ones a
``read_committed`` consumer must skip (Kafka's ``ProducerStateManager`` transaction part and ``.txnindex``).

Fed batch headers in offset order (``apply``): a transactional data batch opens its producer's transaction at its
base offset (unless one is open); a control batch of the same producer — a COMMIT or ABORT marker — closes it, and
an ABORT records ``AbortedTxn(producer id, first offset, last offset = the marker's, last stable offset then)``,
the entry Kafka appends to the segment's ``.txnindex``.

The last stable offset is Kafka's (``ProducerStateManager.firstUnstableOffset``, ``UnifiedLog.lastStableOffset``):
a transaction is unstable while it is open and, once its marker is appended, until the high watermark passes the
marker (Kafka's "unreplicated" transactions: a marker not yet replicated may be lost on a leader change, and the
transaction would be open again). The first unstable offset is the first offset of the oldest such transaction,
never below the log start; the last stable offset is that, capped by the high watermark. A ``read_committed``
fetch stops there and is told the aborted transactions that overlap what it reads.

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
        #: first offset -> (producer id, marker offset) of a completed transaction whose marker is not yet below the
        #: high watermark (Kafka's ``unreplicatedTxns``); not in producer snapshots: folded again from the log
        self.unreplicated: dict[int, tuple[int, int]] = {}
        self.aborted: list[AbortedTxn] = []  # in marker order (last offsets ascending)
        self.high_watermark = 0  # the last one told (``on_high_watermark``)

    def first_undecided_offset(self) -> int | None:
        """The first offset of the oldest open transaction (None: none open), whatever the replication of the
        markers (Kafka's ``firstUndecidedOffset``)."""
        return min(self.ongoing.values()) if self.ongoing else None

    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest transaction that is open or whose marker the high watermark has not
        passed yet (None: none)."""
        undecided = self.first_undecided_offset()
        if not self.unreplicated:
            return undecided
        unreplicated = min(self.unreplicated)
        return unreplicated if undecided is None else min(undecided, unreplicated)

    def on_high_watermark(self, high_watermark: int) -> None:
        """The high watermark is now ``high_watermark``: completed transactions whose marker lies below it are stable
        (Kafka's ``onHighWatermarkUpdated``)."""
        self.high_watermark = high_watermark
        if self.unreplicated:
            self.unreplicated = {first: (pid, marker) for first, (pid, marker) in self.unreplicated.items()
                                 if marker >= high_watermark}

    def last_stable_offset(self, high_watermark: int, log_start: int = 0) -> int:
        """Kafka's LSO with the high watermark ``high_watermark`` (told to ``on_high_watermark`` first): the first
        unstable offset, raised to ``log_start``, capped by the high watermark."""
        self.on_high_watermark(high_watermark)
        first = self.first_unstable_offset()
        return high_watermark if first is None else min(max(first, log_start), high_watermark)

    def apply(self, producer_id: int, base_offset: int, last_offset: int, transactional: bool, control: bool,
              marker: int | None = None) -> AbortedTxn | None:
        """Fold one batch's header (``marker``: CONTROL_COMMIT / CONTROL_ABORT of a control batch); the AbortedTxn
        an abort marker records, else None. The AbortedTxn's last stable offset is Kafka's: the first offset of the
        oldest other transaction still open, else the marker's offset + 1."""
        if not transactional or producer_id < 0:
            return None
        if not control:
            self.ongoing.setdefault(producer_id, base_offset)
            return None
        first = self.ongoing.pop(producer_id, None)
        if marker not in (CONTROL_ABORT, CONTROL_COMMIT):
            raise ValueError(f"a transactional control batch at {base_offset} is not a COMMIT or ABORT marker")
        if first is None:
            return None
        if last_offset >= self.high_watermark:
            self.unreplicated[first] = (producer_id, last_offset)
        if marker != CONTROL_ABORT:
            return None
        undecided = self.first_undecided_offset()
        entry = AbortedTxn(producer_id, first, last_offset, last_offset + 1 if undecided is None else undecided)
        self.aborted.append(entry)
        return entry

    def aborted_between(self, start: int, end: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping ``[start, end)`` (what a read_committed fetch of that range is told)."""
        return [a for a in self.aborted if a.first_offset < end and a.last_offset >= start]

    def apply_batch(self, batch) -> AbortedTxn | None:
        """Fold a batch read from the log (a ``RecordBatch``): its header, and for a transactional control batch the
        marker its record holds."""
        if not batch.is_transactional or batch.producer_id < 0:
            return None
        marker = None
        if batch.is_control:
            marker, _epoch = read_marker(batch)
            if marker is None:
                return None
        return self.apply(batch.producer_id, batch.base_offset, batch.last_offset, True, batch.is_control, marker)

    def truncate_to(self, offset: int) -> None:
        """The log was cut at ``offset``: transactions opened past it and aborts recorded past it go; a transaction
        whose marker was cut is open again (the caller replays the kept tail to find it)."""
        self.ongoing = {pid: first for pid, first in self.ongoing.items() if first < offset}
        self.unreplicated = {first: (pid, marker) for first, (pid, marker) in self.unreplicated.items()
                             if marker < offset}
        self.aborted = [a for a in self.aborted if a.last_offset < offset]

    def delete_before(self, offset: int) -> None:
        """The log start moved to ``offset``: aborts wholly below it are of no use to any fetch, and completed
        transactions wholly below it hold nothing (Kafka's ``onLogStartOffsetIncremented``)."""
        self.aborted = [a for a in self.aborted if a.last_offset >= offset]
        if self.unreplicated:
            self.unreplicated = {first: (pid, marker) for first, (pid, marker) in self.unreplicated.items()
                                 if marker >= offset}


def fold_batch(producers, txns: PartitionTxns, batch) -> AbortedTxn | None:
    """Fold one batch read from the log (in offset order, as leader, follower or at a start) into the partition's
    producer table (``producers.ProducerTable``) and its transactions; the abort it records, else None. A
    transactional control batch counts as a marker only when it holds a COMMIT or ABORT (an emptied one, left by the
    cleaner, folds as a header)."""
    marker = coordinator = None
    if batch.is_control and batch.is_transactional:
        marker, coordinator = read_marker(batch)
    producers.apply_batch(batch, coordinator if marker in (CONTROL_ABORT, CONTROL_COMMIT) else None)
    if marker is None or marker in (CONTROL_ABORT, CONTROL_COMMIT):
        return txns.apply_batch(batch)
    return None
