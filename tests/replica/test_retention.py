"""Kafka's retention rules (``kraftwire.replica.retention``): which oldest segments go by time, by size and below the
log start, never above the high watermark, and the offset DeleteRecords asks for."""

from __future__ import annotations

from kraftwire.replica.retention import SegmentInfo, delete_records_offset, segments_to_delete

# four segments of 100 bytes at offsets 0, 10, 20, 30; the log ends at 40; timestamps 1000, 2000, 3000, 4000
SEGS = [SegmentInfo(b, 100, 1000 * (i + 1)) for i, b in enumerate((0, 10, 20, 30))]


def _go(segs=SEGS, *, start=0, end=40, hw=40, now=10_000, ms=-1, size=-1):
    d = segments_to_delete(segs, log_start=start, log_end=end, high_watermark=hw, now_ms=now, retention_ms=ms,
                           retention_bytes=size)
    return None if d is None else d.count


def test_nothing_goes_without_a_limit():
    assert _go() is None and _go([]) is None


def test_time_deletes_the_run_of_segments_older_than_retention_ms():
    assert _go(ms=7_500) == 2  # 10000-1000 and 10000-2000 exceed 7500; 10000-3000 does not
    assert _go(ms=0) == 4  # all of them, the active one too (the log rolls first)
    assert _go(ms=0, hw=25) == 2  # only segments wholly below the high watermark
    assert _go(ms=0, hw=39) == 3  # the last one ends at the log end
    late = [SEGS[0], SegmentInfo(10, 100, 9_999), *SEGS[2:]]
    assert _go(late, ms=7_500) == 1  # a run: a newer segment stops it


def test_size_deletes_while_the_log_stays_over_retention_bytes():
    assert _go(size=250) == 1  # 400 - 100 = 300 >= 250; 300 - 100 = 200 < 250 stops
    assert _go(size=200) == 2
    assert _go(size=400) is None and _go(size=500) is None
    assert _go(size=0) == 4


def test_segments_below_the_log_start_go_whatever_the_limits():
    assert _go(start=25) == 2  # the next segment starts at or below 25
    assert _go(start=40) == 3  # never the last one by this rule
    d = segments_to_delete(SEGS, log_start=25, log_end=40, high_watermark=40, now_ms=10_000, retention_ms=8_500,
                           retention_bytes=-1)
    assert d.count == 2 and "retention.ms" in d.reason and "log start" in d.reason


def test_an_empty_last_segment_never_goes():
    segs = [*SEGS, SegmentInfo(40, 0, -1)]
    assert _go(segs, ms=0) == 4


def test_delete_records_offset():
    assert delete_records_offset(-1, 17) == 17
    assert delete_records_offset(5, 17) == 5 and delete_records_offset(17, 17) == 17
    assert delete_records_offset(18, 17) is None and delete_records_offset(-2, 17) is None
