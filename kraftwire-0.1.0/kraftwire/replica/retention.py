"""Which old segments of a partition's log go (Kafka's ``UnifiedLog.deleteOldSegments``; facts in
kafka-replication-facts.md §4). Pure: the replica manager passes each log's segments and executes the answer.

Three passes, in Kafka's order, each deleting a run of the oldest segments while its predicate holds:

* **time** (``retention.ms``, -1: off): the segment's largest timestamp is more than ``retention.ms`` before now;
* **size** (``retention.bytes``, -1: off): the log minus the segments already marked is still over the limit by at
  least this segment's size;
* **log start** (always): the next segment starts at or below the log start offset (DeleteRecords, or a follower
  following its leader's log start).

DeleteRecords (``delete_records_offset``) asks for a new log start on the leader: -1 means the high watermark; a
negative offset or one past the high watermark is out of range.

A segment is only deletable once it is entirely below the high watermark (its next segment's base, or the log end
for the last one, at or below it), and an empty last segment never is. Deleting every segment rolls a new empty one
first, so the log keeps its end; the log start becomes the first remaining segment's base (never lower).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from kraftwire.log.partition_rules import SegmentInfo

__all__ = ["SegmentInfo", "Deletion", "segments_to_delete", "delete_records_offset"]


class Deletion(NamedTuple):
    count: int  # the first ``count`` segments go
    reason: str  # for the log line


def segments_to_delete(segments: Sequence[SegmentInfo], *, log_start: int, log_end: int, high_watermark: int,
                       now_ms: int, retention_ms: int, retention_bytes: int) -> Deletion | None:
    if not segments:
        return None
    gone = 0

    def run(predicate) -> int:
        n = gone
        while n < len(segments):
            seg = segments[n]
            last = n + 1 == len(segments)
            upper = log_end if last else segments[n + 1].base_offset
            if high_watermark < upper or (last and seg.size == 0) or not predicate(n, seg):
                break
            n += 1
        return n

    reasons = []
    if retention_ms >= 0:
        n = run(lambda i, seg: now_ms - seg.largest_timestamp > retention_ms)
        if n > gone:
            reasons.append(f"retention.ms {retention_ms} passed")
            gone = n
    if retention_bytes >= 0:
        excess = [sum(s.size for s in segments[gone:]) - retention_bytes]

        def over(i, seg) -> bool:
            if excess[0] - seg.size < 0:
                return False
            excess[0] -= seg.size
            return True

        n = run(over)
        if n > gone:
            reasons.append(f"retention.bytes {retention_bytes} exceeded")
            gone = n
    n = run(lambda i, seg: i + 1 < len(segments) and segments[i + 1].base_offset <= log_start)
    if n > gone:
        reasons.append(f"below the log start offset {log_start}")
        gone = n
    return Deletion(gone, "; ".join(reasons)) if gone else None


def delete_records_offset(offset: int, high_watermark: int) -> int | None:
    """The log start a DeleteRecords ``offset`` asks for, None when it is out of range."""
    target = high_watermark if offset == -1 else offset
    return target if 0 <= target <= high_watermark else None
