"""Log-dir moves driven by Kafka 4.4's own tools against a kraftwire node with two log directories, beside ours on
the same node (mirrors the log-dir cases of Kafka's ``ReassignPartitionsIntegrationTest`` and ``LogDirsCommandTest``):
``kafka-reassign-partitions --execute`` with ``log_dirs`` and ``--replica-alter-log-dirs-throttle`` moves the
replicas and prints what ``kraftwire reassign-partitions`` prints for the move back; ``--verify`` prints the same
move states; ``kafka-log-dirs --describe`` shows a throttled move's future replica as ``kraftwire log-dirs`` does."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from confluent_kafka import Producer

from harness import roles
from harness.kafka_tools import start_single_node

from kraftwire import cli
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def two_dirs(tmp_path_factory):
    base = str(tmp_path_factory.mktemp("two-log-dirs"))
    a, b = os.path.join(base, "dir-a"), os.path.join(base, "dir-b")
    node = start_single_node(os.path.join(base, "node"), f"log.dirs={a},{b}\nnum.partitions=1\n")
    try:
        yield node, a, b
    finally:
        node.cluster.close()


def _port(node) -> int:
    return int(node.bootstrap.rsplit(":", 1)[1])


def _where(node, topic: str) -> dict:
    answer = asyncio.run(request_once("127.0.0.1", _port(node), w.DescribeLogDirsRequest(topics=None), 4,
                                      timeout=10.0))
    return {(p.partition_index, p.is_future_key): r.log_dir for r in answer.results for t in r.topics
            if t.name == topic for p in t.partitions}


def ours(capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(list(args))
    return code, capsys.readouterr().out


def _plan(path, topic: str, dirs: dict[int, str]) -> str:
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": [1], "log_dirs": [d]}
                                                for p, d in sorted(dirs.items())]}, f)
    return str(path)


def test_kafkas_reassign_tool_moves_replicas_between_log_dirs_as_ours(tools, two_dirs, tmp_path, capsys):
    node, a, b = two_dirs
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", "jb", "--partitions", "2")
    roles.wait_until(lambda: len(_where(node, "jb")) == 2, "jb hosted")
    start = _where(node, "jb")
    other = {p: (b if start[(p, False)] == a else a) for p in (0, 1)}
    theirs = tools.ok("kafka-reassign-partitions", "--bootstrap-server", node.bootstrap, "--execute",
                      "--reassignment-json-file", _plan(tmp_path / "there.json", "jb", other),
                      "--replica-alter-log-dirs-throttle", "100000000").out
    roles.wait_until(lambda: _where(node, "jb") == {(p, False): other[p] for p in (0, 1)}, "moved by Kafka's tool")
    verified = tools.ok("kafka-reassign-partitions", "--bootstrap-server", node.bootstrap, "--verify",
                        "--reassignment-json-file", str(tmp_path / "there.json")).out
    code, mine_verified = ours(capsys, "reassign-partitions", "--bootstrap-server", node.bootstrap, "--verify",
                               "--reassignment-json-file", str(tmp_path / "there.json"))
    assert code == 0 and mine_verified == verified
    assert "Reassignment of replica jb-0-1 completed successfully." in verified
    # ours moves them back; its text is Kafka's with the directories swapped
    code, mine = ours(capsys, "reassign-partitions", "--bootstrap-server", node.bootstrap, "--execute",
                      "--reassignment-json-file", _plan(tmp_path / "back.json", "jb", {p: start[(p, False)]
                                                                                        for p in (0, 1)}),
                      "--replica-alter-log-dirs-throttle", "100000000")
    assert code == 0
    swap = {a: b, b: a}
    assert mine == theirs.replace(a, "\0A").replace(b, swap[b]).replace("\0A", swap[a]), (mine, theirs)
    assert "The replica-alter-dir throttle limit was set to 100000000 B/s" in mine
    roles.wait_until(lambda: _where(node, "jb") == {(p, False): start[(p, False)] for p in (0, 1)}, "moved back")


def test_a_throttled_future_replica_in_kafkas_log_dirs_tool_as_in_ours(tools, two_dirs, tmp_path, capsys):
    node, a, b = two_dirs
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", "slowjb", "--partitions",
             "1")
    producer = Producer({"bootstrap.servers": node.bootstrap, "acks": "all"})
    for _ in range(24):  # more than one copy read (1 MiB)
        producer.produce("slowjb", value=b"z" * 60_000)
    producer.flush(20)
    source = _where(node, "slowjb")[(0, False)]
    target = b if source == a else a
    plan = _plan(tmp_path / "slow.json", "slowjb", {0: target})
    code, _ = ours(capsys, "reassign-partitions", "--bootstrap-server", node.bootstrap, "--execute",
                   "--reassignment-json-file", plan, "--replica-alter-log-dirs-throttle", "1")
    assert code == 0
    roles.wait_until(lambda: (0, True) in _where(node, "slowjb"), "a future replica")
    theirs = tools.ok("kafka-log-dirs", "--bootstrap-server", node.bootstrap, "--describe", "--topic-list",
                      "slowjb").out
    code, mine = ours(capsys, "log-dirs", "--bootstrap-server", node.bootstrap, "--describe", "--topic-list",
                      "slowjb")
    assert code == 0 and mine == theirs
    assert '"isFuture":true' in theirs
    verified = tools.ok("kafka-reassign-partitions", "--bootstrap-server", node.bootstrap, "--verify",
                        "--reassignment-json-file", plan).out
    code, mine_verified = ours(capsys, "reassign-partitions", "--bootstrap-server", node.bootstrap, "--verify",
                               "--reassignment-json-file", plan)
    assert mine_verified == verified
    assert "Reassignment of replica slowjb-0-1 is still in progress." in verified
    # cancelled by Kafka's tool: moved back to where it is, the future replica dropped
    tools.ok("kafka-reassign-partitions", "--bootstrap-server", node.bootstrap, "--cancel",
             "--reassignment-json-file", plan)
    roles.wait_until(lambda: _where(node, "slowjb") == {(0, False): source}, "future replica dropped")
