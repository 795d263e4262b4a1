"""The test-server workload checks committed offsets against what it appended, counts only its own epoch, and
resets when its node stops leading."""

from __future__ import annotations

import pytest

from kraftwire.raft.listener import Batch, LeaderAndEpoch
from kraftwire.tools.workload import Workload, WorkloadError, summary_dict


def _batch(base, last, epoch, size=8, control=False):
    records = () if control else tuple(bytes(size) for _ in range(last - base + 1))
    return Batch(base, last, epoch, 0, 100, records, control)


def _leading(epoch=3) -> Workload:
    w = Workload(1, throughput=1000, record_size=8, records_per_append=2)
    w.handle_leader_change(LeaderAndEpoch(1, epoch))
    return w


def test_commits_of_own_epoch_are_matched_and_counted():
    w = _leading()
    w.pending.extend([(11, 0.0), (13, 0.0), (15, 0.0)])
    w.in_flight = 6
    w.handle_commit([_batch(0, 9, 2), _batch(10, 10, 3, control=True), _batch(10, 13, 3), _batch(14, 15, 3)])
    assert w.error is None
    assert w.total_records == 6 and w.total_bytes == 48 and not w.pending and w.in_flight == 0
    assert w.histogram.count == 3


def test_a_skipped_offset_is_an_error():
    w = _leading()
    w.pending.extend([(11, 0.0), (13, 0.0)])
    w.handle_commit([_batch(12, 13, 3)])
    assert isinstance(w.error, WorkloadError)


def test_a_batch_ending_inside_an_append_is_an_error():
    w = _leading()
    w.pending.extend([(11, 0.0), (13, 0.0)])
    w.handle_commit([_batch(10, 12, 3)])
    assert isinstance(w.error, WorkloadError)


def test_resign_resets_and_other_leaders_batches_do_not_count():
    w = _leading()
    w.pending.append((11, 0.0))
    w.handle_leader_change(LeaderAndEpoch(2, 4))
    assert w.epoch is None and not w.pending
    w.handle_commit([_batch(10, 11, 4)])
    assert w.total_records == 0 and w.error is None


def test_a_clients_batch_between_appends_is_not_the_workloads():
    w = _leading()
    w.pending.extend([(13, 0.0)])
    w.in_flight = 2
    w.handle_commit([_batch(10, 11, 3, size=100), _batch(12, 13, 3)])
    assert w.error is None
    assert w.total_records == 2 and w.total_bytes == 16 and not w.pending


def test_throughput_zero_serves_only():
    w = Workload(1, throughput=0, record_size=8)
    w.handle_leader_change(LeaderAndEpoch(1, 3))
    assert w.epoch is None
    w.handle_commit([_batch(0, 4, 3)])
    assert w.total_records == 0 and w.error is None


@pytest.mark.parametrize("kwargs", [dict(throughput=-2), dict(records_per_append=0), dict(record_size=-1)])
def test_bad_flags(kwargs):
    with pytest.raises(ValueError):
        Workload(1, **kwargs)


def test_summary_shape():
    w = _leading()
    assert set(w.summary()) >= {"records_per_sec", "mb_per_sec", "commit_latency_ms"}
    assert set(summary_dict(0, 0, w.histogram)["commit_latency_ms"]) == {"p50", "p75", "p99", "p999"}
