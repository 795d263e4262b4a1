"""Kafka's producer state snapshot (``<offset>.snapshot`` in a partition directory, ``ProducerSnapshot`` v1): the
idempotent producers' table as of an offset, so a restarted broker folds only the batches after it instead of the
whole log. Pure: bytes in, bytes out.

Layout (big-endian)::

    int16  version (1)
    uint32 CRC-32C of everything after this field
    int32  entry count, then per producer:
        int64 producer id, int16 epoch, int32 last sequence, int64 last offset, int32 offset delta (last offset -
        the last batch's first offset), int64 timestamp (the last batch's max timestamp), int32 coordinator epoch,
        int64 current transaction's first offset (-1: none)

Kafka keeps only each producer's last batch here; a duplicate of an earlier batch among the last five is then no
longer recognised after a restart, as in Kafka.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import crc32c

from kraftwire.log.partition_rules import (PRODUCER_SNAPSHOT_SUFFIX, parse_producer_snapshot_name,
                                            producer_snapshot_name)
from kraftwire.replica.producers import SEQ_MOD, ProducerEntry, ProducerTable

__all__ = ["SUFFIX", "CorruptProducerSnapshot", "SnapshotEntry", "encode", "decode", "decode_with_txns", "entries",
           "snapshot_name", "parse_snapshot_name"]

SUFFIX = PRODUCER_SNAPSHOT_SUFFIX
snapshot_name = producer_snapshot_name
parse_snapshot_name = parse_producer_snapshot_name
VERSION = 1
_HEAD = struct.Struct(">hI")
_COUNT = struct.Struct(">i")
_ENTRY = struct.Struct(">qhiqiqiq")


class CorruptProducerSnapshot(ValueError):
    pass


class SnapshotEntry(NamedTuple):
    """One producer's entry as the file holds it (``last_offset`` -1: no batch; ``current_txn_first_offset`` -1: no
    open transaction)."""
    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int


def encode(table: ProducerTable, ongoing: dict[int, int] | None = None) -> bytes:
    """The snapshot of ``table``; ``ongoing`` (producer id -> first offset of its open transaction) fills each
    entry's CurrentTxnFirstOffset."""
    ongoing = ongoing or {}
    entries = []
    for pid, entry in sorted(table.items()):
        txn = ongoing.get(pid, -1)
        if entry.batches:
            first_seq, last_seq, first_offset, last_offset, _ = entry.batches[-1]
            entries.append(_ENTRY.pack(pid, entry.epoch, last_seq, last_offset, last_offset - first_offset,
                                       entry.timestamp, entry.coordinator_epoch, txn))
        elif entry.marker_offset >= 0:  # only a marker since its epoch began: no sequence yet (-1)
            entries.append(_ENTRY.pack(pid, entry.epoch, -1, entry.marker_offset, 0, entry.timestamp,
                                       entry.coordinator_epoch, txn))
    body = _COUNT.pack(len(entries)) + b"".join(entries)
    return _HEAD.pack(VERSION, crc32c.crc32c(body)) + body


def decode(data: bytes) -> ProducerTable:
    """The table a snapshot holds; ``CorruptProducerSnapshot`` for a bad version, CRC or length."""
    return decode_with_txns(data)[0]


def entries(data: bytes) -> list[SnapshotEntry]:
    """The entries a snapshot holds, as written; ``CorruptProducerSnapshot`` for a bad version, CRC or length."""
    if len(data) < _HEAD.size + _COUNT.size:
        raise CorruptProducerSnapshot(f"{len(data)} bytes is too short for a producer snapshot")
    version, crc = _HEAD.unpack_from(data, 0)
    if version != VERSION:
        raise CorruptProducerSnapshot(f"unknown producer snapshot version {version}")
    body = memoryview(data)[_HEAD.size:]
    if crc32c.crc32c(body) != crc:
        raise CorruptProducerSnapshot("the producer snapshot's CRC does not match its contents")
    (count,) = _COUNT.unpack_from(body, 0)
    if count < 0 or len(body) != _COUNT.size + count * _ENTRY.size:
        raise CorruptProducerSnapshot(f"{count} entries do not fit {len(body)} bytes")
    return [SnapshotEntry(*_ENTRY.unpack_from(body, _COUNT.size + i * _ENTRY.size)) for i in range(count)]


def decode_with_txns(data: bytes) -> tuple[ProducerTable, dict[int, int]]:
    """(the table, producer id -> first offset of its open transaction) a snapshot holds."""
    table, ongoing = ProducerTable(), {}
    for pid, epoch, last_seq, last_offset, delta, ts, coordinator, txn in entries(data):
        if last_offset < 0:
            continue
        if delta < 0:
            raise CorruptProducerSnapshot(f"producer {pid} has a negative offset delta {delta}")
        if txn >= 0:
            ongoing[pid] = txn
        if last_seq < 0:  # an epoch begun by a marker, no batch yet
            table[pid] = ProducerEntry(epoch, timestamp=ts, coordinator_epoch=coordinator, marker_offset=last_offset)
            continue
        first_seq = (last_seq - delta) % SEQ_MOD  # a batch's records take consecutive offsets and sequences
        table.apply(pid, epoch, first_seq, delta + 1, last_offset - delta, last_offset, timestamp=ts)
        table[pid].coordinator_epoch = coordinator
    return table, ongoing
