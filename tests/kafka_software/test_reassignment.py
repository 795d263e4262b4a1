"""Partition reassignment on a four-broker kraftwire cluster (three combined nodes and one broker): a topic on brokers
1-3 moved to 2-4 while an acks=all producer writes to it, with every acknowledged record still there afterwards; and
Kafka 4.4's ``kafka-reassign-partitions`` beside ``kraftwire reassign-partitions`` on the same cluster, printing the
same text for the same steps (list, execute, verify, cancel, the refusals), and with ``--throttle`` the same throttles
set (the topic's leader and follower throttled replicas, each moving broker's rates), honoured by the nodes, the move
completing under them and ``--verify`` clearing them."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import urllib.request

import pytest

from harness import roles
from harness.processes import kw

from kraftwire import cli
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once

pytestmark = pytest.mark.interop

MOVED = "moved"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    props = ("inter.broker.listener.name=BROKER\nauto.leader.rebalance.enable=false\n"
             "offsets.topic.num.partitions=1\ntransaction.state.log.num.partitions=1\n")
    metrics = {i: _free_port() for i in (1, 2, 3, 4)}
    c = roles.RolesCluster(str(tmp_path_factory.mktemp("reassignment-cluster")), controllers=3, brokers=1,
                           combined=True, kraft=True, extra_props=props,
                           node_props=lambda node_id, _socks: f"kraftwire.metrics.port={metrics[node_id]}\n")
    c.metrics_ports = metrics
    try:
        c.start_all()
        for n in (c.nodes[1], c.nodes[2], c.nodes[3]):
            roles.wait_until(lambda n=n: roles.broker_ids(n.port_of("CONTROLLER")) == [1, 2, 3, 4],
                             f"four brokers Online in node {n.node_id}'s image", c)
        yield c
    finally:
        c.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _throttle_metrics(cluster) -> dict[str, float]:
    """The replication-throttle values of every node's scrape, summed per metric and direction."""
    out: dict[str, float] = {}
    for port in cluster.metrics_ports.values():
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            text = resp.read().decode()
        for m in re.finditer(r'^kraftwire_replication_(throttled_bytes|throttled_reads_held_back)'
                             r'\{direction="(\w+)"\} (\S+)$', text, re.M):
            key = f"{m[1]}/{m[2]}"
            out[key] = out.get(key, 0.0) + float(m[3])
    return out


def bootstrap(cluster, *ids) -> str:
    return ",".join(f"localhost:{cluster.nodes[i].port_of('BROKER')}" for i in ids or cluster.nodes)


def ours(capsys, *args: str) -> tuple[int, str]:
    """``kraftwire reassign-partitions`` in this process: (exit status, standard output)."""
    capsys.readouterr()
    code = cli.main(["reassign-partitions", *args])
    return code, capsys.readouterr().out


def described(tools, cluster, topic: str) -> dict[str, dict[str, str]]:
    result = tools.run("kafka-topics", "--bootstrap-server", bootstrap(cluster, 1, 2), "--describe", "--topic", topic)
    if result.exit != 0:
        return {}
    rows = [dict(part.split(": ", 1) for part in line.strip().split("\t") if ": " in part)
            for line in result.lines() if line.startswith("\t")]
    return {r["Partition"]: r for r in rows}


def placed(tools, cluster, topic: str, assignment: str, *configs: str) -> None:
    tools.ok("kafka-topics", "--bootstrap-server", bootstrap(cluster), "--create", "--topic", topic,
             "--replica-assignment", assignment, *(a for c in configs for a in ("--config", c)))
    size = len(assignment.split(",")[0].split(":"))
    roles.wait_until(lambda: (lambda ps: ps and all(len(r["Isr"].split(",")) == size for r in ps.values()))(
        described(tools, cluster, topic)), f"{topic} in sync", cluster)


def plan(path, topic: str, *replicas: list[int]) -> str:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": i, "replicas": r} for i, r in enumerate(replicas)]}))
    return str(path)


def _replicas_and_dirs(text: str) -> str:
    return re.sub(r'"replicas":\[[^\]]*\],"log_dirs":\[[^\]]*\]', "<replicas and dirs>", text)


