"""One run, one table: kraftwire's codec (ext and python twin) against aiokafka's Cython codec and kafka-python.

    python benchmarks/codec_table.py [--rounds 7] [--target-ms 15]

Timings are medians of interleaved rounds (every implementation measured once per round, in
rotating order), because this machine's speed drifts 20-60 % between runs. Ratios compare the
extension with aiokafka's ``_crecords`` in the same run; "encode bulk" compares our bulk method
with aiokafka's per-record path (it has no bulk API). Peers' "validate only" checks just the
CRC; ours also walks every record's framing ("validate crc only" is the like-for-like row).
Cases: 1000 records, 16-byte keys.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from codec_cases import CASES, IMPLEMENTATIONS, OPERATIONS, RECORDS, case_data, operation  # noqa: E402

GOALS = {
    ("encode per record", None): 1.5,
    ("encode bulk", None): 2.0,
    ("decode all fields", "100B values"): 1.5,
    ("decode all fields", "1000B values (1 MB batch)"): 3.0,
}


def calibrate(fn, target_s: float) -> int:
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(target_s / once))


def measure(fns: dict, rounds: int, target_s: float) -> dict:
    loops = {name: calibrate(fn, target_s) for name, fn in fns.items()}
    samples = {name: [] for name in fns}
    names = list(fns)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            fn, n = fns[name], loops[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(v) for name, v in samples.items()}


def fmt_time(s):
    return "-" if s is None else (f"{s * 1e6:9.1f}" if s < 1 else f"{s:9.3f}s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--target-ms", type=float, default=15.0, help="wall time of one measurement")
    args = parser.parse_args(argv)
    impls = list(IMPLEMENTATIONS)
    print(f"codec benchmark: {RECORDS} records x 16 B keys; median of {args.rounds} interleaved rounds; times in us per batch")
    header = f"{'case':27} {'operation':18} " + " ".join(f"{i:>12}" for i in impls) + f" {'ext rate':>14} {'ext/aiokafka':>12} {'ext/python':>10}  goal"
    print(header)
    print("-" * len(header))
    failures = []
    for case in CASES:
        data = case_data(case)
        batch_bytes = len(data[3])
        for op in OPERATIONS:
            fns = {impl: operation(impl, op, case, data) for impl in impls}
            peer_op = "encode per record" if op == "encode bulk" else op
            for impl in ("aiokafka-c", "kafka-python"):
                if fns[impl] is None:
                    fns[impl] = operation(impl, peer_op, case, data)
            live = {k: v for k, v in fns.items() if v is not None}
            if live.get("ext") is None:
                continue
            times = measure(live, args.rounds, args.target_ms / 1000)
            ext_t = times["ext"]
            if op in ("validate only", "validate crc only"):
                rate = f"{batch_bytes / ext_t / 1e9:8.2f} GB/s"
            elif op in ("decode all fields",) and case.value_size >= 1000:
                rate = f"{batch_bytes / ext_t / 1e9:8.2f} GB/s"
            else:
                rate = f"{RECORDS / ext_t / 1e6:7.2f} Mrec/s"
            ratio = times["aiokafka-c"] / ext_t
            vs_py = times["python"] / ext_t if "python" in times else float("nan")
            goal = GOALS.get((op, case.name), GOALS.get((op, None)) if case.compression == "none" else None)
            if op == "validate only" and case.value_size >= 1000:
                goal_txt = ">= 8 GB/s"
                ok = batch_bytes / ext_t >= 8e9
            elif op == "columnar" and case.name == "100B values":
                goal_txt = ">= 10 Mrec/s"
                ok = RECORDS / ext_t >= 10e6
            elif goal:
                goal_txt = f">= {goal}x"
                ok = ratio >= goal
            else:
                goal_txt, ok = "", True
            mark = "" if not goal_txt else (" ok" if ok else " MISSED")
            if not ok:
                failures.append((case.name, op))
            cells = " ".join(f"{fmt_time(times.get(i)):>12}" for i in impls)
            print(f"{case.name:27} {op:18} {cells} {rate:>14} {ratio:11.2f}x {vs_py:9.1f}x  {goal_txt}{mark}")
            sys.stdout.flush()
        print()
    print("missed goals:", ", ".join(f"{c} / {o}" for c, o in failures) if failures else "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
