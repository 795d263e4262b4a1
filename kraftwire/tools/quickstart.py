"""``kraftwire quickstart``: the embedded default — a local N-node quorum running the test-server workload.

The node (asyncio server, driver) is not built yet; until it is, this command says so and exits non-zero
rather than pretending to run anything.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=3, help="number of voters (default 3)")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds to run the workload")
    parser.add_argument("--throughput", type=int, default=20000, help="records per second, -1 for unthrottled")
    parser.add_argument("--record-size", type=int, default=256, help="bytes per record")
    parser.add_argument("--records-per-append", type=int, default=1, help="records per append")
    parser.add_argument("--json", metavar="PATH", help="write the summary as JSON")


def run(args: argparse.Namespace) -> int:
    print(
        "kraftwire quickstart: coming with the node (asyncio server + Raft driver), which has not landed yet.\n"
        "Today kraftwire ships the RecordBatch v2 codec, the Kafka protocol layer and the log; see README.md.",
        file=sys.stderr,
    )
    return 2
