"""Log benchmark: append + flush vs raw write + fsync, fetch-style reads, and reopen times.

    python benchmarks/log_bench.py [--dir DIR] [--batches N] [--rounds R] [--reopen-mib M]

* append+flush: ``SegmentedLog.append_as_leader`` + ``flush()`` per batch of 1000 records x 100 B (~108 KiB),
  against ``os.write`` + ``os.fsync`` of the very same bytes to a plain file in the same directory (same file
  system, same run). Rounds alternate raw/log; the median round is reported.
* read: ``read(offset, 8 MiB)`` over the whole log (each read is a fresh ``bytes`` copy from ``pread``).
* reopen: a log of ``--reopen-mib`` MiB is closed cleanly and reopened (indexes loaded, tail headers scanned),
  then left without a clean shutdown and reopened (the active segment is validated with CRC-32C). The page
  cache is warm: the data was just written (dropping caches would disturb the other users of this machine).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

from kraftwire import records
from kraftwire.log.segmented import SegmentedLog
from kraftwire.records import RecordBatchBuilder

MiB = 1024 * 1024


def make_batch(records_per_batch: int = 1000, value_size: int = 100) -> bytes:
    b = RecordBatchBuilder()
    value = b"v" * value_size
    for _ in range(records_per_batch):
        b.append(None, value, timestamp=1_700_000_000_000)
    return b.build()


def bench_raw(path: str, batch: bytes, n: int) -> float:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t0 = time.perf_counter()
        for _ in range(n):
            view = memoryview(batch)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        return time.perf_counter() - t0
    finally:
        os.close(fd)
        os.unlink(path)


def bench_log(directory: str, batch: bytes, n: int) -> float:
    log = SegmentedLog(directory)
    try:
        t0 = time.perf_counter()
        for _ in range(n):
            log.append_as_leader(batch, 1)
            log.flush()
        return time.perf_counter() - t0
    finally:
        log.close()
        shutil.rmtree(directory)


def bench_read(log: SegmentedLog) -> tuple[float, int]:
    t0 = time.perf_counter()
    offset, total = log.start_offset(), 0
    end = log.end_offset()
    while offset < end:
        info = log.read(offset, 8 * MiB)
        total += len(info.records)
        # next offset: the end of the last batch returned
        last = None
        for b in records.read_batches(info.records, validate=False):
            last = b.last_offset
        offset = last + 1
    return time.perf_counter() - t0, total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=None, help="parent directory (default: a temp dir under /tmp)")
    p.add_argument("--batches", type=int, default=300, help="batches per append round (default 300, ~32 MiB)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reopen-mib", type=int, default=1024, help="size of the log for the reopen test (MiB)")
    p.add_argument("--segment-mib", type=int, default=1024, help="metadata.log.segment.bytes for the reopen log")
    args = p.parse_args(argv)

    parent = tempfile.mkdtemp(prefix="kraftwire-bench-", dir=args.dir)
    try:
        batch = make_batch()
        mb = len(batch) * args.batches / MiB
        print(f"codec: {records.IMPLEMENTATION}; batch: 1000 records x 100 B = {len(batch)} bytes; "
              f"{args.batches} batches ({mb:.1f} MiB) per round; dir: {parent}")
        raw, logged = [], []
        for r in range(args.rounds):
            raw.append(bench_raw(os.path.join(parent, "raw.bin"), batch, args.batches))
            logged.append(bench_log(os.path.join(parent, f"round{r}", "t-0"), batch, args.batches))
        raw_s, log_s = statistics.median(raw), statistics.median(logged)
        rows = [
            ("raw write+fsync per batch", mb / raw_s, args.batches / raw_s),
            ("SegmentedLog append+flush per batch", mb / log_s, args.batches / log_s),
        ]
        print()
        print("| measurement | MiB/s | batches/s |")
        print("|---|---|---|")
        for name, mbs, bps in rows:
            print(f"| {name} | {mbs:.0f} | {bps:.0f} |")
        print(f"| ratio log/raw | {raw_s / log_s:.0%} | |")

        # Smaller batches (the test-server's shapes): the fixed per-append cost shows here.
        print()
        print("| batch shape | raw write+fsync batches/s | append+flush batches/s | ratio |")
        print("|---|---|---|---|")
        for count, size in ((100, 256), (1, 256)):
            small = make_batch(count, size)
            n = max(50, args.batches)
            raw_t, log_t = [], []
            for r in range(args.rounds):
                raw_t.append(bench_raw(os.path.join(parent, "raw.bin"), small, n))
                log_t.append(bench_log(os.path.join(parent, f"small{count}-{r}", "t-0"), small, n))
            rs, ls = statistics.median(raw_t), statistics.median(log_t)
            print(f"| {count} x {size} B ({len(small)} B) | {n / rs:.0f} | {n / ls:.0f} | {rs / ls:.0%} |")

        # Reopen of a large log.
        d = os.path.join(parent, "big", "t-0")
        log = SegmentedLog(d, segment_bytes=args.segment_mib * MiB)
        target = args.reopen_mib * MiB
        t0 = time.perf_counter()
        written = 0
        while written + len(batch) <= target:  # stay within one segment of the default 1 GiB
            log.append_as_leader(batch, 1)
            written += len(batch)
            if log.end_offset() % 100_000 == 0:
                log.flush()
        log.flush()
        fill_s = time.perf_counter() - t0
        end = log.end_offset()
        log.close()
        t0 = time.perf_counter()
        log = SegmentedLog(d, segment_bytes=args.segment_mib * MiB)
        clean_s = time.perf_counter() - t0
        assert log.end_offset() == end and log.recovery_report[0] == "clean"
        read_s, read_bytes = bench_read(log)
        log._simulate_power_loss()  # flushed already: nothing lost, but no clean-shutdown marker
        t0 = time.perf_counter()
        log = SegmentedLog(d, segment_bytes=args.segment_mib * MiB)
        crash_s = time.perf_counter() - t0
        assert log.end_offset() == end and log.recovery_report[0] == "recovered"
        segments = len(log.segment_base_offsets())
        log._simulate_power_loss()
        os.unlink(os.path.join(d, "recovery-point-offset-checkpoint"))  # validate every segment, not just the active
        t0 = time.perf_counter()
        log = SegmentedLog(d, segment_bytes=args.segment_mib * MiB)
        full_s = time.perf_counter() - t0
        assert log.end_offset() == end
        log.close()
        print()
        print(f"reopen log: {written / MiB:.0f} MiB, {end} records, {segments} segment(s) of up to "
              f"{args.segment_mib} MiB, filled in {fill_s:.1f} s; page cache warm")
        print()
        print("| measurement | time | rate |")
        print("|---|---|---|")
        print(f"| reopen after clean shutdown | {clean_s:.3f} s | |")
        print(f"| reopen after crash (validate from the recovery point: the active segment) | {crash_s:.3f} s | |")
        print(f"| reopen after crash, recovery point lost (validate all) | {full_s:.3f} s | "
              f"{written / MiB / full_s:.0f} MiB/s |")
        print(f"| read whole log, 8 MiB fetches (copies) | {read_s:.3f} s | {read_bytes / MiB / read_s:.0f} MiB/s |")
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
