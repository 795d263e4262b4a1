"""ListOffsets by timestamp through the ``.timeindex`` (Kafka's lookup: segment by largest timestamp, then the time
index entry, then a scan), and by max timestamp (segments by their largest timestamp, newest first), answer exactly
what a linear scan of the committed data batches answers, on random
multi-segment logs with unordered timestamps, control and LogAppendTime batches, truncations, clean reopens and
crashes; and every segment's time index equals the one rebuilt from its batch headers."""

from __future__ import annotations

import shutil
import tempfile
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire.log.api import Isolation
from kraftwire.log.segmented import SegmentedLog
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.server.test_server.fetch import ListOffsets

BASE_TS = 1_700_000_000_000


def committed_batches(lg):
    """Every committed batch from the log start, oldest first, by plain reads (what the references walk)."""
    pos, hw = lg.start_offset(), lg.high_watermark()
    while pos < hw:
        info = lg.read(pos, 1 << 20, Isolation.COMMITTED)
        if not len(info.records):
            return
        for b in read_batches(info.records, validate=False):
            if b.last_offset < pos:
                continue
            pos = b.last_offset + 1
            yield b


def linear_offset_for_timestamp(lg, ts: int) -> tuple[int, int, int]:
    """The reference: the previous implementation, every committed batch from the log start, oldest first."""
    for b in committed_batches(lg):
        if b.is_control or b.max_timestamp < ts:
            continue
        for r in b:
            if r.timestamp >= ts:
                return r.offset, r.timestamp, b.partition_leader_epoch
    return -1, -1, -1


def linear_max_timestamp(lg) -> tuple[int, int, int]:
    """The reference for ListOffsets -3: the first committed data record carrying the largest timestamp."""
    best = (-1, -1, -1)
    for b in committed_batches(lg):
        if not b.is_control:
            for r in b:
                if r.timestamp > best[1]:
                    best = (r.offset, r.timestamp, b.partition_leader_epoch)
    return best


def _build(spec, epoch: int) -> bytes:
    stamps, control, log_append = spec
    b = RecordBatchBuilder(partition_leader_epoch=epoch, is_control=control, timestamp_type=1 if log_append else 0)
    for i, ts in enumerate(stamps):
        b.append(b"\x00\x00\x00\x00" if control else b"k", b"v" * (3 + 7 * i), timestamp=BASE_TS + ts)
    return b.build()


# (record timestamps, control batch?, LogAppendTime batch?)
batch_spec = st.tuples(st.lists(st.integers(0, 400), min_size=1, max_size=5), st.sampled_from([False, False, True]),
                       st.booleans())
op = st.one_of(
    st.tuples(st.just("append"), st.lists(batch_spec, min_size=1, max_size=3), st.booleans()),
    st.tuples(st.just("hw"), st.integers(0, 10_000)),
    st.tuples(st.just("truncate"), st.integers(0, 10_000)),
    st.tuples(st.just("reopen")),
    st.tuples(st.just("crash")),
)


def check_time_indexes(lg: SegmentedLog) -> None:
    for seg in lg._segments:
        entries, mx, at = list(seg.time_entries), seg.max_timestamp, seg.offset_of_max_timestamp
        headers = list(seg.scan_headers(0, seg.size))
        assert mx == max((h[5] for h in headers), default=-1)
        # entries increase, each (T, o) names the first batch reaching T, all earlier batches below T
        for (t1, _), (t2, _) in zip(entries, entries[1:]):
            assert t1 < t2
        for t, o in entries:
            holder = next(h for h in headers if h[0] <= o <= h[1])
            assert holder[5] == t and o == holder[1]
            assert all(h[5] < t for h in headers if h[1] < holder[0])
        if headers and mx >= 0:
            assert at == next(h[1] for h in headers if h[5] == mx)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=3, max_size=25), targets=st.lists(st.integers(-5, 420), min_size=1, max_size=8),
       tiny=st.booleans())
