"""Kafka 4.4's Java clients against a kraftwire node (``tests/kafka/KafkaClients.java``, one scenario per call, its
observations as JSON lines checked here): the idempotent producer; two consumers sharing a group with the classic
protocol and with KIP-848's consumer protocol, splitting the partitions and committing; a transactional producer
committing and aborting, read back with read_committed and read_uncommitted; and the Admin client's calls."""

from __future__ import annotations

import pytest

from kraftwire.metadata.version import MAXIMUM

pytestmark = pytest.mark.interop


def clients(tools, *args: str) -> list[dict]:
    return tools.ok("kafka-clients", *args, timeout=120).json_lines()


def ends_of(sent: list[dict]) -> dict[str, int]:
    ends: dict[str, int] = {}
    for r in sent:
        key = f"{r['topic']}-{r['partition']}"
        ends[key] = max(ends.get(key, 0), r["offset"] + 1)
    return ends


@pytest.mark.parametrize("protocol, kind", [("classic", "Classic"), ("consumer", "Consumer")])
def test_two_consumers_share_a_group_and_commit(tools, node, protocol, kind):
    topic, group, n = f"java-group-{protocol}", f"java-{protocol}", 40
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", topic, "--partitions", "4")
    sent = [dict(r, topic=topic) for r in clients(tools, "produce", node.bootstrap, topic, str(n))]
    assert sorted(r["value"] for r in sent) == sorted(f"v{i}" for i in range(n))
    for p in {r["partition"] for r in sent}:  # idempotent, acks=all: each partition's offsets without a gap
        assert sorted(r["offset"] for r in sent if r["partition"] == p) == list(
            range(sum(1 for r in sent if r["partition"] == p)))
    ends = ends_of(sent)

    events = clients(tools, "group", node.bootstrap, topic, group, protocol, str(n))
    [described] = [e for e in events if e["event"] == "described"]
    members = [e for e in events if e["event"] == "member"]
    [seen] = [e for e in events if e["event"] == "seen"]
    assert (seen["records"], seen["failed"]) == (n, [])
    assert (described["state"], described["type"]) == ("Stable", kind)
    assert sorted(m["client"] for m in described["members"]) == ["consumer-a", "consumer-b"]
    assignments = [set(m["assignment"]) for m in members]
    assert all(assignments) and assignments[0].isdisjoint(assignments[1])
    assert assignments[0] | assignments[1] == {f"{topic}-{p}" for p in range(4)}
    assert sorted(map(sorted, assignments)) == sorted(sorted(m["assignment"]) for m in described["members"])
    committed = {}
    for m in members:
        committed.update(m["committed"])
    assert committed == {f"{topic}-{p}": ends.get(f"{topic}-{p}", 0) for p in range(4)}


def test_transactions_commit_and_abort_as_read_committed_sees_them(tools, node):
    topic = "java-transactions"
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", topic, "--partitions", "1")
    steps = clients(tools, "transactions", node.bootstrap, topic, "java-txn")
    assert [(s["event"], s["values"]) for s in steps] == [
        ("commit", "committed-0..4"), ("abort", "aborted-0..4"), ("commit", "committed-5..9")]

    def read(isolation: str, n: int) -> list[dict]:
        events = clients(tools, "consume", node.bootstrap, topic, f"java-{isolation}", "classic", isolation, str(n))
        assert events[-1]["event"] == "committed"
        return events

    committed = read("read_committed", 10)
    assert [r["value"] for r in committed[:-1]] == [f"committed-{i}" for i in range(10)]
    everything = read("read_uncommitted", 15)
    assert [r["value"] for r in everything[:-1]] == (
        [f"committed-{i}" for i in range(5)] + [f"aborted-{i}" for i in range(5)]
        + [f"committed-{i}" for i in range(5, 10)])
    # each transaction ends with its marker (an offset of its own): 5 records, marker, 5, marker, 5, marker
    assert [r["offset"] for r in everything[:-1]] == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16]
    assert committed[-1]["offsets"] == everything[-1]["offsets"] == {f"{topic}-0": 18}


def test_admin_client_calls(tools, node):
    group = "java-admin-group"
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", "java-admin-source",
             "--partitions", "1")
    clients(tools, "produce", node.bootstrap, "java-admin-source", "3")
    clients(tools, "consume", node.bootstrap, "java-admin-source", group, "classic", "read_uncommitted", "3")
    events = {e["event"]: e for e in clients(tools, "admin", node.bootstrap, "java-admin", group)}

    topic = events["describeTopics"]
    assert (topic["name"], topic["internal"], len(topic["topicId"])) == ("java-admin", False, 22)
    assert topic["partitions"] == [{"partition": p, "leader": 1, "replicas": [1], "isr": [1]} for p in range(3)]
    assert events["describeConfigs"]["configs"] == {
        "cleanup.policy": {"value": "delete", "source": "DEFAULT_CONFIG"},
        "retention.ms": {"value": "3600000", "source": "DYNAMIC_TOPIC_CONFIG"},
        "segment.bytes": {"value": "1073741824", "source": "DEFAULT_CONFIG"}}
    assert events["incrementalAlterConfigs"]["configs"] == {
        "cleanup.policy": {"value": "delete,compact", "source": "DYNAMIC_TOPIC_CONFIG"},
        "retention.ms": {"value": "7200000", "source": "DYNAMIC_TOPIC_CONFIG"},
        "segment.bytes": {"value": "1073741824", "source": "DEFAULT_CONFIG"}}
    # ten records at timestamps 1000000..1000009 in partition 0
    offsets = events["listOffsets"]
    assert (offsets["earliest"]["offset"], offsets["latest"]["offset"]) == (0, 10)
    assert offsets["maxTimestamp"] == {"offset": 9, "timestamp": 1000009}
    assert offsets["forTimestamp"] == {"offset": 4, "timestamp": 1000004}
    assert events["deleteRecords"] == {"event": "deleteRecords", "lowWatermark": 4, "earliest": {"offset": 4,
                                                                                                 "timestamp": -1}}
    listed = {g["groupId"]: g for g in events["listGroups"]["groups"]}
    assert listed[group] == {"groupId": group, "type": "Classic", "protocol": "consumer", "state": "Empty"}
    consumer_groups = {g["groupId"]: g for g in events["listConsumerGroups"]["groups"]}
    assert consumer_groups[group] == {"groupId": group, "type": "Classic", "state": "Empty"}
    assert set(consumer_groups) == {g for g, v in listed.items() if v["protocol"] == "consumer"}
    assert {k: events["describeConsumerGroups"][k] for k in ("groupId", "state", "type", "members", "coordinator")} \
        == {"groupId": group, "state": "Empty", "type": "Classic", "members": 0, "coordinator": 1}
    assert events["listConsumerGroupOffsets"]["offsets"] == {"java-admin-source-0": 3}
    assert events["describeCluster"] == {"event": "describeCluster", "clusterId": node.cluster.cluster_id,
                                         "controller": 1, "nodes": [1]}
    features = events["describeFeatures"]
    assert features["finalized"] == {"metadata.version": MAXIMUM.level, "group.version": 1, "transaction.version": 2,
                                     "eligible.leader.replicas.version": 1, "share.version": 2}
    assert features["supported"]["metadata.version"] == [7, MAXIMUM.level] and features["epoch"] > 0
