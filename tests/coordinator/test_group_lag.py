"""Consumer-group lag from the coordinator's committed offsets (``coordinator.group.lag``)."""

from __future__ import annotations

from kraftwire.coordinator.group.lag import group_lags
from kraftwire.coordinator.group.model import OffsetEntry


def _e(offset: int) -> OffsetEntry:
    return OffsetEntry(offset=offset, leader_epoch=-1, metadata="", commit_timestamp=0)


def test_lag_is_the_distance_to_the_end_for_partitions_whose_end_is_known():
    shards = [{"g1": {("t", 0): _e(5), ("t", 1): _e(7)}}, {"g2": {("t", 0): _e(10), ("u", 0): _e(3)}}]
    ends = {("t", 0): 10, ("t", 1): 7}
    assert group_lags(shards, lambda t, p: ends.get((t, p))) == [("g1", "t", 0, 5), ("g1", "t", 1, 0),
                                                                 ("g2", "t", 0, 0)]


def test_a_commit_past_the_end_reads_no_lag():
    assert group_lags([{"g": {("t", 0): _e(12)}}], lambda t, p: 10) == [("g", "t", 0, 0)]
