"""``kraftwire reassign-partitions``' own rules, without a cluster: Kafka's rack-unaware placement
(AdminUtilsTest.testReplicaAssignment's expected assignment), the JSON it reads and writes, the checks Kafka's
parseExecuteAssignmentArgs makes, and the command-line checks of validateAndParseArgs. The tool against a cluster,
beside Kafka's own, is in ``tests/kafka_software/test_reassignment.py``."""

from __future__ import annotations

import json

import pytest

from kraftwire import cli
from kraftwire.tools import reassign_partitions as rp


class FixedStart:
    """AdminUtils' fixedStartIndex 0: the random start and shift both 0."""

    def randrange(self, n: int) -> int:
        return 0


def test_rack_unaware_assignment_as_kafkas_admin_utils():
    assert rp.assign_rack_unaware(10, 3, [4, 3, 2, 1, 0], FixedStart()) == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    with pytest.raises(rp.Failed, match=r"Replication factor: 3 larger than available brokers: 2\."):
        rp.assign_rack_unaware(1, 3, [1, 2], FixedStart())


def test_reassignment_json_is_kafkas_compact_form_sorted_by_partition():
    assert rp.reassignment_json({("b", 0): [2], ("a", 1): [1, 2], ("a", 0): [3, 1]}) == (
        '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[3,1],"log_dirs":["any","any"]},'
        '{"topic":"a","partition":1,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"b","partition":0,"replicas":[2],"log_dirs":["any"]}]}')


@pytest.mark.parametrize("partitions, message", [
    ([], "Partition reassignment list cannot be empty"),
    ([{"topic": "t", "partition": 0, "replicas": []}], "Partition replica list cannot be empty"),
    ([{"topic": "t", "partition": 0, "replicas": [1]}, {"topic": "t", "partition": 0, "replicas": [2]}],
     "Partition reassignment contains duplicate topic partitions: t-0"),
    ([{"topic": "t", "partition": 0, "replicas": [1, 2, 1]}],
     "Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1"),
    ([{"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any"]}],
     "Size of replicas list [1, 2] is different from size of log dirs list [any] for partition t-0"),
])
def test_execute_refuses_what_kafka_refuses(partitions, message):
    with pytest.raises(rp.Failed) as info:
        rp._checked_targets(json.dumps({"version": 1, "partitions": partitions}))
    assert str(info.value) == message


def test_log_dir_moves_of_the_json_file():
    targets = rp.parse_reassignment(json.dumps({"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "/data/b"]},
        {"topic": "u", "partition": 3, "replicas": [2], "log_dirs": ["/data/a"]}]}))
    assert rp.log_dir_moves(targets) == {("t", 0, 2): "/data/b", ("u", 3, 2): "/data/a"}
    assert rp._checked_targets(json.dumps({"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["/data"]}]})) == {("t", 0): [1]}


def test_replica_move_states_as_kafkas_tool_prints_them():
    """Kafka's ReassignPartitionsUnitTest.testReplicaMoveStatesToString, from the brokers' log dirs."""
    targets = {("bar", 0, 0): "/tmp/kafka-logs0", ("foo", 0, 0): "/tmp/kafka-logs1",
               ("foo", 1, 0): "/tmp/kafka-logs1", ("quux", 0, 0): "/tmp/kafka-logs1",
               ("quux", 1, 1): "/tmp/kafka-logs1", ("quux", 2, 1): "/tmp/kafka-logs1"}
    found = {("bar", 0, 0): ("/tmp/kafka-logs0", None), ("foo", 0, 0): ("/tmp/kafka-logs0", "/tmp/kafka-logs1"),
             ("foo", 1, 0): ("/tmp/kafka-logs0", None), ("quux", 1, 1): ("/tmp/kafka-logs0", "/tmp/kafka-logs2"),
             ("quux", 2, 1): (None, None)}
    text, ongoing = rp.move_states_text(targets, found)
    assert text == "\n".join([
        "Reassignment of replica bar-0-0 completed successfully.",
        "Reassignment of replica foo-0-0 is still in progress.",
        "Partition foo-1 on broker 0 is not being moved from log dir /tmp/kafka-logs0 to /tmp/kafka-logs1.",
        "Partition quux-0 cannot be found in any live log directory on broker 0.",
        "Partition quux-1 on broker 1 is being moved to log dir /tmp/kafka-logs2 instead of /tmp/kafka-logs1.",
        "Partition quux-2 is not found in any live log dir on broker 1. "
        "There is likely an offline log directory on the broker."])
    assert ongoing
    assert rp.move_states_text({("bar", 0, 0): "/a"}, {("bar", 0, 0): ("/a", None)}) == (
        "Reassignment of replica bar-0-0 completed successfully.", False)


def test_json_versions_and_topics_file():
    with pytest.raises(rp.Failed, match="Not supported version field value 2"):
        rp.parse_reassignment('{"version": 2, "partitions": []}')
    with pytest.raises(rp.Failed, match="The input string is not a valid JSON"):
        rp.parse_topics("{nope")
    assert rp.parse_topics('{"version": 1, "topics": [{"topic": "a"}, {"topic": "b"}]}') == ["a", "b"]
    (target,) = rp.parse_reassignment('{"partitions": [{"topic": "a", "partition": 2, "replicas": [3]}]}')
    assert (target.name, target.replicas, target.log_dirs) == ("a-2", [3], ["any"])


@pytest.mark.parametrize("args, message", [
    (["--bootstrap-server", "x:1"], "Command must include exactly one action: --generate, --execute, --verify, "
                                    "--cancel, --list"),
    (["--bootstrap-server", "x:1", "--list", "--verify"], "Command must include exactly one action"),
    (["--list"], "Please specify either --bootstrap-server or --bootstrap-controller"),
    (["--bootstrap-server", "x:1", "--execute"], 'Missing required argument "[reassignment-json-file]"'),
    (["--bootstrap-server", "x:1", "--generate", "--topics-to-move-json-file", "f"],
     'Missing required argument "[broker-list]"'),
    (["--bootstrap-server", "x:1", "--verify", "--reassignment-json-file", "f", "--additional"],
     'Option "[additional]" can\'t be used with action "[verify]"'),
    (["--bootstrap-server", "x:1", "--list", "--throttle", "5"], 'Option "[throttle]" can\'t be used with action'),
])
def test_command_line_checks(args, message, capsys):
    assert cli.main(["reassign-partitions", *args]) == 1
    assert message in capsys.readouterr().err
