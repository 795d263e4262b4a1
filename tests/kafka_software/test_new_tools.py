"""The tools Kafka ships that kraftwire lacked (issue 41), each run beside Kafka 4.4's own against the same kraftwire
node and compared: ``get-offsets`` and ``broker-api-versions`` line for line, ``consumer-perf-test``,
``e2e-latency``, ``verifiable-consumer`` and ``replica-verification`` by the shape of their lines and the figures
both must agree on (the timings differ from run to run)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from harness.kafka import start_java, stop_java
from harness.processes import kraftwire_env, kw
from harness.roles import wait_until

pytestmark = pytest.mark.interop

DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"


def create(tools, node, topic: str, *extra: str) -> None:
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", topic, *extra)
    tools.described(node.bootstrap, topic)


def produce(tools, node, topic: str, n: int) -> None:
    tools.ok("kafka-clients", "produce", node.bootstrap, topic, str(n))


def test_get_offsets_prints_what_kafkas_prints(tools, node):
    create(tools, node, "new-offsets", "--partitions", "3")
    produce(tools, node, "new-offsets", 30)
    b = ("--bootstrap-server", node.bootstrap)
    cases = [(), ("--topic", "new-off.*"), ("--topic", "new-offsets", "--time", "-2"),
             ("--topic", "new-offsets", "--time", "earliest"), ("--topic", "new-offsets", "--time", "max-timestamp"),
             ("--topic", "new-offsets", "--partitions", "0,2"), ("--topic-partitions", "new-offsets:1-,:0"),
             ("--topic-partitions", "new-offsets:-2", "--exclude-internal-topics"),
             ("--topic", "new-offsets", "--time", "0"), ("--topic", "new-offsets", "--time", "99999999999999"),
             ("--topic", "new-offsets", "--time", "latest-tiered"), ("--exclude-internal-topics",)]
    for args in cases:
        theirs = tools.run("kafka-get-offsets", *b, *args)
        mine = kw("get-offsets", *b, *args, check=False)
        assert (mine.returncode, mine.stdout) == (theirs.exit, theirs.out), args
    latest = kw("get-offsets", *b, "--topic", "new-offsets").stdout.splitlines()
    assert sum(int(line.rsplit(":", 1)[1]) for line in latest) == 30
    for args in (("--topic", "nope-.*"), ("--time", "soon"), ("--partitions", "0,x"),
                 ("--topic", "new-offsets", "--topic-partitions", "x")):
        theirs = tools.run("kafka-get-offsets", *b, *args)
        mine = kw("get-offsets", *b, *args, check=False)
        assert (mine.returncode, mine.stderr) == (theirs.exit, theirs.err) == (1, mine.stderr), args
        assert mine.stderr.startswith("Error occurred: ")


def test_broker_api_versions_prints_what_kafkas_prints(tools, node):
    theirs = tools.ok("kafka-broker-api-versions", "--bootstrap-server", node.bootstrap).out
    mine = kw("broker-api-versions", "--bootstrap-server", node.bootstrap).stdout
    assert mine == theirs
    assert "\tProduce(0): " in mine and "\tCreateDelegationToken(38): UNSUPPORTED,\n" in mine


def test_consumer_perf_test_lines(tools, node):
    create(tools, node, "new-perf")
    produce(tools, node, "new-perf", 100)
    args = ("--bootstrap-server", node.bootstrap, "--topic", "new-perf", "--num-records", "100")
    theirs = tools.ok("kafka-consumer-perf-test", *args, "--group", "new-perf-kafka").lines()
    mine = kw("consumer-perf-test", *args, "--group", "new-perf-ours").stdout.splitlines()
    assert mine[0] == theirs[0]
    row = re.compile(rf"^{DATE}, {DATE}, (\d+\.\d{{4}}), \d+\.\d{{4}}, (\d+), \d+\.\d{{4}}, \d+, -?\d+, "
                     r"\d+\.\d{4}, \d+\.\d{4}$")
    assert row.match(mine[1]).groups() == row.match(theirs[1]).groups()
    assert row.match(mine[1]).group(2) == "100"

    # too few records: Kafka's warning, then the line of what was read
    short = ("--bootstrap-server", node.bootstrap, "--topic", "new-perf", "--num-records", "150", "--timeout", "2000",
             "--hide-header")
    theirs = tools.ok("kafka-consumer-perf-test", *short).lines()
    mine = kw("consumer-perf-test", *short).stdout.splitlines()
    assert mine[0] == theirs[0] == ("WARNING: Exiting before consuming the expected number of records: timeout "
                                    "(2000 ms) exceeded. You can use the --timeout option to increase the timeout.")
    assert row.match(mine[1]).group(2) == row.match(theirs[1]).group(2) == "100"

    detailed = kw("consumer-perf-test", *args, "--show-detailed-stats", "--reporting-interval", "1").stdout
    theirs = tools.ok("kafka-consumer-perf-test", *args, "--show-detailed-stats", "--reporting-interval", "1").out
    assert detailed.splitlines()[0] == theirs.splitlines()[0]
    detail = re.compile(rf"^{DATE}, 0, \d+\.\d{{4}}, \d+\.\d{{4}}, \d+, \d+\.\d{{4}}, \d+, -?\d+, \d+\.\d{{4}}, "
                        r"\d+\.\d{4}$")
    assert all(detail.match(line) for line in detailed.splitlines()[1:] + theirs.splitlines()[1:])


def test_e2e_latency_lines(tools, node):
    summary = [re.compile(r"^0\t\d+\.\d+$"), re.compile(r"^Avg latency: \d+\.\d{4} ms$"),
               re.compile(r"^Percentiles: 50th = \d+, 99th = \d+, 99\.9th = \d+$")]
    args = ("--bootstrap-server", node.bootstrap, "--topic", "new-e2e", "--num-records", "50", "--producer-acks",
            "all", "--record-size", "100")
    mine = kw("e2e-latency", *args, "--record-key-size", "8", "--num-headers", "2", "--record-header-size", "4")
    assert mine.stdout.splitlines()[0] == ('Topic "new-e2e" does not exist. Will create topic with 1 partition(s) '
                                           "and replication factor = 1")
    theirs = tools.ok("kafka-e2e-latency", *args).lines()
    for lines in (mine.stdout.splitlines()[1:], theirs):
        assert len(lines) == 3 and all(p.match(line) for p, line in zip(summary, lines)), lines
    positional = kw("e2e-latency", node.bootstrap, "new-e2e", "5", "1", "10").stdout.splitlines()
    assert positional[0] == tools.ok("kafka-e2e-latency", node.bootstrap, "new-e2e", "5", "1", "10").lines()[0]
    bad = kw("e2e-latency", *args[:-3], "0", "--record-size", "1", check=False)
    assert (bad.returncode, bad.stderr) == (1, "Invalid value for --producer-acks. Latency testing requires "
                                               "synchronous acknowledgement. Please use '1' or 'all'.\n")
    assert tools.run("kafka-e2e-latency", *args[:-3], "0", "--record-size", "1").exit == 1


def _events(lines: list[dict]) -> list[tuple]:
    """The verifiable consumer's lines without their timestamps."""
    return [tuple(sorted((k, repr(v)) for k, v in line.items() if k != "timestamp")) for line in lines]


