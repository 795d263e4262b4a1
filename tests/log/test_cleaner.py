"""Log compaction (``kraftwire.log.cleaner``) against a dictionary model: after any mix of appends, cleans,
crashes in the middle of a clean and reopenings, the latest value of every key survives, nothing else is invented,
offsets only grow, and a tombstone disappears only at a pass ``delete.retention.ms`` after the first pass that kept
it (its delete horizon, KIP-534), however old its own timestamp."""

from __future__ import annotations

import os
import random
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire.log import cleaner
from kraftwire.log.cleaner import CLEANER_OFFSET_CHECKPOINT, CleanerConfig
from kraftwire.log.partition_log import LogDirCheckpoints, PartitionLog
from kraftwire.records import RecordBatchBuilder, read_batches

TOPIC_ID = uuid.UUID(int=7)
KEYS = [f"k{i}".encode() for i in range(12)]


def _open(root) -> PartitionLog:
    return PartitionLog(str(root / "c-0"), LogDirCheckpoints(str(root)), topic_id=TOPIC_ID, segment_bytes=600,
                        high_watermark_checkpoint_interval_ms=0)


def _batch(records, ts: int, compression: str = "none") -> bytes:
    b = RecordBatchBuilder(compression=compression)
    for key, value in records:
        b.append(key, value, timestamp=ts)
    return b.build()


def _read_all(lg) -> list[tuple[int, bytes | None, bytes | None]]:
    out = []
    pos = lg.start_offset()
    while pos < lg.end_offset():
        info = lg.read(pos, 1 << 20)
        if not len(info.records):
            break
        for batch in read_batches(info.records):
            for rec in batch:
                if rec.offset >= pos:
                    out.append((rec.offset, rec.key, rec.value))
            pos = batch.last_offset + 1
    return out


class Model:
    def __init__(self) -> None:
        self.latest: dict[bytes, tuple[int, bytes | None, int]] = {}  # key -> (offset, value, batch timestamp)
        self.written: dict[int, tuple[bytes, bytes | None]] = {}
        self.cleans: list[tuple[int, int]] = []  # (end offset of the log, now) at each pass that had a job

    def cleaned(self, lg, now_ms: int) -> None:
        self.cleans.append((lg.end_offset(), now_ms))

    def may_be_gone(self, offset: int, retention_ms: int) -> bool:
        """Whether a tombstone at ``offset`` may have been removed: a pass after it was written stamped at the
        earliest ``now + retention`` as its horizon, and a later pass ran at or past that (KIP-534)."""
        after = [now for end, now in self.cleans if end > offset]
        return len(after) >= 2 and after[-1] >= after[0] + retention_ms

    def check(self, lg, now_ms: int, retention_ms: int) -> None:
        got = _read_all(lg)
        offsets = [o for o, _k, _v in got]
        assert offsets == sorted(set(offsets)), "offsets must only grow"
        for o, k, v in got:
            assert self.written.get(o) == (k, v), f"offset {o} holds a record that was never written there"
        folded: dict[bytes, tuple[int, bytes | None]] = {}
        for o, k, v in got:
            folded[k] = (o, v)
        for key, (offset, value, ts) in self.latest.items():
            if value is not None:
                assert folded.get(key) == (offset, value), f"the latest value of {key!r} is gone"
            elif key in folded:
                assert folded[key] == (offset, None), f"{key!r} came back after its tombstone"
            if value is None and not self.may_be_gone(offset, retention_ms):
                # before its delete horizon a tombstone is still there for consumers to see, however old its timestamp
                assert folded.get(key) == (offset, None), f"the tombstone of {key!r} went too early"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), retention_ms=st.sampled_from([0, 10**9]),
       compression=st.sampled_from(["none", "lz4", "zstd"]))