def test_timeindex_lookup_equals_linear_scan(ops, targets, tiny):
    tmp = tempfile.mkdtemp(prefix="kw-ts-")
    kwargs = dict(segment_bytes=260, index_interval_bytes=0) if tiny else dict(segment_bytes=700,
                                                                                   index_interval_bytes=150)
    path = f"{tmp}/t-0"
    lg = SegmentedLog(path, **kwargs)
    epoch = 1
    try:
        for o in ops:
            if o[0] == "append":
                for spec in o[1]:
                    lg.append_as_leader(_build(spec, epoch), epoch)
                if o[2]:
                    epoch += 1
                lg.flush()
            elif o[0] == "hw":
                lg.update_high_watermark(o[1] % (lg.end_offset() + 1))
            elif o[0] == "truncate":
                hw = lg.high_watermark()
                lg.truncate_to(hw + o[1] % (lg.end_offset() - hw + 1))
            elif o[0] == "reopen":
                hw = lg.high_watermark()
                lg.close()
                lg = SegmentedLog(path, **kwargs)
                lg.update_high_watermark(hw)
            else:
                hw = lg.high_watermark()
                lg._simulate_power_loss()
                lg = SegmentedLog(path, **kwargs)
                lg.update_high_watermark(hw)
            check_time_indexes(lg)
        lg.update_high_watermark(lg.end_offset())  # also look at everything, then at a cut
        for hw in (lg.end_offset(), lg.end_offset() // 2):
            lg.update_high_watermark(hw)
            lo = ListOffsets(SimpleNamespace(log=lg))
            for t in targets:
                assert lo.offset_for_timestamp(BASE_TS + t) == linear_offset_for_timestamp(lg, BASE_TS + t), (t, hw)
            assert lo.max_timestamp() == linear_max_timestamp(lg), hw
    finally:
        try:
            lg.close()
        except Exception:
            pass
        shutil.rmtree(tmp, ignore_errors=True)


def _log_with_stamps(tmp_path, stamps, **kwargs):
    lg = SegmentedLog(str(tmp_path / "t-0"), segment_bytes=kwargs.pop("segment_bytes", 250),
                      index_interval_bytes=kwargs.pop("index_interval_bytes", 0), **kwargs)
    for ts in stamps:
        lg.append_as_leader(_build(([ts], False, False), 1), 1)
    lg.flush()
    lg.update_high_watermark(lg.end_offset())
    return lg


def test_search_skips_segments_and_starts_at_the_time_index_entry(tmp_path):
    lg = _log_with_stamps(tmp_path, range(0, 400, 10))  # 40 one-record batches, increasing, several segments
    try:
        assert len(lg.segment_base_offsets()) > 3
        ranges = lg.timestamp_search_ranges(BASE_TS + 255)
        first_seg = max(b for b in lg.segment_base_offsets() if b <= 25)
        assert ranges[0][0] >= first_seg and ranges[0][0] <= 25 and all(r[0] > 25 for r in ranges[1:])
        assert ListOffsets(SimpleNamespace(log=lg)).offset_for_timestamp(BASE_TS + 255)[:2] == (26, BASE_TS + 260)
        assert lg.timestamp_search_ranges(BASE_TS + 10_000) == []
        assert ListOffsets(SimpleNamespace(log=lg)).offset_for_timestamp(BASE_TS + 10_000) == (-1, -1, -1)
    finally:
        lg.close()


def test_truncation_drops_the_truncated_max_timestamp(tmp_path):
    lg = _log_with_stamps(tmp_path, [5, 300, 10, 20], segment_bytes=1 << 20)
    try:
        lg.update_high_watermark(1)
        lg.truncate_to(1)  # the batch with timestamp 300 goes
        seg = lg._segments[-1]
        assert seg.max_timestamp == BASE_TS + 5 and all(t < BASE_TS + 300 for t, _ in seg.time_entries)
        assert lg.timestamp_search_ranges(BASE_TS + 100) == []
        lg.append_as_leader(_build(([50], False, False), 1), 1)
        lg.flush()
        lg.update_high_watermark(lg.end_offset())
        assert ListOffsets(SimpleNamespace(log=lg)).offset_for_timestamp(BASE_TS + 40)[:2] == (1, BASE_TS + 50)
    finally:
        lg.close()


def test_recovery_and_clean_reopen_rebuild_the_same_time_index(tmp_path):
    stamps = [7, 3, 90, 15, 90, 200, 1, 250, 240]
    lg = _log_with_stamps(tmp_path, stamps, segment_bytes=300)
    before = [(s.base_offset, list(s.time_entries), s.max_timestamp) for s in lg._segments]
    lg.close()  # clean: the active segment gets its final entry, the files are loaded back
    lg = SegmentedLog(str(tmp_path / "t-0"), segment_bytes=300, index_interval_bytes=0)
    try:
        after = [(s.base_offset, list(s.time_entries), s.max_timestamp) for s in lg._segments]
        assert [(b, m) for b, _, m in after] == [(b, m) for b, _, m in before]
        lg.update_high_watermark(lg.end_offset())
        expect = {t: linear_offset_for_timestamp(lg, BASE_TS + t) for t in (0, 4, 16, 91, 201, 245, 251)}
        lg._simulate_power_loss()  # everything was flushed: recovery validates and rebuilds every index
        lg = SegmentedLog(str(tmp_path / "t-0"), segment_bytes=300, index_interval_bytes=0)
        lg.update_high_watermark(lg.end_offset())
        check_time_indexes(lg)
        lo = ListOffsets(SimpleNamespace(log=lg))
        assert {t: lo.offset_for_timestamp(BASE_TS + t) for t in expect} == expect
        assert expect[245][:2] == (7, BASE_TS + 250) and expect[251] == (-1, -1, -1)
    finally:
        lg.close()
