"""Hot-path cost of recording a metric, kraftwire's own structures against the libraries that could replace them.

    python benchmarks/metrics_bench.py [--n 200000] [--rounds 5]

Rows (best of ``--rounds``, nanoseconds per call, one thread, the event loop's situation):
* ``Histogram.record_ms`` (kraftwire.server.edge.metrics) against ``hdrh.histogram.HdrHistogram.record_value`` with the
  same microsecond conversion, 3 significant figures, 1 us .. 1 h;
* ``Registry.inc`` with one label against a ``prometheus_client.Counter`` child (``labels(...).inc()``).

The commit latency histogram is recorded once per committed append run and the request counter once per request, so
these calls sit on the node's hot path. Figures depend on the machine; they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import random
import sys
import time


def _best(fn, rounds: int, n: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    n, rounds = args.n, args.rounds
    rng = random.Random(1)
    values = [rng.expovariate(1 / 5.0) for _ in range(n)]  # commit latencies in ms, mean 5 ms

    from kraftwire.server.edge.metrics import Histogram, Registry

    rows = []

    def ours():
        h = Histogram()
        record = h.record_ms
        for v in values:
            record(v, 1)

    rows.append(("Histogram.record_ms (kraftwire)", _best(ours, rounds, n)))

    try:
        from hdrh.histogram import HdrHistogram
    except ImportError:
        print("hdrhistogram is not installed: its row is skipped", file=sys.stderr)
    else:
        def hdr():
            h = HdrHistogram(1, 3_600_000_000, 3)
            record = h.record_value
            for v in values:
                record(int(v * 1000.0) if v > 0 else 0, 1)

        rows.append(("HdrHistogram.record_value (hdrhistogram)", _best(hdr, rounds, n)))

    apis = [rng.choice(("Fetch", "Produce", "Metadata", "Vote")) for _ in range(n)]

    def ours_inc():
        r = Registry()
        for api in apis:
            r.inc("requests_total", api=api)

    rows.append(("Registry.inc (kraftwire)", _best(ours_inc, rounds, n)))

    try:
        from prometheus_client import CollectorRegistry, Counter
    except ImportError:
        print("prometheus-client is not installed: its row is skipped", file=sys.stderr)
    else:
        def prom_inc():
            c = Counter("requests", "requests", ["api"], registry=CollectorRegistry())
            for api in apis:
                c.labels(api=api).inc()

        rows.append(("Counter.labels().inc (prometheus-client)", _best(prom_inc, rounds, n)))

    print("| call | ns per call |")
    print("| --- | ---: |")
    for name, ns in rows:
        print(f"| {name} | {ns:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