def test_a_move_under_acks_all_load_loses_nothing(tools, cluster, tmp_path, capsys):
    """Three partitions on brokers 1-3 (min.insync.replicas=2) moved to 2-4 by ``kraftwire reassign-partitions
    --throttle`` while a producer with acks=all writes; after the move every record it had acknowledged is read back,
    and the nodes' metrics show the throttle at work: bytes of throttled replicas sent and received, and reads of
    the new replicas held back while over the rate (the 600 KB already in the topic outrun 100 KB/s at once)."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    placed(tools, cluster, MOVED, "1:2:3,2:3:1,3:1:2", "min.insync.replicas=2")
    acked: list[bytes] = []
    failed: list[str] = []
    stop = threading.Event()
    preload = Producer({"bootstrap.servers": bootstrap(cluster, 2, 3), "acks": "all", "linger.ms": 20})
    for n in range(600):
        value = b"pre%05d" % n + b"x" * 1000
        preload.produce(MOVED, value=value, partition=n % 3,
                        on_delivery=lambda err, msg: failed.append(str(err)) if err else acked.append(msg.value()))
    assert preload.flush(60) == 0 and not failed, failed[:5]
    before = _throttle_metrics(cluster)

    def write() -> None:
        producer = Producer({"bootstrap.servers": bootstrap(cluster, 2, 3), "acks": "all",
                             "enable.idempotence": True, "linger.ms": 5, "message.timeout.ms": 60000})

        def delivered(err, msg) -> None:
            if err is None:
                acked.append(msg.value())
            else:
                failed.append(str(err))

        n = 0
        while not stop.is_set() and n < 200_000:
            producer.produce(MOVED, value=b"%08d" % n, partition=n % 3, on_delivery=delivered)
            n += 1
            producer.poll(0.001 if n % 50 else 0.02)
        assert producer.flush(60) == 0

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    roles.wait_until(lambda: len(acked) >= 200, "the producer under way", cluster)
    target = plan(tmp_path / "move.json", MOVED, [2, 3, 4], [3, 4, 2], [4, 2, 3])
    code, out = ours(capsys, "--bootstrap-server", bootstrap(cluster, 1), "--execute", "--throttle", "100000",
                     "--reassignment-json-file", target)
    assert code == 0, out
    assert out.endswith(f"Successfully started partition reassignments for {MOVED}-0,{MOVED}-1,{MOVED}-2\n")
    assert "The inter-broker throttle limit was set to 100000 B/s" in out

    outputs: list[str] = []

    def verified() -> bool:
        code, out = ours(capsys, "--bootstrap-server", bootstrap(cluster, 1), "--verify",
                         "--reassignment-json-file", target)
        outputs.append(f"exit {code}: {out}")
        return code == 0 and "still in progress" not in out

    try:
        roles.wait_until(verified, "the move completed", cluster, timeout=120)
    except AssertionError as exc:
        raise AssertionError(f"{outputs[-1]}\n{exc}") from None
    throttled = _throttle_metrics(cluster)
    for key in ("throttled_bytes/leader", "throttled_bytes/follower"):
        assert throttled.get(key, 0) > before.get(key, 0), (key, before, throttled)
    held = ("throttled_reads_held_back/leader", "throttled_reads_held_back/follower")  # whichever side bit first
    assert sum(throttled.get(k, 0) for k in held) > sum(before.get(k, 0) for k in held), (before, throttled)
    during = len(acked)
    roles.wait_until(lambda: len(acked) >= during + 200, "the producer still writing after the move", cluster)
    stop.set()
    writer.join(90)
    assert not writer.is_alive() and not failed, failed[:5]
    rows = described(tools, cluster, MOVED)
    assert {p: r["Replicas"] for p, r in rows.items()} == {"0": "2,3,4", "1": "3,4,2", "2": "4,2,3"}
    assert all(sorted(r["Isr"].split(",")) == ["2", "3", "4"] for r in rows.values())

    consumer = Consumer({"bootstrap.servers": bootstrap(cluster, 2), "group.id": "reassignment-check",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(MOVED, p, 0) for p in range(3)])
    seen: set[bytes] = set()
    idle = 0
    while len(seen) < len(set(acked)) and idle < 30:
        batch = consumer.consume(1000, 1.0)
        idle = 0 if batch else idle + 1
        seen.update(m.value() for m in batch if m.error() is None)
    consumer.close()
    lost = set(acked) - seen
    assert not lost, f"{len(lost)} acknowledged records lost across the move, e.g. {sorted(lost)[:5]}"
    assert len(acked) > during  # records were acknowledged while the move ran and after it


def test_kafka_tool_and_ours_print_the_same(tools, cluster, tmp_path, capsys):
    """The same steps by Kafka 4.4's tool and by ours print the same text."""
    topic = "tooled"
    placed(tools, cluster, topic, "1:2")
    boot = bootstrap(cluster, 1)

    def both(*args: str, same: bool = True) -> tuple[str, str]:
        kafka = tools.run("kafka-reassign-partitions", "--bootstrap-server", boot, *args)
        code, out = ours(capsys, "--bootstrap-server", boot, *args)
        assert (kafka.exit != 0) == (code != 0), (kafka, code, out)
        if same:
            assert out == kafka.out, f"\n--- kafka\n{kafka.out}\n--- kraftwire\n{out}"
        return kafka.out, out

    both("--list")
    forward = plan(tmp_path / "forward.json", topic, [2, 3])
    back = plan(tmp_path / "back.json", topic, [1, 2])
    both("--verify", "--reassignment-json-file", forward)  # not started: the replica set differs
    both("--cancel", "--reassignment-json-file", forward)  # nothing to cancel
    # refusals: a broker that does not exist, a replication factor change refused (KIP-860), an empty list
    unknown = plan(tmp_path / "unknown.json", topic, [1, 9])
    kafka_out, our_out = both("--execute", "--reassignment-json-file", unknown, same=False)
    assert our_out.splitlines()[0] == kafka_out.splitlines()[0] == "Error: Unknown broker id 9"
    shrink = plan(tmp_path / "shrink.json", topic, [1])
    kafka = tools.run("kafka-reassign-partitions", "--bootstrap-server", boot, "--execute",
                      "--disallow-replication-factor-change", "--reassignment-json-file", shrink)
    code, out = ours(capsys, "--bootstrap-server", boot, "--execute", "--disallow-replication-factor-change",
                     "--reassignment-json-file", shrink)
    tail = f"Error reassigning partition(s):\n{topic}-0: The replication factor is changed from 2 to 1\n"
    assert kafka.out.endswith(tail) and out.endswith(tail), (kafka.out, out)

    # Kafka's tool moves it, ours verifies and moves it back, Kafka's verifies
    kafka = tools.ok("kafka-reassign-partitions", "--bootstrap-server", boot, "--execute",
                     "--reassignment-json-file", forward)
    roles.wait_until(lambda: "is completed" in ours(capsys, "--bootstrap-server", boot, "--verify",
                                                    "--reassignment-json-file", forward)[1],
                     "the move to 2,3 completed", cluster)
    both("--verify", "--reassignment-json-file", forward)
    both("--list")
    code, out = ours(capsys, "--bootstrap-server", boot, "--execute", "--reassignment-json-file", back)
    # the same text, of the other replicas and their log directories
    assert code == 0 and _replicas_and_dirs(out) == _replicas_and_dirs(kafka.out)
    assert out.count("kraft-logs-2") == 1 and out.count("kraft-logs-3") == 1
    roles.wait_until(lambda: "is completed" in tools.run("kafka-reassign-partitions", "--bootstrap-server", boot,
                                                         "--verify", "--reassignment-json-file", back).out,
                     "the move back to 1,2 completed", cluster)
    both("--verify", "--reassignment-json-file", back)

    # --generate: the current assignment is the same, the proposals are Kafka's random ones over the brokers
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    kafka_out, our_out = both("--generate", "--topics-to-move-json-file", str(topics), "--broker-list", "3,4",
                              same=False)
    assert kafka_out.split("Proposed")[0] == our_out.split("Proposed")[0]
    proposal = json.loads(our_out.splitlines()[-1])
    assert [sorted(p["replicas"]) for p in proposal["partitions"]] == [[3, 4]]


