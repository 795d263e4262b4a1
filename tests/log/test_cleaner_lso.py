"""The cleaner never rewrites a segment reaching the first offset of an open transaction (Kafka: offsets at or past
the last stable offset are uncleanable)."""

from __future__ import annotations

from types import SimpleNamespace

from kraftwire.log.cleaner import CleanerConfig, cleanable_segments


def _log(hw: int, unstable=None):
    segs = [SimpleNamespace(base_offset=b, next_offset=n, max_timestamp=0) for b, n in ((0, 10), (10, 20), (20, 30),
                                                                                          (30, 30))]
    lg = SimpleNamespace(_segments=segs, high_watermark=lambda: hw)
    if unstable is not None:
        lg.first_unstable_offset = unstable
    return lg


def test_cleanable_segments_stop_below_an_open_transaction():
    cfg = CleanerConfig(delete_retention_ms=0, min_compaction_lag_ms=0, min_cleanable_dirty_ratio=0.5,
                        dedupe_buffer_size=1 << 20)
    assert [s.base_offset for s in cleanable_segments(_log(30), 0, cfg)] == [0, 10, 20]
    assert [s.base_offset for s in cleanable_segments(_log(30, 15), 0, cfg)] == [0]
    assert [s.base_offset for s in cleanable_segments(_log(30, None), 0, cfg)] == [0, 10, 20]
    assert [s.base_offset for s in cleanable_segments(_log(25, 20), 0, cfg)] == [0, 10]
