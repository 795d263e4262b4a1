"""Kafka 4.4's tools on a three-node kraftwire cluster (three combined brokers and controllers), where leadership
and replication are there to see: kafka-topics' under-replicated view while a broker is down, kafka-leader-election
moving leadership back to the preferred replica once it has returned, kafka-metadata-quorum's three voters and
kafka-log-dirs' three brokers."""

from __future__ import annotations

import json

import pytest

from harness import roles

pytestmark = pytest.mark.interop

TOPIC = "elected"
#: partition p's preferred leader is broker p + 1
ASSIGNMENT = "1:2:3,2:3:1,3:1:2"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    props = ("inter.broker.listener.name=BROKER\nauto.leader.rebalance.enable=false\n"
             "offsets.topic.num.partitions=3\ntransaction.state.log.num.partitions=3\n")
    c = roles.RolesCluster(str(tmp_path_factory.mktemp("kafka-software-cluster")), controllers=3, brokers=0,
                           combined=True, kraft=True, extra_props=props)
    try:
        c.start_all()
        for n in c.nodes.values():
            roles.wait_until(lambda n=n: roles.broker_ids(n.port_of("CONTROLLER")) == [1, 2, 3],
                             f"three brokers Online in node {n.node_id}'s image", c)
        yield c
    finally:
        c.close()


def bootstrap(cluster, *ids) -> str:
    return ",".join(f"localhost:{cluster.nodes[i].port_of('BROKER')}" for i in ids or cluster.nodes)


def partitions(tools, cluster, *extra, new: bool = False) -> dict[str, dict[str, str]]:
    """kafka-topics --describe's partition lines: {partition: {Leader, Replicas, Isr, ...}}. ``new``: {} while the
    brokers asked do not know the topic yet (each broker's image follows a creation a moment after the controller
    answers it, as Kafka's do)."""
    result = tools.run("kafka-topics", "--bootstrap-server", bootstrap(cluster, 2, 3), "--describe", "--topic",
                       TOPIC, *extra)
    if result.exit != 0:
        assert new and "does not exist" in result.out, result.out + result.err
        return {}
    lines = result.lines()
    rows = [dict(part.split(": ", 1) for part in line.strip().split("\t") if ": " in part)
            for line in lines if line.startswith("\t")]
    return {r["Partition"]: r for r in rows}


def test_leader_election_brings_back_the_preferred_leader(tools, cluster):
    created = tools.ok("kafka-topics", "--bootstrap-server", bootstrap(cluster), "--create", "--topic", TOPIC,
                       "--replica-assignment", ASSIGNMENT)
    assert created.out == f"Created topic {TOPIC}.\n"
    in_sync = {"0": ("1", "1,2,3"), "1": ("2", "2,3,1"), "2": ("3", "3,1,2")}
    roles.wait_until(lambda: {p: (r["Leader"], r["Isr"]) for p, r in partitions(tools, cluster, new=True).items()}
                     == in_sync, "every replica in sync", cluster)

    node = cluster.nodes[1]
    assert node.terminate() == 0  # controlled shutdown: its leadership and ISR places go first
    moved = roles.wait_until(lambda: (lambda ps: ps if all("1" not in r["Isr"].split(",") for r in ps.values())
                                      else None)(partitions(tools, cluster)), "broker 1 out of every ISR", cluster)
    assert moved["0"]["Leader"] in ("2", "3")
    assert sorted(partitions(tools, cluster, "--under-replicated-partitions")) == ["0", "1", "2"]
    assert partitions(tools, cluster, "--unavailable-partitions") == {}

    node.start()
    roles.wait_until(lambda: all(len(r["Isr"].split(",")) == 3 for r in partitions(tools, cluster).values()),
                     "broker 1 back in every ISR", cluster)
    assert partitions(tools, cluster, "--under-replicated-partitions") == {}
    assert partitions(tools, cluster)["0"]["Leader"] != "1"  # auto.leader.rebalance.enable=false: it stays moved

    def elect(*which) -> str:
        return tools.ok("kafka-leader-election", "--bootstrap-server", bootstrap(cluster, 2, 3), "--election-type",
                        "preferred", *which).out

    assert elect("--topic", TOPIC, "--partition", "1") == \
        f"Valid replica already elected for partitions {TOPIC}-1\n"
    # all partitions: Kafka answers for the ones it elected only
    assert elect("--all-topic-partitions") == \
        f"Successfully completed leader election (PREFERRED) for partitions {TOPIC}-0\n"
    roles.wait_until(lambda: partitions(tools, cluster)["0"]["Leader"] == "1", "broker 1 leading partition 0 again",
                     cluster)
    assert elect("--topic", TOPIC, "--partition", "0") == \
        f"Valid replica already elected for partitions {TOPIC}-0\n"
    assert {p: r["Leader"] for p, r in partitions(tools, cluster).items()} == {"0": "1", "1": "2", "2": "3"}