def test_the_latest_value_of_every_key_survives_cleaning_and_crashes(tmp_path_factory, seed, retention_ms,
                                                                     compression):
    rng = random.Random(seed)
    root = tmp_path_factory.mktemp("clean")
    lg = _open(root)
    model = Model()
    cfg = CleanerConfig(delete_retention_ms=retention_ms, dedupe_buffer_size=rng.choice([24 * 5, 1 << 20]))
    now = 1_000_000
    try:
        for _step in range(rng.randint(20, 60)):
            roll = rng.random()
            if roll < 0.6:
                now += rng.randint(0, 50)
                records = [(rng.choice(KEYS), None if rng.random() < 0.15 else os.urandom(rng.randint(1, 30)))
                           for _ in range(rng.randint(1, 6))]
                info = lg.append_as_leader(_batch(records, now, compression), 1)
                for i, (k, v) in enumerate(records):
                    model.written[info.first_offset + i] = (k, v)
                    model.latest[k] = (info.first_offset + i, v, now)
                if rng.random() < 0.8:
                    lg.update_high_watermark(lg.end_offset())
            elif roll < 0.8:
                if cleaner.clean(lg, now, cfg, force=rng.random() < 0.7) is not None:
                    model.cleaned(lg, now)
            elif roll < 0.9:
                # a crash in the middle of a clean: some cleaned files written, some swapped in, then the process dies
                j = cleaner.job(lg, now, cfg, force=True)
                if j is not None:
                    model.cleaned(lg, now)
                    p = cleaner.plan(j, cfg)
                    prepared = cleaner.prepare(j, p, now, cfg)
                    j.close()
                    cut = rng.randint(0, len(prepared))
                    cleaner.commit(lg, p._replace(end=p.first_dirty), prepared[:cut])
                    if cut < len(prepared) and rng.random() < 0.5:
                        # the crash comes inside a swap: the file renamed, some of the old segments deleted
                        item = prepared[cut]
                        segs = [v.segment for v in item.views]
                        i = lg._segments.index(segs[0])
                        end = lg._segments[i + len(segs)].base_offset
                        os.replace(item.path, os.path.join(lg.directory, f"{segs[0].base_offset:020d}.log."
                                                                         f"{end:020d}.swap"))
                        for seg in segs[:rng.randint(0, len(segs))]:
                            seg.delete_files()
                    lg._closed = True
                    lg._release()
                    lg = _open(root)
            else:
                lg.close()
                lg = _open(root)
            model.check(lg, now, retention_ms)
        lg.update_high_watermark(lg.end_offset())
        if cleaner.clean(lg, now + 1, cfg, force=True) is not None:
            model.cleaned(lg, now + 1)
        model.check(lg, now + 1, retention_ms)
    finally:
        lg.close()


def test_a_clean_keeps_the_latest_value_drops_the_rest_and_checkpoints(tmp_path):
    lg = _open(tmp_path)
    try:
        for i in range(60):
            lg.append_as_leader(_batch([(KEYS[i % 3], f"v{i}".encode())], 1000 + i), 1)
        lg.append_as_leader(_batch([(KEYS[0], None)], 2000), 1)
        lg.append_as_leader(_batch([(KEYS[5], b"active")], 2001), 1)  # lands in the active segment, never cleaned
        lg.update_high_watermark(lg.end_offset())
        size_before = lg.size_in_bytes()
        segments_before = len(lg.segment_base_offsets())
        stats = cleaner.clean(lg, 3000, CleanerConfig(delete_retention_ms=10**9))
        assert stats is not None and stats.records_kept < stats.records_read
        got = _read_all(lg)
        active = lg.segment_base_offsets()[-1]
        cleaned = [k for o, k, _v in got if o < active]
        assert sorted(cleaned) == sorted(set(cleaned))  # one record per key below the active segment
        folded = {k: v for _o, k, v in got}
        assert folded == {KEYS[0]: None, KEYS[1]: b"v58", KEYS[2]: b"v59", KEYS[5]: b"active"}
        assert [v for o, _k, v in got if o >= active][-2:] == [None, b"active"]  # the active segment is untouched
        assert lg.size_in_bytes() < size_before and len(lg.segment_base_offsets()) < segments_before
        assert lg.checkpoints.get(CLEANER_OFFSET_CHECKPOINT, ("c", 0)) == stats.end
        assert cleaner.clean(lg, 3000, CleanerConfig(delete_retention_ms=10**9)) is None  # nothing dirty
        lg.checkpoints.write()
        with open(tmp_path / CLEANER_OFFSET_CHECKPOINT) as f:
            assert f.read().splitlines() == ["0", "1", f"c 0 {stats.end}"]  # Kafka's checkpoint format
        for i in range(20):  # more writes push the tombstone out of the active segment
            lg.append_as_leader(_batch([(KEYS[6], f"w{i}".encode())], 2100 + i), 1)
        lg.update_high_watermark(lg.end_offset())
        stats = cleaner.clean(lg, 10**10, CleanerConfig(delete_retention_ms=0), force=True)
        folded = {k: v for _o, k, v in _read_all(lg)}
        assert folded[KEYS[0]] is None  # the first pass to keep the tombstone stamps its horizon (now + 0)...
        for i in range(20):
            lg.append_as_leader(_batch([(KEYS[7], f"x{i}".encode())], 2200 + i), 1)
        lg.update_high_watermark(lg.end_offset())
        stats = cleaner.clean(lg, 10**10, CleanerConfig(delete_retention_ms=0), force=True)
        folded = {k: v for _o, k, v in _read_all(lg)}
        assert KEYS[0] not in folded and folded[KEYS[1]] == b"v58"  # ...and the next one at or past it removes it
        kept = _read_all(lg)
    finally:
        lg.close()
    again = _open(tmp_path)  # offsets with gaps load after a clean shutdown...
    try:
        assert _read_all(again) == kept
    finally:
        again._closed = True
        again._release()
    checkpoints = LogDirCheckpoints(str(tmp_path))
    checkpoints.set("recovery-point-offset-checkpoint", ("c", 0), 0)  # ...and recover from a crash: a full scan
    checkpoints.write()
    recovered = _open(tmp_path)
    try:
        assert _read_all(recovered) == kept and recovered.recovery_report[0] == "recovered"
    finally:
        recovered.close()


