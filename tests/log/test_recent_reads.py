"""The active segment serves reads of its latest appends from the appended buffers: every read must return exactly
what a read from the file returns, across appends of every buffer kind, truncations and rolls."""

from __future__ import annotations

import os

from hypothesis import given, settings, strategies as st

from kraftwire.log import segment as segment_module
from kraftwire.log.api import Isolation
from kraftwire.log.segmented import SegmentedLog
from kraftwire.records import read_batches

from harness.batches import make_batch

_ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 5), st.integers(1, 300), st.sampled_from(["bytes", "view",
                                                                                              "bytearray"])),
        st.tuples(st.just("truncate"), st.integers(0, 40)),
        st.tuples(st.just("read"), st.integers(0, 60), st.integers(1, 4000), st.integers(0, 60)),
    ),
    max_size=40,
)


def _from_file(log, offset, max_bytes, limit):
    """The same read with every segment's remembered appends set aside (so it comes from the file)."""
    saved = [(seg._recent, seg._recent_positions, seg._recent_bytes) for seg in log._segments]
    for seg in log._segments:
        seg._forget()
    try:
        return bytes(log.read(offset, max_bytes, limit=limit).records)
    finally:
        for seg, (recent, positions, size) in zip(log._segments, saved):
            seg._recent, seg._recent_positions, seg._recent_bytes = recent, positions, size


def _check_contract(log, got: bytes, offset: int, max_bytes: int, limit: int) -> None:
    """Whole batches from the one holding ``offset``, all ending below ``limit``, as many as fit in ``max_bytes``
    within a segment (at least one): judged against every batch of the log, read whole."""
    everything = bytes(log.read(0, 1 << 30).records) if log.end_offset() else b""
    batches = [(b.base_offset, b.last_offset, b.size_in_bytes) for b in read_batches(everything)]
    wanted = [b for b in batches if b[1] >= offset and b[1] < limit]
    got_batches = [(b.base_offset, b.last_offset, b.size_in_bytes) for b in read_batches(got)]
    assert got_batches == wanted[:len(got_batches)]
    if wanted:
        assert got_batches, (offset, limit)
    if len(got_batches) < len(wanted) and len(got_batches) > 0:
        assert sum(b[2] for b in wanted[:len(got_batches) + 1]) > max_bytes or len(log._segments) > 1


def _served_from_memory(log) -> bool:
    return any(seg._recent for seg in log._segments)


@settings(max_examples=60, deadline=None)
@given(ops=_ops)
def test_reads_from_memory_equal_reads_from_the_file(tmp_path_factory, ops):
    directory = str(tmp_path_factory.mktemp("recent") / "t-0")
    original = segment_module.RECENT_BYTES
    segment_module.RECENT_BYTES = 2000  # small: the remembered window slides within a few appends
    log = SegmentedLog(directory, segment_bytes=6000)  # and segments roll
    try:
        for op in ops:
            if op[0] == "append":
                _, count, size, kind = op
                data = make_batch(count, value_size=size, epoch=1) + make_batch(1, value_size=size // 2, epoch=1)
                if kind == "view":
                    data = memoryview(data)
                elif kind == "bytearray":
                    data = bytearray(data)
                log.append_as_leader(data, 1)
                if kind == "bytearray":
                    data[:] = b"\xee" * len(data)  # whoever appended may reuse its buffer
            elif op[0] == "truncate":
                target = min(op[1], log.end_offset())
                log.update_high_watermark(0)
                if target < log.end_offset():
                    log.truncate_to(target)
            else:
                _, offset, max_bytes, span = op
                if offset > log.end_offset():
                    continue
                limit = offset + span
                got = bytes(log.read(offset, max_bytes, limit=limit).records)
                assert got == _from_file(log, offset, max_bytes, limit)
                _check_contract(log, got, offset, max_bytes, limit)
        log.flush()
        end = log.end_offset()
        for offset in range(0, end, 3):
            got = bytes(log.read(offset, 1 << 20, Isolation.UNCOMMITTED).records)
            assert got == _from_file(log, offset, 1 << 20, None)
    finally:
        segment_module.RECENT_BYTES = original
        log.close()
        assert os.path.isdir(directory)


def test_a_read_of_the_latest_append_is_a_view_of_it_and_mutable_buffers_are_not_kept(tmp_path):
    log = SegmentedLog(str(tmp_path / "t-0"))
    try:
        data = make_batch(3, epoch=1)
        log.append_as_leader(data, 1)
        assert _served_from_memory(log)
        records = log.read(0, 1 << 20).records
        assert isinstance(records, memoryview) and bytes(records) == _from_file(log, 0, 1 << 20, None)
        log.append_as_leader(bytearray(make_batch(2, epoch=1)), 1)  # the log's re-based copy is bytes: kept
        assert _served_from_memory(log)
        segment = log._segments[-1]
        segment.append(bytearray(make_batch(1, base_offset=5, epoch=1)), [], [])  # a raw mutable buffer: not kept
        assert not segment._recent
    finally:
        log.close()
