"""The parked Fetch's readiness rule (``kraftwire.replica.fetch_readiness``), mirroring the cases of Kafka's
``DelayedFetchTest`` that apply (a diverging epoch is answered at once, never parked, so its case has no twin
here), and the log position check it relies on (``SegmentedLog.bytes_between``) against real reads."""

from __future__ import annotations

import pytest

from kraftwire.log.api import Isolation
from kraftwire.log.segmented import SegmentedLog
from kraftwire.replica.fetch_readiness import HIGH_WATERMARK, PartitionNow, Watched, fetch_ready
from kraftwire.replica.partition import FOLLOWER, LEADER
from harness.batches import make_batch

KEY = ("t", 0)


def _now(*, epoch=5, role=LEADER, failed=False, start=0, end=100, upper=100, per_offset=10):
    return PartitionNow(epoch, role, failed, start, end, upper, lambda offset, limit: (limit - offset) * per_offset)


def _watched(offset=50, bound=HIGH_WATERMARK, epoch=5, role=LEADER, key=KEY):
    return Watched(key, offset, bound, epoch, role)


def test_nothing_new_keeps_waiting():
    assert not fetch_ready([(_watched(offset=100), _now())], 1)


def test_fenced_epoch_completes():  # DelayedFetchTest.testFetchWithFencedEpoch
    assert fetch_ready([(_watched(offset=100), _now(epoch=6))], 1)


def test_not_leader_or_follower_completes():  # DelayedFetchTest.testNotLeaderOrFollower
    assert fetch_ready([(_watched(offset=100), _now(role=FOLLOWER))], 1)
    assert fetch_ready([(_watched(offset=100), None)], 1)  # no longer hosted here
    assert fetch_ready([(_watched(offset=100), _now(failed=True))], 1)  # its log dir failed


def test_offset_out_of_range_completes():  # DelayedFetch case C: the log was truncated below, or its start moved past
    assert fetch_ready([(_watched(offset=100), _now(end=90, upper=90))], 1)
    assert fetch_ready([(_watched(offset=100), _now(start=120, end=130, upper=100))], 1)


def test_min_bytes_accumulate_over_partitions():  # DelayedFetch case D
    a, b = _watched(offset=98, key=("t", 0)), _watched(offset=99, key=("t", 1))
    now = _now(per_offset=10)
    assert not fetch_ready([(a, now), (b, now)], 31)  # 20 + 10 bytes
    assert fetch_ready([(a, now), (b, now)], 30)
    assert fetch_ready([(a, now)], 0)  # MinBytes 0 counts as 1


def test_consumer_waits_for_the_high_watermark_not_the_log_end():
    # DelayedFetchTest.testDelayedFetchWithMessageOnlyHighWatermark: appended but not committed is not readable
    w = _watched(offset=100, bound=HIGH_WATERMARK)
    assert not fetch_ready([(w, _now(end=110, upper=100))], 1)
    assert fetch_ready([(w, _now(end=110, upper=101))], 1)


@pytest.mark.parametrize("segment_bytes", [600, 1 << 20])
def test_bytes_between_is_never_below_what_a_read_returns(tmp_path, segment_bytes):
    lg = SegmentedLog(str(tmp_path / "t-0"), segment_bytes=segment_bytes)
    try:
        for i in range(30):
            lg.append_as_leader(make_batch(1 + i % 3, value_size=20 + i, epoch=1), 1)
        end = lg.end_offset()
        for offset in range(0, end):
            assert lg.bytes_between(offset, offset) == 0
            for limit in range(offset + 1, end + 1):
                got = len(lg.read(offset, 1 << 20, Isolation.UNCOMMITTED, limit=limit).records)
                between = lg.bytes_between(offset, limit)
                assert between >= got
                if segment_bytes > lg.size_in_bytes():  # one segment, its batches' positions known: exact
                    assert between == got
        assert lg.bytes_between(0, end) == lg.size_in_bytes()
    finally:
        lg.close()