def test_topics_describe_shows_a_move_in_progress_as_kafkas_tool(tools, cluster):
    """A move to a stopped broker stays in progress: ``topics --describe`` then prints ``Adding Replicas`` and
    ``Removing Replicas`` on the moving partition and counts the replicas it keeps as the replication factor, as
    Kafka's TopicCommand does (from ListPartitionReassignments); ours prints what Kafka's prints, with the partition
    filters too. Broker 4 is started again afterwards, and the move completes."""
    topic = "in-flight"
    placed(tools, cluster, topic, "1:2,2:1")
    broker = cluster.nodes[4]
    broker.terminate()
    # Kafka's reassignment tool refuses a broker that is not live; the controller takes it (the broker is registered)
    AR = w.AlterPartitionReassignmentsRequest
    answer = asyncio.run(request_once("127.0.0.1", cluster.nodes[1].port_of("BROKER"), AR(topics=[AR.ReassignableTopic(
        name=topic, partitions=[AR.ReassignablePartition(partition_index=0, replicas=[1, 4])])]), 0, timeout=30))
    assert [answer.error_code] + [p.error_code for t in answer.responses for p in t.partitions] == [0, 0], answer
    roles.wait_until(lambda: described(tools, cluster, topic).get("0", {}).get("Replicas") == "1,4,2",
                     "the move of partition 0 to 1,4 started", cluster)
    try:
        boot = bootstrap(cluster, 1, 2)
        for flags in ((), ("--under-replicated-partitions",), ("--unavailable-partitions",)):
            args = ("--bootstrap-server", boot, "--describe", "--topic", topic, *flags)
            theirs = tools.ok("kafka-topics", *args)
            mine = kw("topics", *args)
            assert mine.stdout == theirs.out, f"\n--- kafka\n{theirs.out}\n--- kraftwire\n{mine.stdout}"
        lines = tools.ok("kafka-topics", "--bootstrap-server", boot, "--describe", "--topic", topic).lines()
        assert "\tReplicationFactor: 2\t" in lines[0], lines
        assert "\tReplicas: 1,4,2\tIsr: 1,2\tAdding Replicas: 4\tRemoving Replicas: 2\tElr: " in lines[1], lines
        assert "Adding Replicas" not in lines[2], lines
    finally:
        broker.start()  # the move then completes
        roles.wait_until(lambda: roles.broker_ids(cluster.nodes[1].port_of("CONTROLLER")) == [1, 2, 3, 4],
                         "broker 4 back Online", cluster)
        # ... once broker 4 has caught up: the tests after this one start moves of their own, which Kafka's tool
        # refuses while another reassignment is in progress
        roles.wait_until(lambda: described(tools, cluster, topic).get("0", {}).get("Replicas") == "1,4",
                         "the move of partition 0 to 1,4 completed", cluster)


