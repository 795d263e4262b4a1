"""``kraftwire test-server --config FILE [--throughput N|-1] [--record-size B] [--records-per-append K]
[--duration S] [--json PATH]``: a node serving its Raft log to clients as topic ``__raft_performance_test`` (or
the ``kraftwire.metadata.log.topic`` its config names) running Kafka's TestRaftServer workload
(see ``kraftwire.tools.workload``), with the flags honoured. Every 5 s it prints records/s,
``bytes.committed.rate`` and ``commit.latency`` p50/p75/p99/p99.9 (while it leads); at the end (``--duration``
elapsed, or SIGINT/SIGTERM) it writes ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from kraftwire.tools.server_start import add_common_arguments, inherited_sockets, load_settings_or_exit, run_node
from kraftwire.tools.server_start import setup_logging


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)
    add_workload_arguments(parser)
    parser.add_argument("--duration", type=float, default=None, metavar="S",
                        help="stop after S seconds (default: run until SIGINT/SIGTERM)")
    parser.add_argument("--json", metavar="PATH", help="write the summary as JSON at the end")
    parser.add_argument("--report-interval", type=float, default=5.0, help=argparse.SUPPRESS)
    parser.add_argument("--replica-directory-id", help="accepted for compatibility with Kafka's tool; the "
                        "directory id comes from meta.properties")


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--throughput", type=int, default=20000, metavar="N",
                        help="records per second, -1 for unthrottled, 0 to append nothing and only serve the log "
                             "(default 20000)")
    parser.add_argument("--record-size", type=int, default=256, metavar="B", help="bytes per record (default 256)")
    parser.add_argument("--records-per-append", type=int, default=1, metavar="K",
                        help="records per schedule_append (default 1, as Kafka)")


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_level)
    settings = load_settings_or_exit(args.config, args.override)
    if settings is None:
        return 1
    from kraftwire.config import METADATA_TOPIC
    from kraftwire.server.node.app import PERFORMANCE_TEST_TOPIC
    from kraftwire.server.test_server.server import RaftTestServer
    from kraftwire.tools.workload import Workload

    try:
        workload = Workload(settings.node_id, throughput=args.throughput, record_size=args.record_size,
                            records_per_append=args.records_per_append, report_interval_s=args.report_interval,
                            out=sys.stdout)
    except ValueError as exc:
        print(f"kraftwire test-server: {exc}", file=sys.stderr)
        return 1
    topic = settings.config.metadata_log_topic
    node = RaftTestServer(settings, listen_sockets=inherited_sockets(args.listener_fd),
                          topic=PERFORMANCE_TEST_TOPIC if topic == METADATA_TOPIC else topic, listeners=[workload])
    workload.attach_metrics(node.metrics)

    async def main() -> int:
        code = await run_node(node, duration_s=args.duration, on_started=lambda: workload.start(node.driver),
                              before_shutdown=workload.mark_end)
        await workload.stop()
        return code

    code = asyncio.run(main())
    if code != 0:
        return code
    summary = workload.summary()
    summary["node_id"] = settings.node_id
    if workload.error is not None:
        summary["error"] = str(workload.error)
    print("summary: " + json.dumps(summary), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    return 2 if workload.error is not None else 0