def test_verifiable_consumer_lines(tools, node):
    create(tools, node, "new-verifiable", "--partitions", "2")
    produce(tools, node, "new-verifiable", 40)
    args = ("--bootstrap-server", node.bootstrap, "--topic", "new-verifiable", "--max-messages", "40")
    theirs = tools.ok("kafka-verifiable-consumer", *args, "--group-id", "new-vc-kafka").json_lines()
    mine = [json.loads(line) for line in
            kw("verifiable-consumer", *args, "--group-id", "new-vc-ours").stdout.splitlines()]
    for lines in (theirs, mine):
        names = [line["name"] for line in lines]
        assert names[0] == "startup_complete" and names[1] == "partitions_assigned"
        assert names[-3:] == ["partitions_revoked", "shutdown_complete", "shutdown_requested"]
        consumed = [line for line in lines if line["name"] == "records_consumed"]
        assert sum(c["count"] for c in consumed) == 40
        committed = [line for line in lines if line["name"] == "offsets_committed"]
        assert all(c["success"] for c in committed)
        last = {(o["topic"], o["partition"]): o["offset"] for c in committed for o in c["offsets"]}
        assert sum(last.values()) == 40
        assert sorted(lines[0]) == ["name", "timestamp"] and list(lines[1]) == ["timestamp", "name", "partitions"]
        assert list(consumed[0]) == ["timestamp", "name", "count", "partitions"]
        assert list(consumed[0]["partitions"][0]) == ["topic", "partition", "count", "minOffset", "maxOffset"]
    assert _events(mine[1:2]) == _events(theirs[1:2])  # the same assignment: both partitions

    verbose = [json.loads(line) for line in kw(
        "verifiable-consumer", *args[:-1], "3", "--group-id", "new-vc-verbose", "--verbose").stdout.splitlines()]
    data = [line for line in verbose if line["name"] == "record_data"]
    assert len(data) == 3 and list(data[0]) == ["timestamp", "name", "key", "value", "topic", "partition", "offset"]


def test_replica_verification_reports_as_kafkas(tools, node, tmp_path):
    """Both tools run until stopped: each for a few report intervals, then their lines without the time."""
    create(tools, node, "new-verify-a", "--partitions", "3")
    create(tools, node, "new-verify-b")
    produce(tools, node, "new-verify-a", 30)
    produce(tools, node, "new-verify-b", 10)
    args = ("--broker-list", node.bootstrap, "--topics-include", "new-verify-.*", "--time", "-2",
            "--report-interval-ms", "1000")
    kafka = start_java("org.apache.kafka.tools.ReplicaVerificationTool", *args, log=str(tmp_path / "kafka.out"))
    with open(tmp_path / "ours.out", "wb") as out:
        ours = subprocess.Popen([sys.executable, "-m", "kraftwire", "replica-verification", *args], stdout=out,
                                stderr=subprocess.STDOUT, env=kraftwire_env())

    def lines(name: str) -> list[str]:
        with open(tmp_path / name, encoding="utf-8") as f:
            return [line for line in f.read().splitlines() if not line.startswith("SLF4J")]

    try:  # both run until stopped: until each has printed two reports (they report every second)
        wait_until(lambda: len(lines("ours.out")) >= 3 and len(lines("kafka.out")) >= 3,
                   "two reports from each tool", timeout=90)
    finally:
        ours.terminate()
        ours.wait(30)
        stop_java(kafka)

    def shape(found: list[str]) -> list[str]:
        stamp = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: ")
        assert all(stamp.match(line) for line in found), found
        return [stamp.sub("", line) for line in found]

    mine, kafkas = shape(lines("ours.out")), shape(lines("kafka.out"))
    assert mine[0] == kafkas[0] == "verification process is started"
    # every record verified: lag 0, at the end offset of the same partition, among the four partitions
    assert set(mine[1:]) == set(kafkas[1:]) and len(set(mine[1:])) == 1
    assert re.fullmatch(r"max lag is 0 for partition new-verify-\S+-\d at offset \d+ among 4 partitions", mine[1])
