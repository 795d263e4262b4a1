"""Recovery of the file log: torn tails cut at every byte, flipped bytes, lost indexes and checkpoints,
running out of space (RLIMIT_FSIZE) — recovery stops exactly at the last valid batch and nothing before it is
lost; an I/O error stops all further writes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from kraftwire.errors import LogIOError
from kraftwire.ids import SnapshotId
from kraftwire.log.segmented import CLEAN_SHUTDOWN, SegmentedLog
from kraftwire.records import RecordBatchBuilder, read_batches, validate_batches

SEG = "00000000000000000000.log"


def batch(records: int, epoch: int, size: int = 20, ts: int = 1000) -> bytes:
    b = RecordBatchBuilder(partition_leader_epoch=epoch)
    for i in range(records):
        b.append(b"k", bytes([i % 251]) * size, timestamp=ts + i)
    return b.build()


@pytest.fixture
def template(tmp_path):
    """A crashed (not cleanly closed) log dir with four batches (epochs 1, 1, 2, 3), all flushed."""
    d = tmp_path / "template" / "t-0"
    log = SegmentedLog(str(d))
    spec = [(3, 1), (2, 1), (4, 2), (2, 3)]
    for records, epoch in spec:
        log.append_as_leader(batch(records, epoch), epoch)
    log.flush()
    positions = [b.position for b in read_batches(log.read(0, 1 << 20).records)]
    bases = [b.base_offset for b in read_batches(log.read(0, 1 << 20).records)]
    log._simulate_power_loss()  # no clean shutdown: the next open must validate
    data = (d / SEG).read_bytes()
    return d, data, positions, bases


def recover_with(tmp_path, template_dir, log_bytes, name):
    d = tmp_path / name / "t-0"
    shutil.copytree(template_dir, d)
    (d / SEG).write_bytes(log_bytes)
    log = SegmentedLog(str(d))
    return log, d


def check_prefix(log, data, end_position, end_offset):
    assert log.end_offset() == end_offset
    served = log.read(0, 1 << 24).records if end_offset else b""
    assert served == data[:end_position]  # nothing before the cut is lost, nothing after it is served
    if served:
        validate_batches(served)


def test_cut_the_last_batch_at_every_byte(tmp_path, template):
    d, data, positions, bases = template
    last = positions[-1]
    for cut in range(last, len(data)):
        log, _ = recover_with(tmp_path, d, data[:cut], f"cut{cut}")
        try:
            check_prefix(log, data, last, bases[-1])
            assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (2, 5)]
            if cut > last:
                assert "incomplete" in " ".join(log.recovery_report)
            # The log is writable again after recovery, at the recovered end.
            log.append_as_leader(batch(1, 4), 4)
            assert log.end_offset() == bases[-1] + 1
        finally:
            log._simulate_power_loss()
    log, _ = recover_with(tmp_path, d, data, "whole")
    check_prefix(log, data, len(data), 11)
    log.close()


def test_cut_inside_earlier_batches(tmp_path, template):
    d, data, positions, bases = template
    for i, pos in enumerate(positions):
        for cut in (pos, pos + 1, pos + 12, pos + 61):
            log, _ = recover_with(tmp_path, d, data[:cut], f"c{i}-{cut}")
            check_prefix(log, data, pos, bases[i])
            log._simulate_power_loss()


# PartitionLeaderEpoch is outside the CRC (as in Kafka), so a flip there is only caught when it breaks the rule
# that epochs never decrease: a negative or lowered epoch is detected at that batch; a raised one is detected only
# at the next batch (or not at all for the last batch). Those cases are skipped below and noted in the report.
EPOCH_FIELD = range(12, 16)


@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_flip_bytes_of_a_batch(tmp_path, template, which):
    """Every byte of the last batch; every header byte and every 5th byte of the others (time on 2 cores)."""
    d, data, positions, bases = template
    start = positions[which]
    end = positions[which + 1] if which + 1 < len(positions) else len(data)
    last = which == len(positions) - 1
    for pos in range(start, end):
        rel = pos - start
        if not last and rel >= 61 and rel % 5:
            continue
        flipped = bytearray(data)
        if rel in EPOCH_FIELD:
            if last or rel != 12:
                continue  # raising the last batch's epoch is undetectable; see EPOCH_FIELD
            flipped[pos] ^= 0x80  # negative epoch: detected
        else:
            flipped[pos] ^= 0x01
        log, _ = recover_with(tmp_path, d, bytes(flipped), f"f{which}-{pos}")
        try:
            check_prefix(log, data, start, bases[which])
        finally:
            log._simulate_power_loss()


def test_garbage_after_the_last_batch_is_cut(tmp_path, template):
    d, data, positions, bases = template
    log, dd = recover_with(tmp_path, d, data + b"\x00" * 100, "zeros")
    check_prefix(log, data, len(data), 11)
    log.close()
    assert (dd / SEG).read_bytes() == data  # truncated on disk, too


def test_lost_checkpoints_and_indexes_are_rebuilt(tmp_path, template):
    d, data, positions, bases = template
    dd = tmp_path / "lost" / "t-0"
    shutil.copytree(d, dd)
    for name in ("leader-epoch-checkpoint", "recovery-point-offset-checkpoint", "high-watermark-checkpoint"):
        (dd / name).unlink(missing_ok=True)
    for name in os.listdir(dd):
        if name.endswith("index"):
            (dd / name).unlink()
    log = SegmentedLog(str(dd))
    check_prefix(log, data, len(data), 11)
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (2, 5), (3, 9)]
    log.close()
    # And a clean shutdown followed by deleting the epoch checkpoint rebuilds it from the segments.
    (dd / "leader-epoch-checkpoint").unlink()
    log = SegmentedLog(str(dd))
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (2, 5), (3, 9)]
    log.close()


def test_corrupt_middle_segment_drops_everything_after_it(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d), segment_bytes=400)
    for k in range(12):
        log.append_as_leader(batch(2, 1), 1)
    log.flush()
    bases = log.segment_base_offsets()
    assert len(bases) >= 4
    log._simulate_power_loss()
    # The recovery point says segments below the active one are trusted; lose it so all are validated.
    (d / "recovery-point-offset-checkpoint").unlink()
    victim = d / f"{bases[1]:020d}.log"
    raw = bytearray(victim.read_bytes())
    raw[-1] ^= 0xFF  # last batch of the second segment
    victim.write_bytes(bytes(raw))
    log = SegmentedLog(str(d), segment_bytes=400)
    assert log.segment_base_offsets() == bases[:2]
    assert log.end_offset() == bases[2] - 2
    validate_batches(log.read(0, 1 << 24).records)
    log.close()


def test_epoch_cache_after_crash_drops_epochs_of_lost_batches(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d))
    log.append_as_leader(batch(2, 1), 1)
    log.flush()
    log.append_as_leader(batch(2, 2), 2)  # never flushed
    log.initialize_leader_epoch(3)
    log._simulate_power_loss()
    log = SegmentedLog(str(d))
    assert log.end_offset() == 2
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0)]
    log.close()


def test_injected_io_error_is_fail_stop_and_leaves_no_clean_marker(tmp_path):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d))
    log.append_as_leader(batch(2, 1), 1)
    log.flush()
    log.inject_io_error()
    with pytest.raises(LogIOError):
        log.append_as_leader(batch(2, 1), 1)
    with pytest.raises(LogIOError, match="refuses writes"):
        log.append_as_leader(batch(1, 1), 1)
    with pytest.raises(LogIOError):
        log.create_new_snapshot(SnapshotId(0, 0))
    log.close()
    assert not (d / CLEAN_SHUTDOWN).exists()
    log = SegmentedLog(str(d))
    assert log.end_offset() == 2 and log.recovery_report[0] == "recovered"
    log.close()


FSIZE_SCRIPT = textwrap.dedent(
    """
    import resource, signal, sys
    from kraftwire.errors import LogIOError
    from kraftwire.log.segmented import SegmentedLog
    from kraftwire.records import RecordBatchBuilder

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    log = SegmentedLog(sys.argv[1])
    limit = 20000
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    ok = 0
    try:
        while True:
            b = RecordBatchBuilder()
            b.append(None, b"v" * 900, timestamp=1)
            log.append_as_leader(b.build(), 1)
            log.flush()
            ok += 1
    except LogIOError as exc:
        print("first-error", exc, file=sys.stderr)
    refused = 0
    for action in (lambda: log.append_as_leader(b.build(), 1), log.flush, lambda: log.truncate_to(0)):
        try:
            action()
        except LogIOError:
            refused += 1
    log.close()  # releases the files; after an I/O error it must not write the clean-shutdown marker
    print(ok, refused)
    """
)


def test_out_of_space_rlimit_fsize(tmp_path):
    d = tmp_path / "t-0"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", FSIZE_SCRIPT, str(d)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    ok, refused = map(int, out.stdout.split())
    assert "File too large" in out.stderr or "EFBIG" in out.stderr or "27" in out.stderr
    assert ok == 20000 // 970  # every append that returned is there, the torn one is not
    assert refused == 3
    assert not (d / CLEAN_SHUTDOWN).exists()
    assert os.path.getsize(d / SEG) > ok * 970  # a partial batch was written before the error
    log = SegmentedLog(str(d))
    assert log.end_offset() == ok
    validate_batches(log.read(0, 1 << 24).records)
    log.close()


def test_snapshot_freeze_io_error_leaves_no_checkpoint_and_stops_the_log(tmp_path, monkeypatch):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d))
    log.append_as_leader(batch(2, 1), 1)
    log.update_high_watermark(2)
    w = log.create_new_snapshot(SnapshotId(2, 1))
    w.append(b"state")

    def broken_fsync(fd):
        raise OSError(5, "injected EIO")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(LogIOError):
        w.freeze()
    monkeypatch.undo()
    assert not [n for n in os.listdir(d) if ".checkpoint" in n]  # neither .part nor a half-made snapshot
    assert log.latest_snapshot_id() is None
    with pytest.raises(LogIOError):
        log.append_as_leader(batch(1, 1), 1)  # fail-stop
    log.close()
    assert not (d / CLEAN_SHUTDOWN).exists()


def test_io_error_while_rolling_is_fail_stop(tmp_path, monkeypatch):
    d = tmp_path / "t-0"
    log = SegmentedLog(str(d), segment_bytes=300)
    log.append_as_leader(batch(4, 1), 1)
    log.flush()

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(LogIOError):
        log.append_as_leader(batch(4, 1), 1)  # rolls: the recovery-point checkpoint cannot be written
    monkeypatch.undo()
    with pytest.raises(LogIOError, match="refuses writes"):
        log.append_as_leader(batch(1, 1), 1)
    log.close()
    assert not (d / CLEAN_SHUTDOWN).exists()
    log = SegmentedLog(str(d), segment_bytes=300)
    assert log.end_offset() == 4
    log.close()
