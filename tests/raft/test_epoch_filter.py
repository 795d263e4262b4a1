"""KAFKA-18723 epoch filter: validate, accept the prefix up to the first batch above the follower's epoch."""

from __future__ import annotations

from kraftwire.raft.epoch_filter import filter_fetched
from kraftwire.records import RecordBatchBuilder


def batch(base: int, epoch: int, n: int = 1) -> bytes:
    b = RecordBatchBuilder(base_offset=base, partition_leader_epoch=epoch)
    for i in range(n):
        b.append(None, f"r{base + i}".encode(), timestamp=0)
    return b.build()


def run(data, epoch=3, leo=10, last=2, **kw):
    return filter_fetched(data, follower_epoch=epoch, log_end_offset=leo, last_epoch=last, **kw)


def test_empty_response_accepts_nothing():
    r = run(b"")
    assert r.records == b"" and r.end_offset == 10 and not r.rejected


def test_all_batches_at_or_below_the_epoch_are_accepted():
    data = batch(10, 2, 2) + batch(12, 3, 3)
    r = run(data)
    assert r.records == data and r.end_offset == 15 and r.last_epoch == 3 and r.batch_count == 2


def test_prefix_stops_before_first_batch_above_the_epoch_and_drops_the_rest():
    ok = batch(10, 3)
    data = ok + batch(11, 4) + batch(12, 3)
    r = run(data)
    assert r.records == ok and r.end_offset == 11 and r.dropped_batches == 2 and "above" in r.reason
    assert not r.rejected


def test_filter_off_mutation_accepts_higher_epochs():
    data = batch(10, 3) + batch(11, 4)
    assert run(data, epoch_filter=False).records == data


def test_corrupt_batch_rejects_the_whole_response_and_keeps_the_log_end():
    good = batch(10, 3)
    bad = bytearray(good + batch(11, 3))
    bad[-3] ^= 0xFF
    r = run(bytes(bad))
    assert r.rejected and r.records == b"" and r.end_offset == 10 and r.reason.startswith("corrupt")


def test_response_not_starting_at_the_log_end_is_stale():
    r = run(batch(9, 3))
    assert r.rejected and r.records == b"" and r.end_offset == 10


def test_trailing_partial_batch_is_not_corruption():
    whole = batch(10, 3)
    r = run(whole + batch(11, 3)[:20])
    assert not r.rejected and r.records == whole and r.end_offset == 11


def test_epoch_going_backwards_stops_the_prefix():
    data = batch(10, 3) + batch(11, 2)
    r = run(data)
    assert r.records == batch(10, 3) and r.end_offset == 11


from hypothesis import given, strategies as st  # noqa: E402


@given(
    epochs=st.lists(st.integers(-1, 6), min_size=1, max_size=8),
    sizes=st.lists(st.integers(1, 3), min_size=8, max_size=8),
    follower_epoch=st.integers(0, 6),
    last=st.integers(0, 3),
)
def test_accepted_part_is_a_prefix_within_the_epoch(epochs, sizes, follower_epoch, last):
    offset, data = 10, b""
    for epoch, n in zip(epochs, sizes):
        data += batch(offset, epoch, n)
        offset += n
    r = run(data, epoch=follower_epoch, last=last)
    assert data.startswith(r.records) and not r.rejected
    kept = validate_batches_or_empty(r.records)
    assert all(b.partition_leader_epoch <= follower_epoch for b in kept)
    assert r.end_offset == (kept[-1].last_offset + 1 if kept else 10)
    assert r.batch_count + r.dropped_batches == len(epochs)


def validate_batches_or_empty(data):
    from kraftwire.records import validate_batches

    return validate_batches(data).batches if data else []
