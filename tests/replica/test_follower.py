"""A follower's truncation and out-of-range decisions (Kafka's fetcher rules)."""

from __future__ import annotations

from kraftwire.log.epoch_cache import LeaderEpochCache
from kraftwire.replica import follower as f


def _lookup(entries, log_end):
    cache = LeaderEpochCache(entries)
    return lambda epoch: cache.end_offset_for(epoch, log_end)


def test_truncation_after_a_diverging_epoch():
    # the follower knows epoch 2 (it started at 10 and ran to 20, epoch 3 started there)
    lookup = _lookup([(1, 0), (2, 10), (3, 20)], 25)
    assert f.truncation_offset(2, 15, lookup, 25) == 15  # the leader's epoch 2 ended earlier
    assert f.truncation_offset(2, 30, lookup, 25) == 20  # ... or later: our own end for it
    # an epoch it does not know: its own end of the largest epoch below (the next fetch checks again)
    lookup = _lookup([(1, 0), (4, 10)], 25)
    assert f.truncation_offset(3, 30, lookup, 25) == 10
    # no epochs at all: the leader's end, never past our own
    empty = _lookup([], 8)
    assert f.truncation_offset(5, 30, empty, 8) == 8 and f.truncation_offset(5, 3, empty, 8) == 3


def test_out_of_range():
    assert f.out_of_range(leader_end=5, leader_start=0, log_end=9) == (f.TRUNCATE, 5)
    assert f.out_of_range(leader_end=50, leader_start=20, log_end=9) == (f.RESTART, 20)
    assert f.out_of_range(leader_end=50, leader_start=0, log_end=9) == (f.FETCH, 9)
    assert f.follower_high_watermark(40, 30) == 30 and f.follower_high_watermark(20, 30) == 20