THROTTLE = "10000000"


def _throttles(tools, cluster, topic: str) -> list[str]:
    """The throttle configs now set on the topic and on brokers 1-4, as kafka-configs prints them."""
    boot = bootstrap(cluster, 1)
    lines = tools.ok("kafka-configs", "--bootstrap-server", boot, "--describe", "--entity-type", "topics",
                     "--entity-name", topic).out.splitlines()
    for broker in (1, 2, 3, 4):
        lines += tools.ok("kafka-configs", "--bootstrap-server", boot, "--describe", "--entity-type", "brokers",
                          "--entity-name", str(broker)).out.splitlines()
    return [line.split(" sensitive=")[0].strip() for line in lines if "throttled" in line]


def test_throttled_moves_as_kafkas_tool(tools, cluster, tmp_path, capsys):
    boot = bootstrap(cluster, 1)
    set_by = {}
    for who, topic in (("kafka", "thr-kafka"), ("ours", "thr-ours")):
        placed(tools, cluster, topic, "1:2")
        target = plan(tmp_path / f"{who}.json", topic, [2, 3])
        args = ("--execute", "--throttle", THROTTLE, "--reassignment-json-file", target)
        if who == "kafka":
            out = tools.ok("kafka-reassign-partitions", "--bootstrap-server", boot, *args).out
        else:
            code, out = ours(capsys, "--bootstrap-server", boot, *args)
            assert code == 0, out
        set_by[who] = (out.replace(topic, "T").split("Save this to use")[1], _throttles(tools, cluster, topic))
        roles.wait_until(lambda: "is completed" in ours(capsys, "--bootstrap-server", boot, "--verify",
                                                        "--reassignment-json-file", target)[1],
                         f"{topic}'s throttled move completed", cluster)
        # --verify cleared them once the move was done: committed by the controller before the tool returned, and
        # seen by the broker asked a moment later (its metadata image follows the controller's log)
        roles.wait_until(lambda: _throttles(tools, cluster, topic) == [], f"{topic}'s throttles cleared", cluster)
    assert set_by["ours"][0] == set_by["kafka"][0]
    assert "The inter-broker throttle limit was set to 10000000 B/s" in set_by["ours"][0]
    kafka_lines, our_lines = (sorted(line.replace("thr-kafka", "T").replace("thr-ours", "T") for line in lines)
                              for _, lines in (set_by["kafka"], set_by["ours"]))
    assert our_lines == kafka_lines and "leader.replication.throttled.replicas=0:1,0:2" in our_lines, our_lines
    assert "follower.replication.throttled.replicas=0:3" in our_lines
