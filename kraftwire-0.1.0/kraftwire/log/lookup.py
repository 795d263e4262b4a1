"""Reads over a log's committed batches that ListOffsets needs: walking batches in growing pieces, the first record at
or after a timestamp, and the record with the largest timestamp (Kafka's lookups, facts in kafka-replication-facts.md
§6). Shared by every log a client can read: the test server's Raft log and a broker's topic partitions.
"""

from __future__ import annotations

from kraftwire.log.api import Isolation
from kraftwire.records import read_batches

__all__ = ["batches_between", "offset_for_timestamp", "max_timestamp", "SCAN_CHUNK", "FIRST_SCAN_CHUNK"]

SCAN_CHUNK = 4 * 1024 * 1024
FIRST_SCAN_CHUNK = 64 * 1024


def batches_between(lg, start: int, end: int, isolation: Isolation, *, first_chunk: int = SCAN_CHUNK,
                    max_chunk: int = SCAN_CHUNK):
    """The batches holding offsets in [start, end), oldest first, read in pieces growing from ``first_chunk`` to
    ``max_chunk`` (a short lookup reads little; a long walk reads in large pieces)."""
    pos, chunk = start, first_chunk
    while pos < end:
        info = lg.read(pos, chunk, isolation)
        chunk = min(chunk * 4, max_chunk)
        if not len(info.records):
            return
        for b in read_batches(info.records, validate=False):
            if b.last_offset < pos:
                continue
            if b.base_offset >= end:
                return
            pos = b.last_offset + 1
            yield b


def _committed_data_batches(lg, pos: int, end: int):
    """Committed data batches (control batches skipped) holding offsets in [pos, end); a lookup usually ends in the
    first batches read, so the pieces start small and grow."""
    for b in batches_between(lg, pos, min(end, lg.high_watermark()), Isolation.COMMITTED,
                             first_chunk=FIRST_SCAN_CHUNK, max_chunk=SCAN_CHUNK):
        if not b.is_control:
            yield b


def offset_for_timestamp(lg, ts: int) -> tuple[int, int, int]:
    """(offset, timestamp, batch leader epoch) of the first committed data record with timestamp ≥ ``ts``, or
    (-1, -1, -1). As Kafka: segments whose largest timestamp is below ``ts`` are skipped and the scan starts at the
    ``.timeindex`` entry (``timestamp_search_ranges``); a record's timestamp is its CreateTime, or the batch max
    timestamp for a LogAppendTime batch (the codec's rule)."""
    start = lg.start_offset()
    for lo, hi in lg.timestamp_search_ranges(ts):
        for b in _committed_data_batches(lg, max(lo, start), hi):
            if b.max_timestamp < ts:
                continue
            for r in b:
                if r.timestamp >= ts and r.offset >= start:
                    return r.offset, r.timestamp, b.partition_leader_epoch
    return -1, -1, -1


def max_timestamp(lg) -> tuple[int, int, int]:
    """(offset, timestamp, batch leader epoch) of the first committed data record carrying the largest timestamp,
    or (-1, -1, -1). Segments are visited by their largest timestamp, newest first, and the walk stops at one that
    cannot hold a larger one (Kafka keeps that maximum per segment for this lookup)."""
    start = lg.start_offset()
    best = (-1, -1, -1)
    for bound, lo, hi in sorted(lg.timestamp_ranges(), key=lambda r: (-r[0], r[1])):
        if bound < best[1]:
            break
        for b in _committed_data_batches(lg, max(lo, start), hi):
            if b.max_timestamp < best[1]:
                continue
            for r in b:
                if r.timestamp == b.max_timestamp:
                    if r.timestamp > best[1] or r.offset < best[0]:
                        best = (r.offset, r.timestamp, b.partition_leader_epoch)
                    break
    return best
