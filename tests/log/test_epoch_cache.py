"""LeaderEpochCache against a model written directly from the rules (filter-based, not tail-popping)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftwire.log.epoch_cache import (
    CheckpointFormatError,
    EpochEntry,
    LeaderEpochCache,
    format_checkpoint,
    parse_checkpoint,
)


# ----------------------------------------------------------------------------------------------- the model


def model_assign(entries: list[tuple[int, int]], e: int, o: int) -> list[tuple[int, int]]:
    if entries and entries[-1][0] == e and o >= entries[-1][1]:
        return entries
    # Entries are increasing in both fields, so "remove from the tail those with epoch >= e or start >= o"
    # is the same as keeping exactly those with epoch < e and start < o.
    return [(ep, so) for ep, so in entries if ep < e and so < o] + [(e, o)]


def model_end_offset_for(entries, e, leo):
    if e == -1 or not entries:
        return (-1, -1)
    if entries[-1][0] == e:
        return (e, leo)
    higher = [x for x in entries if x[0] > e]
    lower_or_equal = [x for x in entries if x[0] <= e]
    if not higher:
        return (-1, -1)
    if not lower_or_equal:
        return (e, higher[0][1])
    return (max(lower_or_equal)[0], min(higher)[1])


def model_truncate_from_end(entries, o):
    return [x for x in entries if x[1] < o] if o >= 0 else entries


def model_truncate_from_start(entries, o):
    before = [x for x in entries if x[1] <= o]
    after = [x for x in entries if x[1] > o]
    if not before:
        return entries
    return [(before[-1][0], o)] + after


ops = st.lists(
    st.one_of(
        st.tuples(st.just("assign"), st.integers(0, 8), st.integers(0, 60)),
        st.tuples(st.just("end"), st.integers(-1, 60), st.just(0)),
        st.tuples(st.just("start"), st.integers(0, 60), st.just(0)),
        st.tuples(st.just("clear"), st.just(0), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=300)
@given(ops, st.integers(-1, 10), st.integers(0, 80))
def test_cache_matches_model(operations, query_epoch, leo):
    cache = LeaderEpochCache()
    model: list[tuple[int, int]] = []
    for op, a, b in operations:
        if op == "assign":
            before = list(model)
            changed = cache.assign(a, b)
            model = model_assign(model, a, b)
            assert changed == (model != before)
        elif op == "end":
            cache.truncate_from_end(a)
            model = model_truncate_from_end(model, a)
        elif op == "start":
            cache.truncate_from_start(a)
            model = model_truncate_from_start(model, a)
        else:
            cache.clear()
            model = []
        got = [(x.epoch, x.start_offset) for x in cache.entries()]
        assert got == model
        # Invariant: strictly increasing in both epoch and start offset.
        assert all(p[0] < q[0] and p[1] < q[1] for p, q in zip(got, got[1:]))
    assert cache.end_offset_for(query_epoch, leo) == model_end_offset_for(model, query_epoch, leo)
    assert parse_checkpoint(format_checkpoint(cache.entries())) == list(cache.entries())


def test_end_offset_for_examples_from_the_rules():
    cache = LeaderEpochCache([(1, 0), (3, 10), (5, 20)])
    assert cache.end_offset_for(5, 30) == (5, 30)  # latest epoch: the log end offset
    assert cache.end_offset_for(6, 30) == (-1, -1)  # above the latest
    assert cache.end_offset_for(0, 30) == (0, 0)  # below the first: its start offset
    assert cache.end_offset_for(2, 30) == (1, 10)  # floor epoch, start of the next entry
    assert cache.end_offset_for(3, 30) == (3, 20)
    assert cache.end_offset_for(-1, 30) == (-1, -1)
    assert LeaderEpochCache().end_offset_for(0, 5) == (-1, -1)


def test_assign_rules():
    cache = LeaderEpochCache()
    assert cache.assign(2, 5)
    assert not cache.assign(2, 7)  # same epoch, later offset: no-op
    assert cache.assign(2, 3)  # same epoch, earlier offset: replaces
    assert cache.entries() == (EpochEntry(2, 3),)
    assert cache.assign(4, 10)
    assert cache.assign(3, 12)  # lower epoch removes the tail entry with epoch >= 3
    assert cache.entries() == (EpochEntry(2, 3), EpochEntry(3, 12))
    assert cache.assign(5, 8)  # earlier offset removes entries starting at >= 8
    assert cache.entries() == (EpochEntry(2, 3), EpochEntry(5, 8))
    with pytest.raises(ValueError):
        cache.assign(-1, 0)
    with pytest.raises(ValueError):
        cache.assign(1, -1)


def test_truncation_rules():
    cache = LeaderEpochCache([(1, 0), (3, 10), (5, 20)])
    cache.truncate_from_start(15)
    assert cache.entries() == (EpochEntry(3, 15), EpochEntry(5, 20))
    cache.truncate_from_end(20)
    assert cache.entries() == (EpochEntry(3, 15),)
    assert cache.epoch_for_offset(14) is None and cache.epoch_for_offset(16) == 3


def test_checkpoint_text_is_byte_exact():
    text = format_checkpoint([EpochEntry(0, 0), EpochEntry(3, 127), EpochEntry(12, 100000)])
    assert text == "0\n3\n0 0\n3 127\n12 100000\n"
    assert format_checkpoint([]) == "0\n0\n"


@pytest.mark.parametrize(
    "bad",
    ["", "0\n", "1\n0\n", "0\n2\n1 0\n", "0\n1\n1 0\n2 5\n", "0\n1\n1\n", "0\n1\nx y\n", "0\nz\n"],
)
def test_checkpoint_parse_rejects_malformed(bad):
    with pytest.raises(CheckpointFormatError):
        parse_checkpoint(bad)


def test_checkpoint_parse_accepts_extra_whitespace():
    assert parse_checkpoint("0\n1\n4   9\n") == [EpochEntry(4, 9)]