def test_the_dirty_ratio_and_the_compaction_lag_hold_a_clean_back(tmp_path):
    lg = _open(tmp_path)
    try:
        for i in range(40):
            lg.append_as_leader(_batch([(KEYS[i % 2], b"x" * 20)], 1000 + i), 1)
        lg.update_high_watermark(lg.end_offset())
        assert cleaner.clean(lg, 5000, CleanerConfig(min_compaction_lag_ms=10**6)) is None  # all too new
        assert cleaner.clean(lg, 5000, CleanerConfig()) is not None
        for i in range(3):
            lg.append_as_leader(_batch([(KEYS[3], b"y" * 20)], 6000 + i), 1)
        lg.update_high_watermark(lg.end_offset())
        ratio = cleaner.dirty_ratio(lg, 7000, CleanerConfig())  # dirty bytes / cleanable bytes
        assert 0 < ratio < 1
        assert cleaner.clean(lg, 7000, CleanerConfig(min_cleanable_dirty_ratio=ratio + 0.01)) is None
        assert cleaner.clean(lg, 7000, CleanerConfig(min_cleanable_dirty_ratio=ratio - 0.01)) is not None
    finally:
        lg.close()


def test_nothing_above_the_high_watermark_is_cleaned(tmp_path):
    lg = _open(tmp_path)
    try:
        for i in range(40):
            lg.append_as_leader(_batch([(KEYS[0], f"v{i}".encode())], 1000 + i), 1)
        lg.update_high_watermark(0)
        assert cleaner.clean(lg, 5000, CleanerConfig(), force=True) is None
        assert len(_read_all(lg)) == 40
    finally:
        lg.close()


@pytest.mark.parametrize("producer", [True, False])
def test_a_producers_last_batch_is_kept_whole(tmp_path, producer):
    lg = _open(tmp_path)
    try:
        b = RecordBatchBuilder(producer_id=9 if producer else -1, producer_epoch=0 if producer else -1,
                               base_sequence=0 if producer else -1)
        b.append(KEYS[0], b"old", timestamp=1)
        lg.append_as_leader(b.build(), 1)
        for i in range(40):
            lg.append_as_leader(_batch([(KEYS[0], f"v{i}".encode())], 1000 + i), 1)
        lg.update_high_watermark(lg.end_offset())
        cleaner.clean(lg, 5000, CleanerConfig(), force=True)
        first = _read_all(lg)[0]
        assert (first[2] == b"old") is producer
    finally:
        lg.close()


def test_segments_are_grouped_and_a_swap_cut_short_is_completed_at_open(tmp_path):
    lg = _open(tmp_path)
    try:
        for i in range(80):
            lg.append_as_leader(_batch([(KEYS[i % 4], f"v{i}".encode())], 1000 + i), 1)
        lg.update_high_watermark(lg.end_offset())
        expected = {k: v for _o, k, v in _read_all(lg)}
        cfg = CleanerConfig()
        j = cleaner.job(lg, 5000, cfg, force=True)
        p = cleaner.plan(j, cfg)
        prepared = cleaner.prepare(j, p, 5000, cfg)
        j.close()
        [group] = prepared  # the little that survives fits one segment
        assert len(group.views) > 2
        segs = [v.segment for v in group.views]
        end = lg._segments[len(segs)].base_offset
        os.replace(group.path, os.path.join(lg.directory, f"{segs[0].base_offset:020d}.log.{end:020d}.swap"))
        segs[0].delete_files()  # the crash comes after the first old segment went
    finally:
        lg._closed = True
        lg._release()
    again = _open(tmp_path)
    try:
        got = _read_all(again)
        assert {k: v for _o, k, v in got} == expected
        assert [o for o, _k, _v in got] == sorted({o for o, _k, _v in got})
        assert len(again.segment_base_offsets()) == 2  # the swapped group and the active segment
        assert not [n for n in os.listdir(again.directory) if n.endswith(".swap")]
    finally:
        again.close()
