"""Share groups' tools (issue 43) run beside Kafka 4.4's own against one kraftwire node formatted with
``share.version=1``: ``kraftwire share-groups`` and ``kafka-share-groups.sh`` (``ShareGroupCommand``) print the same
lines for ``--list``, ``--describe`` (offsets with their lag, ``--state``, ``--members``), ``--reset-offsets``,
``--delete-offsets`` and ``--delete`` (mirroring ``ShareGroupCommandTest``'s describe, reset and delete cases);
``kraftwire console-share-consumer`` and Kafka's ``kafka-console-share-consumer.sh`` read the same topic in one share
group, ``--release`` bringing records back with their delivery counts raised."""

from __future__ import annotations

import pytest

from harness.kafka_tools import start_single_node
from harness.processes import kw

pytestmark = pytest.mark.interop

SHARE = ("share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
         "share.coordinator.state.topic.num.partitions=1\n")


@pytest.fixture(scope="module")
def share_node(tmp_path_factory):
    started = start_single_node(str(tmp_path_factory.mktemp("share-tools-node")), SHARE,
                                format_args=("--feature", "share.version=1"))
    try:
        yield started
    finally:
        started.cluster.close()


def prepare(tools, node, topic: str, group: str, records: int) -> None:
    """A topic of one partition with ``records`` records and a share group reading it from the earliest offset."""
    b = node.bootstrap
    tools.ok("kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "1")
    tools.described(b, topic)
    tools.ok("kafka-clients", "produce", b, topic, str(records))
    tools.ok("kafka-configs", "--bootstrap-server", b, "--alter", "--entity-type", "groups", "--entity-name", group,
             "--add-config", "share.auto.offset.reset=earliest")


def both(tools, node, *args: str) -> tuple[str, str]:
    """(kraftwire's standard output, Kafka's) of one share-groups command."""
    ours = kw("share-groups", "--bootstrap-server", node.bootstrap, *args, check=False)
    theirs = tools.run("kafka-share-groups", "--bootstrap-server", node.bootstrap, *args)
    assert ours.returncode == theirs.exit, (args, ours.stdout, ours.stderr, theirs.out, theirs.err)
    return ours.stdout, theirs.out


def twice(tools, node, restore: tuple, *args: str) -> tuple[str, str]:
    """(kraftwire's output, Kafka's) of a command that changes the group, Kafka's tool run after ``restore`` (a
    share-groups command, Kafka's) put the state back."""
    ours = kw("share-groups", "--bootstrap-server", node.bootstrap, *args, check=False)
    tools.ok("kafka-share-groups", "--bootstrap-server", node.bootstrap, *restore)
    theirs = tools.run("kafka-share-groups", "--bootstrap-server", node.bootstrap, *args)
    assert ours.returncode == theirs.exit, (args, ours.stdout, ours.stderr, theirs.out, theirs.err)
    return ours.stdout, theirs.out


def consume(tools, node, topic: str, group: str, n: int, *extra: str, ours: bool) -> list[str]:
    """The lines one console share consumer prints reading ``n`` records (offset and delivery count first)."""
    args = ("--bootstrap-server", node.bootstrap, "--topic", topic, "--group", group, "--max-messages", str(n),
            "--timeout-ms", "20000", "--formatter-property", "print.offset=true", "--formatter-property",
            "print.delivery=true", *extra)
    if ours:
        out = kw("console-share-consumer", *args, timeout=60).stdout
    else:
        out = tools.ok("kafka-console-share-consumer", *args, timeout=60).out
    return out.splitlines()


def test_share_groups_prints_what_kafkas_prints(tools, share_node):
    """ShareGroupCommandTest.testDescribeOffsetsOfExistingGroup / testDescribeStateOfExistingGroup /
    testDescribeMembersOfExistingGroup / testResetOffsets* / testDeleteShareGroupOffsets* / testDeleteShareGroups*,
    run as commands: the same output from both tools at each step."""
    node = share_node
    prepare(tools, node, "sq", "sg", 5)
    read = consume(tools, node, "sq", "sg", 5, ours=False)
    assert len(read) == 5, read
    tools.ok("kafka-configs", "--bootstrap-server", node.bootstrap, "--alter", "--entity-type", "groups",
             "--entity-name", "sg2", "--add-config", "share.auto.offset.reset=earliest")
    assert len(consume(tools, node, "sq", "sg2", 5, ours=False)) == 5  # a second group, for the deletions
    ours, theirs = both(tools, node, "--list")
    assert ours == theirs and "sg" in ours.split()
    for extra in ((), ("--verbose",), ("--state",), ("--state", "--verbose"), ("--members",),
                  ("--members", "--verbose")):
        ours, theirs = both(tools, node, "--describe", "--group", "sg", *extra)
        assert ours == theirs, extra
    ours, theirs = both(tools, node, "--describe", "--group", "sg")
    # partition 0, start offset 0 (the acknowledgements' write carries the start as it was, as Kafka's), lag 0
    assert ours.split()[-3:] == ["0", "0", "0"], ours
    ours, theirs = both(tools, node, "--reset-offsets", "--group", "sg", "--topic", "sq", "--to-earliest",
                        "--dry-run")
    assert ours == theirs
    ours, theirs = both(tools, node, "--reset-offsets", "--group", "sg", "--topic", "sq", "--to-offset", "2",
                        "--execute")
    assert ours == theirs
    ours, theirs = both(tools, node, "--describe", "--group", "sg", "--verbose")
    assert ours == theirs and ours.split()[-2:] == ["2", "3"], ours  # start offset 2, lag 3
    ours, theirs = both(tools, node, "--list", "--state", "empty")
    assert ours == theirs
    # the changing commands run on state made again between the two tools
    ours, theirs = twice(tools, node, ("--reset-offsets", "--group", "sg", "--topic", "sq", "--to-offset", "2",
                                       "--execute"),
                         "--delete-offsets", "--group", "sg", "--topic", "sq", "--topic", "nope")
    assert ours == theirs and "Successful" in ours
    ours, theirs = both(tools, node, "--describe", "--group", "sg")
    assert ours == theirs
    ours, theirs = both(tools, node, "--describe", "--group", "nope")
    assert ours == theirs and "GroupIdNotFoundException" in ours, ours
    ours = kw("share-groups", "--bootstrap-server", node.bootstrap, "--delete", "--group", "sg", "--group",
              "nope").stdout
    theirs = tools.run("kafka-share-groups", "--bootstrap-server", node.bootstrap, "--delete", "--group", "sg2",
                       "--group", "nope").out
    assert ours == theirs.replace("'sg2'", "'sg'"), (ours, theirs)
    ours, theirs = both(tools, node, "--list")
    assert ours == theirs and not {"sg", "sg2"} & set(ours.split())


def test_console_share_consumers_share_one_group(tools, share_node):
    """Both console share consumers in one group: kraftwire's releases the records (delivery count 1), Kafka's
    releases them again (2), kraftwire's accepts them (3); nothing is left to read then."""
    node = share_node
    prepare(tools, node, "cq", "cg", 3)
    first = consume(tools, node, "cq", "cg", 3, "--release", ours=True)
    second = consume(tools, node, "cq", "cg", 3, "--release", ours=False)
    third = consume(tools, node, "cq", "cg", 3, ours=True)
    assert [line.split("\t")[:2] for line in first] == [[f"Offset:{i}", "Delivery:1"] for i in range(3)]
    assert [line.split("\t")[:2] for line in second] == [[f"Offset:{i}", "Delivery:2"] for i in range(3)]
    assert [line.split("\t")[:2] for line in third] == [[f"Offset:{i}", "Delivery:3"] for i in range(3)]
    assert [line.split("\t")[2:] for line in first] == [line.split("\t")[2:] for line in second]
    ours, theirs = both(tools, node, "--describe", "--group", "cg")
    assert ours == theirs and ours.split()[-2:] == ["0", "0"], ours  # start 0 until the next write, lag 0
