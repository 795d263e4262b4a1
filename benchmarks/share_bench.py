"""Share-group throughput (issue #43): records per second acknowledged by four share consumers of one share group,
against a two-member consumer group reading the same topic, on kraftwire and on Apache Kafka 4.4 — one run each.

    python benchmarks/share_bench.py [--records 20000] [--json out.json]

One combined node of each (kraftwire formatted with ``--feature share.version=1``, Kafka with ``--release-version
4.4-IV0 --feature share.version=1``), a 2-partition topic filled with ``--records`` 100-byte records before the
clock starts; then, on the same topic, Kafka's Java clients (``tests/kafka/ShareBench.java``): four
``KafkaShareConsumer``s ACCEPTing every record (explicit acknowledgement, carried by the next poll) until the
acknowledgement callbacks have reported every record acknowledged, and two ``KafkaConsumer``s of a consumer group
committing after each poll until every record is committed. The rate is records / (last acknowledged or committed -
first received): the joins are outside it.

Figures depend on the machine (2 shared cores here, the clients on the same cores as the server); they are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

KRAFTWIRE_PROPS = ("offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
                   "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
                   "share.coordinator.state.topic.num.partitions=1\ngroup.initial.rebalance.delay.ms=0\n")
KAFKA_PROPS = ("offsets.topic.num.partitions=1\nshare.coordinator.state.topic.replication.factor=1\n"
               "share.coordinator.state.topic.min.isr=1\nshare.coordinator.state.topic.num.partitions=1\n"
               "group.initial.rebalance.delay.ms=0\n")
KAFKA_FORMAT = ("--release-version", "4.4-IV0", "--feature", "share.version=1")
DEADLINE_MS = 240_000


def _run(port: int, mode: str, group: str, members: int, records: int) -> dict:
    """One ShareBench run against the broker on ``port``; its figures."""
    from harness.kafka import run_java

    out = run_java("ShareBench.java", f"127.0.0.1:{port}", "bench", group, mode, str(members), str(records),
                   str(DEADLINE_MS), timeout=DEADLINE_MS / 1000 + 60)
    lines = out.split()
    if mode == "produce":
        return {}
    first = int(lines[lines.index("FIRST") + 1])
    if "DONE" not in lines:
        raise AssertionError(f"{mode} did not finish: {out[-500:]}")
    last = int(lines[lines.index("DONE") + 1])
    seconds = max(last - first, 1) / 1000
    return {"members": members, "records": records, "seconds": round(seconds, 3),
            "records_per_s": round(records / seconds)}


def _create_topic(port: int) -> None:
    from harness import roles
    from server.test_kraft_node import _create

    from kraftwire.server.edge.client import request_once

    def created():
        answer = asyncio.run(request_once("127.0.0.1", port, _create("bench", partitions=2), 7, timeout=15.0))
        return answer.topics[0].error_code in (0, 36)  # 36: TOPIC_ALREADY_EXISTS, an earlier try that timed out

    roles.wait_until(created, "the bench topic created")


def _workload(port: int, records: int) -> dict:
    _create_topic(port)
    _run(port, "produce", "-", 1, records)
    return {"share_4": _run(port, "share", "sg", 4, records), "group_2": _run(port, "group", "cg", 2, records)}


def kraftwire_side(records: int) -> dict:
    from harness import processes, roles

    base = Path(tempfile.mkdtemp(prefix="kraftwire-share-bench-"))
    try:
        with processes.CombinedNode(base, KRAFTWIRE_PROPS, format_args=("--feature", "share.version=1")) as node:
            roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
            return _workload(node.port, records)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def kafka_side(records: int) -> dict:
    from harness.kafka import KafkaNode, until_broker_answers

    base = Path(tempfile.mkdtemp(prefix="kafka-share-bench-"))
    try:
        with KafkaNode(str(base), KAFKA_PROPS, format_args=KAFKA_FORMAT) as node:
            until_broker_answers(node.port)
            return _workload(node.port, records)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def table(results: dict) -> str:
    rows = [("server", "workload", "members", "seconds", "records/s")]
    for server, runs in results.items():
        for name, label in (("share_4", "share group (KafkaShareConsumer, ACCEPT each)"),
                            ("group_2", "consumer group (KafkaConsumer, commitSync)")):
            r = runs[name]
            rows.append((server, label, str(r["members"]), f"{r['seconds']:.2f}", str(r["records_per_s"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    share = {s: runs["share_4"]["records_per_s"] for s, runs in results.items()}
    if "kraftwire" in share and "kafka-4.4" in share:
        lines.append(f"\nkraftwire share / Kafka 4.4 share: {share['kraftwire'] / share['kafka-4.4']:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--skip-kafka", action="store_true", help="measure kraftwire alone")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    results = {"kraftwire": kraftwire_side(args.records)}
    if not args.skip_kafka:
        results["kafka-4.4"] = kafka_side(args.records)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
