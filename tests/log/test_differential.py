"""MemoryLog and SegmentedLog driven by the same random operations must be indistinguishable: same offsets,
epochs, bytes, snapshots and errors, through crashes (power loss drops unflushed data in both) and reopens."""

from __future__ import annotations

import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kraftwire.errors import KraftwireError
from kraftwire.ids import SnapshotId
from kraftwire.log.memory import MemoryLog
from kraftwire.log.segmented import SegmentedLog
from kraftwire.records import RecordBatchBuilder, rebase_batches, validate_batches


def _batch(records: int, epoch: int, tag: int) -> bytes:
    b = RecordBatchBuilder(partition_leader_epoch=epoch)
    for i in range(records):
        b.append(None, bytes([tag % 256]) * (5 + 13 * i), timestamp=1000 + tag)
    return b.build()


def _outcome(fn):
    try:
        return ("ok", fn())
    except KraftwireError as exc:
        return ("error", type(exc).__name__)


class TwoLogs(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="kw-diff-")
        self.dir = f"{self.tmp}/t-0"
        self.mem = MemoryLog()
        self.seg = self._open()
        self.epoch = 1
        self.tag = 0

    def _open(self):
        return SegmentedLog(self.dir, segment_bytes=600, index_interval_bytes=100)

    def teardown(self):
        try:
            self.seg.close()
        except Exception:
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def both(self, fn):
        a, b = _outcome(lambda: fn(self.mem)), _outcome(lambda: fn(self.seg))
        assert a == b, (a, b)
        return a

    @rule(records=st.integers(1, 4), bump=st.booleans())
    def append_leader(self, records, bump):
        if bump:
            self.epoch += 1
        self.tag += 1
        data = _batch(records, -1, self.tag)
        self.both(lambda log: log.append_as_leader(data, self.epoch))

    @rule(records=st.integers(1, 3), count=st.integers(1, 3), epoch_delta=st.integers(-1, 1))
    def append_follower(self, records, count, epoch_delta):
        self.tag += 1
        epoch = max(0, self.epoch + epoch_delta)
        raw = b"".join(_batch(records, epoch, self.tag + i) for i in range(count))
        data = rebase_batches(raw, self.mem.end_offset(), epoch)
        self.both(lambda log: log.append_as_follower(data, self.epoch))

    @rule()
    def flush(self):
        self.both(lambda log: log.flush())

    @rule(back=st.integers(0, 6))
    def truncate(self, back):
        target = max(0, self.mem.end_offset() - back)
        self.both(lambda log: log.truncate_to(target))

    @rule(ahead=st.integers(0, 8))
    def high_watermark(self, ahead):
        target = min(self.mem.end_offset(), self.mem.high_watermark() + ahead)
        self.both(lambda log: log.update_high_watermark(target))

    @rule()
    def new_epoch_as_leader(self):
        self.epoch += 1
        self.both(lambda log: log.initialize_leader_epoch(self.epoch))

    @rule(pick=st.integers(0, 10))
    def snapshot(self, pick):
        # A snapshot at a batch boundary at or below the high watermark, with the epoch the log has there.
        hw = self.mem.high_watermark()
        ends = [b[1] + 1 for b in self.mem.batches() if b[1] + 1 <= hw]
        if not ends:
            return
        end = ends[pick % len(ends)]
        epoch = [b[2] for b in self.mem.batches() if b[1] + 1 == end][0]
        sid = SnapshotId(end, epoch)

        def make(log):
            w = log.create_new_snapshot(sid)
            if w is None:
                return None
            w.append(b"state@%d" % end)
            w.freeze()
            return w.snapshot_id

        self.both(make)

    @rule()
    def delete_before_latest_snapshot(self):
        sid = self.mem.latest_snapshot_id()
        if sid is not None:
            self.both(lambda log: log.delete_before_snapshot(sid))

    @rule()
    def crash(self):
        self.mem.crash()
        self.seg._simulate_power_loss()
        self.seg = self._open()
        # Both lose the high watermark's exact value differently (memory: log start; file: checkpoint); align.
        self.mem.update_high_watermark(0)
        self.seg_hw_reset()

    def seg_hw_reset(self):
        self.seg._hwm = self.seg.start_offset()

    @rule()
    def clean_reopen(self):
        self.mem.flush()  # a clean shutdown flushes
        hw = self.seg.high_watermark()
        self.seg.close()
        self.seg = self._open()
        truncated = self.mem.truncate_to_latest_snapshot()  # what every open of the file log does
        assert self.seg.high_watermark() == (self.mem.high_watermark() if truncated else hw)  # checkpointed
        assert self.seg.recovery_report[0] == "clean"

    @invariant()
    def same_view(self):
        m, s = self.mem, self.seg
        assert (m.start_offset(), m.end_offset(), m.flushed_offset(), m.high_watermark()) == (
            s.start_offset(), s.end_offset(), s.flushed_offset(), s.high_watermark())
        assert m.epoch_entries() == s.epoch_entries()
        assert m.last_fetched_epoch() == s.last_fetched_epoch()
        assert list(m.snapshot_ids()) == list(s.snapshot_ids())
        for sid in m.snapshot_ids():
            assert m.read_snapshot(sid).records() == s.read_snapshot(sid).records()
        data_m = m.read(m.start_offset(), 1 << 20).records
        data_s = s.read(s.start_offset(), 1 << 20).records
        assert bytes(data_m) == bytes(data_s)
        if data_s:
            validate_batches(data_s)
        for e in range(0, self.epoch + 2):
            assert m.end_offset_for_epoch(e) == s.end_offset_for_epoch(e)
            for off in (m.start_offset(), m.end_offset(), max(0, m.end_offset() - 2)):
                assert m.validate_offset_and_epoch(off, e) == s.validate_offset_and_epoch(off, e)


_THOROUGH = os.environ.get("KRAFTWIRE_HYPOTHESIS_PROFILE") == "thorough"
TwoLogs.TestCase.settings = settings(
    max_examples=400 if _THOROUGH else 40, stateful_step_count=60 if _THOROUGH else 40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_memory_and_segmented_logs_agree = TwoLogs.TestCase
