"""``kraftwire share-groups`` and ``kraftwire console-share-consumer`` without a cluster: Kafka's usage refusals
(``ShareGroupCommandOptions.checkArgs`` / ``ConsoleShareConsumerOptions``, mirrored from ``ShareGroupCommandTest``'s
and ``ConsoleShareConsumerOptionsTest``'s argument cases), the share consumer's acknowledgement batches and the
records of the acquired ranges it delivers."""

from __future__ import annotations

import argparse
import uuid

import pytest

from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.tools import console_share_consumer as csc
from kraftwire.tools import share_groups as sgc
from kraftwire.tools.consumer_groups import UsageError
from kraftwire.tools.share_consumer import ACCEPT, REJECT, RELEASE, Acks, Delivery, deliveries, member_id


def parse(module, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return parser.parse_args(["--bootstrap-server", "localhost:9092", *argv])


@pytest.mark.parametrize("argv,message", [
    ((), "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets."),
    (("--list", "--delete", "--all-groups"),
     "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets."),
    (("--describe",), "Option [describe] takes one of these options: [all-groups], [group]"),
    (("--describe", "--group", "g", "--members", "--state"),
     "Option [describe] takes at most one of these options: [members], [offsets], [state]"),
    (("--describe", "--group", "g", "--state", "Stable"), "Option [describe] does not take a value for [state]"),
    (("--delete",), "Option [delete] takes the options [group] or [all-groups]."),
    (("--delete", "--group", "g", "--all-groups"), "Option [delete] takes either [group] or [all-groups], not both."),
    (("--delete", "--group", "g", "--topic", "t"), "Option [delete] does not take the option: [topic]"),
    (("--delete-offsets", "--group", "g"), "Option [delete-offsets] takes the following options: [group], [topic]"),
    (("--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--dry-run", "--execute"),
     "Option [reset-offsets] only accepts one of [execute] and [dry-run]"),
    (("--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest"),
     "Option [reset-offsets] takes the option: [execute] or [dry-run]"),
    (("--reset-offsets", "--topic", "t", "--to-earliest", "--dry-run"),
     "Option [reset-offsets] takes the option: [group]"),
    (("--reset-offsets", "--group", "g", "--to-earliest", "--dry-run"),
     "Option [reset-offsets] takes one of these options: [all-topics], [topic]"),
    (("--reset-offsets", "--group", "g", "--topic", "t", "--dry-run"),
     "Option [reset-offsets] takes one of these options: [to-datetime], [to-earliest], [to-latest], [to-offset]"),
    (("--reset-offsets", "--group", "g", "--topic", "t", "--dry-run", "--to-earliest", "--to-latest"),
     "Option [to-earliest] can't be used with option [to-latest]"),
    (("--list", "--group", "g"), "Option [group] can't be used with option [list]"),
    (("--describe", "--group", "g", "--topic", "t"), "Option [topic] can't be used with option [describe]"),
])
def test_share_groups_usage_refusals(argv, message):
    """ShareGroupCommandTest's invalid-argument cases (testDescribeShareGroupsInvalidVerboseOption, the
    --delete/--reset-offsets ones): the refusal in Kafka's words, before any connection."""
    with pytest.raises(UsageError) as refused:
        sgc.check_args(parse(sgc, *argv))
    assert str(refused.value) == message


def test_share_groups_accepted_arguments_and_states():
    """Every action with its options is accepted; ``--state`` lists parse case-insensitively into Kafka's share
    group states, and a state of another group type is refused with the valid list (groupStatesFromString)."""
    for argv in (("--list",), ("--list", "--state"), ("--describe", "--all-groups", "--members", "--verbose"),
                 ("--describe", "--group", "g", "--state"), ("--delete", "--group", "g"),
                 ("--delete-offsets", "--group", "g", "--topic", "t"),
                 ("--reset-offsets", "--group", "g", "--all-topics", "--to-offset", "3", "--execute")):
        sgc.check_args(parse(sgc, *argv))
    assert sgc.parse_states("stable, EMPTY") == {"Stable", "Empty"}
    with pytest.raises(UsageError) as refused:
        sgc.parse_states("Stable,PreparingRebalance")
    assert str(refused.value) == ("Invalid state list 'Stable,PreparingRebalance'. Valid states are: Unknown, Stable, "
                                  "Dead, Empty")


@pytest.mark.parametrize("argv,message", [
    ((), "--topic is a required argument"),
    (("--topic", "t", "--reject", "--release"), "At most one of --reject and --release may be specified."),
    (("--topic", "t", "--property", "a=b", "--formatter-property", "c=d"),
     "Options --property and --formatter-property cannot be specified together."),
    (("--topic", "t", "--consumer-property", "a=b", "--command-property", "c=d"),
     "Options --consumer-property and --command-property cannot be specified together."),
])
def test_console_share_consumer_refusals(argv, message):
    """ConsoleShareConsumerOptionsTest: the refusals in Kafka's words; the default group."""
    assert csc.check_args(parse(csc, *argv)) == message
    assert parse(csc, "--topic", "t").group == "console-share-consumer"


def test_acknowledgement_batches_merge_consecutive_offsets_of_one_type():
    acks = Acks()
    for offset, kind in ((0, ACCEPT), (1, ACCEPT), (2, RELEASE), (3, ACCEPT), (5, ACCEPT), (6, REJECT)):
        acks.add(offset, kind)
    assert acks.take() == [(0, 1, ACCEPT), (2, 2, RELEASE), (3, 3, ACCEPT), (5, 5, ACCEPT), (6, 6, REJECT)]
    assert acks.take() == []


def test_deliveries_are_the_acquired_records_with_their_counts():
    """A fetched batch of 0-4 with 1-2 acquired (delivery count 2) and 4 (count 1): only those are delivered."""
    b = RecordBatchBuilder(base_offset=0)
    for i in range(5):
        b.append(b"k%d" % i, b"v%d" % i, timestamp=1000 + i)
    P = w.ShareFetchResponse.PartitionData
    data = P(partition_index=3, acquired_records=[w.ShareFetchResponse.AcquiredRecords(
        first_offset=1, last_offset=2, delivery_count=2), w.ShareFetchResponse.AcquiredRecords(
        first_offset=4, last_offset=4, delivery_count=1)])
    tid = uuid.uuid4()
    got = deliveries("t", tid, 3, data, b.build())
    assert [(d.offset, d.value, d.delivery_count, d.partition, d.topic_id) for d in got] == [
        (1, b"v1", 2, 3, tid), (2, b"v2", 2, 3, tid), (4, b"v4", 1, 3, tid)]
    assert deliveries("t", tid, 3, P(partition_index=3, acquired_records=[]), b.build()) == []
    assert 0 < len(member_id()) <= 36


def test_share_formatter_prints_the_delivery_count():
    d = Delivery("t", uuid.uuid4(), 0, 7, 1000, 0, b"k", b"v", [], 3)
    plain = csc.ShareFormatter({})
    assert plain.format_delivery(d) == "v\n"
    full = csc.ShareFormatter({"print.offset": "true", "print.delivery": "true", "print.key": "true"})
    assert full.format_delivery(d) == "Offset:7\tDelivery:3\tk\tv\n"
