"""One run, one table: kraftwire's protocol codec against kafka-python 3.x's generated classes.

    python benchmarks/protocol_table.py [--rounds 7] [--target-ms 20]

Medians of interleaved rounds (every implementation once per round, rotating order): this machine's
speed drifts between runs. "ratio" is kafka-python's time divided by ours (>1 = kraftwire faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from protocol_cases import CASES  # noqa: E402


def calibrate(fn, target_s: float) -> int:
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(target_s / once))


def measure(fns: dict, rounds: int, target_s: float) -> dict:
    loops = {k: calibrate(f, target_s) for k, f in fns.items()}
    samples: dict = {k: [] for k in fns}
    names = list(fns)
    for r in range(rounds):
        for k in names[r % len(names):] + names[: r % len(names)]:
            f, n = fns[k], loops[k]
            start = time.perf_counter()
            for _ in range(n):
                f()
            samples[k].append((time.perf_counter() - start) / n)
    return {k: statistics.median(v) for k, v in samples.items()}


def fmt(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:,.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--target-ms", type=float, default=20)
    args = ap.parse_args()
    rows = []
    for name, make in CASES.items():
        fns = make()
        t = measure(fns, args.rounds, args.target_ms / 1000)
        base = t["kafka-python"]
        for impl, secs in t.items():
            rows.append((name, impl, fmt(secs), "" if impl == "kafka-python" else f"{base / secs:,.1f}x"))
    widths = [max(len(r[i]) for r in rows + [("case", "implementation", "median", "ratio")]) for i in range(4)]
    header = ("case", "implementation", "median", "ratio")
    line = " | ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line)
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