def test_metadata_quorum_and_log_dirs_see_three_nodes(tools, cluster):
    controllers = ",".join(f"localhost:{n.port_of('CONTROLLER')}" for n in cluster.nodes.values())
    rows = roles.wait_until(lambda: (lambda rs: rs if all(r[3].strip() == "0" for r in rs) else None)(
        [line.split("\t") for line in tools.ok("kafka-metadata-quorum", "--bootstrap-controller", controllers,
                                               "describe", "--replication").lines()[1:]]),
        "every voter caught up", cluster)
    assert sorted(r[0].strip() for r in rows) == ["1", "2", "3"]
    assert sorted(r[6].strip() for r in rows) == ["Follower", "Follower", "Leader"]
    status = dict(line.split(":", 1) for line in tools.ok(
        "kafka-metadata-quorum", "--bootstrap-server", bootstrap(cluster), "describe", "--status").lines())
    assert sorted(v["id"] for v in json.loads(status["CurrentVoters"])) == [1, 2, 3]

    tools.ok("kafka-topics", "--bootstrap-server", bootstrap(cluster), "--create", "--topic", "spread",
             "--partitions", "3", "--replication-factor", "2")

    def replicas() -> list[str]:
        out = tools.ok("kafka-log-dirs", "--bootstrap-server", bootstrap(cluster), "--describe", "--topic-list",
                       "spread").lines()
        brokers = json.loads(out[-1])["brokers"]
        assert sorted(b["broker"] for b in brokers) == [1, 2, 3]
        return sorted(p["partition"] for b in brokers for d in b["logDirs"] for p in d["partitions"])

    # each broker creates its replicas once its image has the topic, a moment after the creation is answered
    roles.wait_until(lambda: replicas() == sorted(f"spread-{p}" for p in range(3) for _ in range(2)),
                     "two replicas of each partition in the brokers' log dirs", cluster)


def test_replica_verification_reads_every_replica_as_kafkas(tools, cluster, tmp_path):
    """kafka-replica-verification fetches each follower as Kafka's debugging consumer (replica id -2), which reads
    any replica up to its log end: Kafka's tool and kraftwire's find the three replicas of each partition equal."""
    import re
    import subprocess
    import sys

    from harness.kafka import start_java, stop_java
    from harness.processes import kraftwire_env

    tools.ok("kafka-topics", "--bootstrap-server", bootstrap(cluster), "--create", "--topic", "verified",
             "--partitions", "2", "--replication-factor", "3")
    roles.wait_until(lambda: tools.run("kafka-topics", "--bootstrap-server", bootstrap(cluster), "--describe",
                                       "--topic", "verified").out.count("Isr: ") == 2, "verified described", cluster)
    tools.ok("kafka-producer-perf-test", "--topic", "verified", "--num-records", "200", "--record-size", "50",
             "--throughput", "-1", "--command-property", f"bootstrap.servers={bootstrap(cluster)}", "acks=all")
    args = ("--broker-list", bootstrap(cluster), "--topics-include", "verified", "--time", "-2",
            "--report-interval-ms", "1000")
    kafka = start_java("org.apache.kafka.tools.ReplicaVerificationTool", *args, log=str(tmp_path / "kafka.out"))
    with open(tmp_path / "ours.out", "wb") as out:
        ours = subprocess.Popen([sys.executable, "-m", "kraftwire", "replica-verification", *args], stdout=out,
                                stderr=subprocess.STDOUT, env=kraftwire_env())

    def lines(name: str) -> list[str]:
        with open(tmp_path / name, encoding="utf-8") as f:
            return [line for line in f.read().splitlines() if not line.startswith("SLF4J")]

    try:  # both run until stopped: until each has printed three reports (they report every second)
        roles.wait_until(lambda: len(lines("ours.out")) >= 4 and len(lines("kafka.out")) >= 4,
                         "three reports from each tool", cluster, timeout=90)
    finally:
        ours.terminate()
        ours.wait(30)
        stop_java(kafka)
    stamp = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: ")
    mine = [stamp.sub("", line) for line in lines("ours.out")]
    kafkas = [stamp.sub("", line) for line in lines("kafka.out")]
    assert mine[0] == kafkas[0] == "verification process is started", (mine, kafkas)
    reports = re.compile(r"max lag is 0 for partition verified-[01] at offset \d+ among 2 partitions")
    assert len(mine) >= 3 and all(reports.fullmatch(line) for line in mine[1:]), mine
    assert len(kafkas) >= 3 and all(reports.fullmatch(line) for line in kafkas[1:]), kafkas
    assert set(mine[1:]) == set(kafkas[1:])
