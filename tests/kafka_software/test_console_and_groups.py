"""Kafka 4.4's client tools against a kraftwire node, their output checked against what was written: the console
producer and consumer, kafka-consumer-groups (describe, state, reset, delete), the producer and consumer
performance tools, and the verifiable producer and consumer (their own JSON account of what they sent, consumed and
committed)."""

from __future__ import annotations

import pytest

from harness import roles

pytestmark = pytest.mark.interop


def aligned(text: str) -> list[dict[str, str]]:
    """A column-aligned table (kafka-consumer-groups): rows as {header: cell}, cells cut at the headers' columns
    (a cell may hold spaces, as the coordinator's ``host:port  (id)`` does, and so may a header: ``COORDINATOR
    (ID)``)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [i for i, ch in enumerate(header)
              if ch not in " (" and (i == 0 or header[i - 1] == " ")]
    names = [header[a:b].strip() for a, b in zip(starts, starts[1:] + [len(header)])]
    rows = []
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line)])]
        rows.append(dict(zip(names, cells)))
    return rows


def create(tools, node, topic: str, partitions: int) -> None:
    tools.ok("kafka-topics", "--bootstrap-server", node.bootstrap, "--create", "--topic", topic,
             "--partitions", str(partitions))


def test_console_producer_and_consumer_round_trip(tools, node):
    create(tools, node, "console-topic", 3)
    lines = [f"key{i % 5}:value-{i}" for i in range(30)]
    produced = tools.ok("kafka-console-producer", "--bootstrap-server", node.bootstrap, "--topic", "console-topic",
                        "--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
                        stdin="\n".join(lines) + "\n")
    assert produced.out == ""
    consumed = tools.ok("kafka-console-consumer", "--bootstrap-server", node.bootstrap, "--topic", "console-topic",
                        "--from-beginning", "--max-messages", "30", "--formatter-property", "print.key=true",
                        "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true")
    assert consumed.err.splitlines()[-1] == "Processed a total of 30 messages"
    records = [line.split("\t") for line in consumed.lines()]
    by_partition: dict[str, list[tuple[int, str, str]]] = {}
    for part, offset, key, value in records:
        by_partition.setdefault(part.removeprefix("Partition:"), []).append(
            (int(offset.removeprefix("Offset:")), key, value))
    # every line once, each partition from offset 0 without gaps and in the order written, a key in one partition
    assert sorted(f"{k}:{v}" for _, k, v in sum(by_partition.values(), [])) == sorted(lines)
    for rows in by_partition.values():
        assert [o for o, _, _ in rows] == list(range(len(rows)))
        assert [int(v.split("-")[1]) for _, _, v in rows] == sorted(int(v.split("-")[1]) for _, _, v in rows)
    homes = {}
    for part, rows in by_partition.items():
        for _, key, _ in rows:
            assert homes.setdefault(key, part) == part


def test_consumer_groups_describe_reset_and_delete(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    create(tools, node, "group-topic", 2)
    tools.ok("kafka-console-producer", *b, "--topic", "group-topic", stdin="".join(f"m{i}\n" for i in range(10)))

    def consume(*extra) -> list[str]:
        return tools.ok("kafka-console-consumer", *b, "--topic", "group-topic", "--group", "tools-group",
                        "--max-messages", "10", *extra).lines()

    assert sorted(consume("--from-beginning")) == sorted(f"m{i}" for i in range(10))
    assert "tools-group" in tools.ok("kafka-consumer-groups", *b, "--list").lines()

    def describe(*extra):
        return tools.ok("kafka-consumer-groups", *b, "--describe", "--group", "tools-group", *extra)

    described = describe()
    assert described.err.strip() == "Consumer group 'tools-group' has no active members."
    rows = aligned(described.out)
    ends = {r["PARTITION"]: int(r["LOG-END-OFFSET"]) for r in rows}
    assert sorted(ends) == ["0", "1"] and sum(ends.values()) == 10
    assert [(r["GROUP"], r["TOPIC"], r["CURRENT-OFFSET"], r["LAG"], r["CONSUMER-ID"]) for r in rows] == [
        ("tools-group", "group-topic", r["LOG-END-OFFSET"], "0", "-") for r in rows]
    [state] = aligned(describe("--state").out)
    assert (state["STATE"], state["#MEMBERS"], state["COORDINATOR (ID)"]) == ("Empty", "0", f"{node.bootstrap}  (1)")

    reset = tools.ok("kafka-consumer-groups", *b, "--reset-offsets", "--to-earliest", "--group", "tools-group",
                     "--topic", "group-topic", "--execute")
    assert sorted((r["TOPIC"], r["PARTITION"], r["NEW-OFFSET"]) for r in aligned(reset.out)) == [
        ("group-topic", "0", "0"), ("group-topic", "1", "0")]
    assert {r["PARTITION"]: (r["CURRENT-OFFSET"], r["LAG"]) for r in aligned(describe().out)} == {
        p: ("0", str(end)) for p, end in ends.items()}
    assert sorted(consume()) == sorted(f"m{i}" for i in range(10))  # the group reads from where it was reset to

    fuller = max(ends, key=ends.get)  # keyless lines: the sticky partitioner may have filled one partition only
    dry = tools.ok("kafka-consumer-groups", *b, "--reset-offsets", "--to-offset", "1", "--group", "tools-group",
                   "--topic", f"group-topic:{fuller}", "--dry-run")
    assert [(r["PARTITION"], r["NEW-OFFSET"]) for r in aligned(dry.out)] == [(fuller, "1")]
    assert {r["PARTITION"]: r["LAG"] for r in aligned(describe().out)} == {"0": "0", "1": "0"}  # nothing moved

    deleted = tools.ok("kafka-consumer-groups", *b, "--delete", "--group", "tools-group")
    assert deleted.out.strip() == "Deletion of requested consumer groups ('tools-group') was successful."
    assert "tools-group" not in tools.ok("kafka-consumer-groups", *b, "--list").lines()
    gone = tools.run("kafka-consumer-groups", *b, "--describe", "--group", "tools-group")
    # DescribeGroups v6 (KIP-1043): a deleted group is GROUP_ID_NOT_FOUND, which the tool prints as Kafka 4.4's does
    assert "GroupIdNotFoundException: Group tools-group not found." in gone.out + gone.err, (gone.out, gone.err)


def test_producer_and_consumer_performance_tools(tools, node):
    create(tools, node, "perf-topic", 2)
    produced = tools.ok("kafka-producer-perf-test", "--topic", "perf-topic", "--num-records", "2000",
                        "--record-size", "100", "--throughput", "-1", "--command-property",
                        f"bootstrap.servers={node.bootstrap}", "acks=all")
    assert produced.lines()[-1].startswith("2000 records sent, ")
    offsets = tools.ok("kafka-get-offsets", "--bootstrap-server", node.bootstrap, "--topic", "perf-topic").lines()
    assert sum(int(line.rsplit(":", 1)[1]) for line in offsets) == 2000

    consumed = tools.ok("kafka-consumer-perf-test", "--bootstrap-server", node.bootstrap, "--topic", "perf-topic",
                        "--num-records", "2000", "--timeout", "30000")
    header, row = consumed.lines()[-2:]
    stats = dict(zip((h.strip() for h in header.split(",")), (v.strip() for v in row.split(","))))
    assert stats["data.consumed.in.nMsg"] == "2000"
    assert float(stats["data.consumed.in.MB"]) == pytest.approx(2000 * 100 / 1024 / 1024, abs=0.0001)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_verifiable_producer_and_consumer(tools, node, protocol):
    topic, n = f"verifiable-{protocol}", 50
    create(tools, node, topic, 2)
    events = tools.ok("kafka-verifiable-producer", "--bootstrap-server", node.bootstrap, "--topic", topic,
                      "--max-messages", str(n)).json_lines()
    names = [e["name"] for e in events]
    assert names[0] == "startup_complete" and names[-2:] == ["shutdown_complete", "tool_data"]
    sent = [e for e in events if e["name"] == "producer_send_success"]
    assert sorted(int(e["value"]) for e in sent) == list(range(n)) and names.count("producer_send_error") == 0
    assert (events[-1]["sent"], events[-1]["acked"]) == (n, n)
    ends = {}  # the partitions written to (keyless records: the sticky partitioner may fill one only)
    for p in {e["partition"] for e in sent}:
        offsets = sorted(e["offset"] for e in sent if e["partition"] == p)
        assert offsets == list(range(len(offsets)))
        ends[p] = len(offsets)

    events = tools.ok("kafka-verifiable-consumer", "--bootstrap-server", node.bootstrap, "--topic", topic,
                      "--group-id", f"verifiable-{protocol}", "--group-protocol", protocol, "--max-messages", str(n),
                      "--reset-policy", "earliest").json_lines()
    names = [e["name"] for e in events]
    assert names[0] == "startup_complete" and "shutdown_complete" in names
    assigned = {(p["topic"], p["partition"]) for e in events if e["name"] == "partitions_assigned"
                for p in e["partitions"]}
    assert assigned == {(topic, 0), (topic, 1)}
    consumed: dict[int, list[tuple[int, int]]] = {}
    for e in events:
        if e["name"] == "records_consumed":
            for p in e["partitions"]:
                consumed.setdefault(p["partition"], []).append((p["minOffset"], p["maxOffset"]))
    assert sum(e["count"] for e in events if e["name"] == "records_consumed") == n
    assert {p: (min(a for a, _ in spans), max(b for _, b in spans)) for p, spans in consumed.items()} == {
        p: (0, end - 1) for p, end in ends.items()}
    commits = [e for e in events if e["name"] == "offsets_committed"]
    assert commits and all(c["success"] for c in commits)
    last = {}
    for c in commits:
        last.update({o["partition"]: o["offset"] for o in c["offsets"]})
    assert last == ends
    roles.wait_until(lambda: {r["PARTITION"]: r["CURRENT-OFFSET"] for r in aligned(tools.ok(
        "kafka-consumer-groups", "--bootstrap-server", node.bootstrap, "--describe", "--group",
        f"verifiable-{protocol}").out) if r["CURRENT-OFFSET"] != "-"} == {str(p): str(e) for p, e in ends.items()},
        "the commits described")
