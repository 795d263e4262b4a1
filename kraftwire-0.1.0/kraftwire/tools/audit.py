"""``kraftwire audit LOGDIR [LOGDIR ...] [--master URL]``: compare every partition's replicas across brokers' log
dirs (topic partitions and the Raft log ``__cluster_metadata-0``) with a Spark job.

    kraftwire audit /var/lib/kafka/broker-1 /var/lib/kafka/broker-2 /var/lib/kafka/broker-3

Partition dirs are grouped by ``<topic>-<partition>``; output: one row per replica (``TOPIC PARTITION BROKER
HIGH-WATERMARK ...``), one ``Topic: .. Partition: .. Status: ..`` line per partition, the findings, a summary.
Exit status: 0 when the replicas agree (uncommitted tails are reported, not failures), 1 on any violation
(corrupt batch, gap, duplicate, decreasing epoch, divergence below the replicas' checkpointed high watermarks), 2
when the directories cannot be read. The rules live in :mod:`kraftwire.spark.audit`; this module only parses arguments,
starts the session (local by default) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdirs", nargs="+", metavar="LOGDIR",
                        help="a broker's (or controller's) log dir, or one partition dir; globs allowed")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*])")
    parser.add_argument("--sample", type=int, default=10, help="how many example offsets to name per finding")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    try:
        from kraftwire.spark import session
        from kraftwire.spark.audit import audit
    except ImportError as exc:
        print(f"kraftwire audit: needs the [spark] extra (pyspark, pyarrow): {exc}", file=sys.stderr)
        return 2
    from pyspark.sql import SparkSession

    owned = SparkSession.getActiveSession() is None  # inside a running application: use it, leave it running
    spark = session(args.master, "kraftwire-audit")
    try:
        try:
            report = audit(spark, args.logdirs, sample=args.sample)
        except (OSError, ValueError) as exc:
            print(f"kraftwire audit: {exc}", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(report.as_json(), indent=2))
        else:
            print(report.render())
        return 0 if report.ok else 1
    finally:
        if owned:
            spark.stop()
