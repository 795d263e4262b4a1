"""The schema-driven fuzzer (tests/fuzz) for a long run: many seeds, many requests each, against each node
configuration — not part of the test command.

    python benchmarks/fuzz_long.py [--seeds 20] [--first-seed 1] [--requests 2000] [--configs open,authorizer,split]
                                   [--streams client,controller]

One node per configuration serves every seed (restarted when one stops answering or exits). Prints each seed's
summary as it ends, then every failure grouped by its first line with the seeds and cases that hit it. Each failure
carries its replay command.
Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import defaultdict

# The shared test helpers (tests/harness, tests/fuzz) beside these benchmarks; kraftwire itself is whichever one
# is installed.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from fuzz import nodes  # noqa: E402
from fuzz.runner import Runner  # noqa: E402

TEST_FILES = {"open": "tests/fuzz/test_fuzz_open.py", "authorizer": "tests/fuzz/test_fuzz_authorizer.py",
              "split": "tests/fuzz/test_fuzz_split.py"}
TESTS = {"client": "test_client_listener", "controller": "test_controller_listener",
         "before-login": "test_before_login"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="how many seeds (default 20)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--requests", type=int, default=2000, help="cases per stream and seed (default 2000)")
    ap.add_argument("--configs", default="open,authorizer,split")
    ap.add_argument("--streams", default="client,controller,before-login",
                    help="streams to fuzz, where the configuration has them")
    args = ap.parse_args(argv)
    failures: dict[str, list[str]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as base:
        for kind in args.configs.split(","):
            running, restarts = None, 0
            try:
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    for stream in args.streams.split(","):
                        if running is None:
                            os.makedirs(os.path.join(base, f"{kind}-{restarts}"))
                            running = nodes.start(kind, os.path.join(base, f"{kind}-{restarts}"))
                            restarts += 1
                        if stream not in running.streams:
                            continue
                        test_id = f"{TEST_FILES[kind]}::{TESTS[stream]}"
                        report = Runner(running.target, running.streams[stream], seed, running.advertised[stream],
                                        test_id).run(args.requests)
                        print(report.summary(), flush=True)
                        for f in report.failures:
                            failures[f"{kind}: {f.problem.splitlines()[0][:200]}"].append(f.render())
                        if report.aborted:
                            running.cluster.close()
                            running = None
            finally:
                if running is not None:
                    running.cluster.close()
    for problem, rendered in sorted(failures.items()):
        print(f"\n=== {problem} ({len(rendered)} cases)\n" + "\n---\n".join(rendered[:3]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
