"""Bad input (issue #37) against a real kraftwire node (a ``server-start`` process on real sockets): the answers
Kafka 4.4 gives (``tests/kafka/test_bad_input_oracle.py`` compares the same scenarios with Kafka itself), nothing
kept from a refused request, one log line for each refusal the node logs, never a traceback, and the node keeps
serving. The scenarios live in ``harness.bad_input``."""

from __future__ import annotations

import pytest

from harness import bad_input, processes, roles
from harness.bad_input import CLOSED, MAX

from kraftwire import error_codes as ec

PROPS = (bad_input.PROPS + "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=3\n"
         "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n")


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    with processes.CombinedNode(tmp_path_factory.mktemp("bad-input"), PROPS) as n:
        roles.wait_until(lambda: roles.broker_ids(n.port) == [1], "the node online")
        yield n
        assert "Traceback" not in n.stderr(), n.stderr()[-5000:]


def _lines(node, text: str) -> int:
    return sum(text in line for line in node.stderr().splitlines())


def test_produce_data_that_is_not_one_magic_2_batch_appends_nothing(node):
    """Item 6: two batches in one partition's data (or none, or magic 1, or zstd below v7) is INVALID_RECORD (or
    UNSUPPORTED_COMPRESSION_TYPE) without a message for that partition, which stays as it was; a first batch the
    record iterator cannot read fails the whole request, with Kafka's text."""
    out = bad_input.produce_shapes(node.port)
    ok = (0, ec.NONE, None)
    for case, code in (("two batches v3", ec.INVALID_RECORD), ("two batches v9", ec.INVALID_RECORD),
                       ("two batches v11", ec.INVALID_RECORD), ("no batch", ec.INVALID_RECORD),
                       ("magic 1", ec.INVALID_RECORD), ("zstd v6", ec.UNSUPPORTED_COMPRESSION_TYPE),
                       ("zstd v7", ec.NONE), ("a second batch too small", ec.CORRUPT_MESSAGE),
                       ("a second batch of magic 7", ec.CORRUPT_MESSAGE)):
        assert out[case] == [ok, (1, code, None)], case
    for case, text in (("a first batch of magic 5", "Invalid magic found in record: 5"),
                       ("a first batch too small", "Record size 5 is less than the minimum record overhead (14)")):
        assert out[case] == [(0, ec.CORRUPT_MESSAGE, text), (1, ec.CORRUPT_MESSAGE, text)], case
    assert out["acks=0, a first batch of magic 5"] == CLOSED  # Kafka closes when no answer can carry the error
    # partition 0: the nine requests not refused as a whole; partition 1: only the zstd batch at v7
    assert out["end offsets"] == [9, 1]
    assert _lines(node, "an acks=0 Produce failed: Invalid magic found in record: 5") == 1


def test_strings_over_32767_bytes_close_the_connection_and_leave_nothing(node):
    """Items 7 and 9: a 40-65 KB group id (OffsetCommit v8) or transactional id (InitProducerId), and an array
    counting more items than bytes remain, are refused at decode: the connection is closed with one log line naming
    the field, no group is kept, and ListGroups answers at every version afterwards. A classic length below -1 is
    no error: Kafka's readers take it as null."""
    out = bad_input.oversized_strings(node.port)
    assert out.pop("ListGroups") == [(ec.NONE, [(7, "w")])] * 6  # only the warm-up commit's group
    for n in (-2, -32768):  # any other negative length is null, as Kafka reads it: an idempotent producer's id
        assert out.pop(f"InitProducerId v1, a transactional id of length {n}") == (ec.NONE, True)
    assert out == {case: CLOSED for case in out} and len(out) == 9
    assert _lines(node, "OffsetCommitRequest.group_id: invalid length 40000: a string holds at most 32767 bytes") == 1
    assert _lines(node, "InitProducerIdRequest.transactional_id: invalid length 40000") == 2  # v2 and v4
    assert _lines(node, "MetadataRequest.topics: length 100000 runs past the end") == 1
    assert bad_input.alive(node.port)


def test_ids_of_32767_bytes_are_kept_and_written_back(node):
    """The outgoing limit holds for the longest ids a request can carry: a group committed with a 32,767-byte id is
    listed and described at every version, and such a transactional id gets a producer id."""
    out = bad_input.max_size_ids(node.port)
    assert (out["OffsetCommit v8"], out["OffsetCommit v7"]) == (ec.NONE, ec.NONE)
    assert all(code == ec.NONE and (MAX, "g") in groups for code, groups in out["ListGroups"])
    assert out["DescribeGroups"] == [[(MAX, ec.NONE, "Empty")]] * 6
    assert (out["InitProducerId v0"], out["InitProducerId v4"]) == (ec.NONE, ec.NONE)


def test_an_answer_that_cannot_be_written_is_kafkas_error_answer(node):
    """An error message quoting a 32,767-byte name, or a member id made of a 32,767-byte client id and a UUID, does
    not fit its answer: the request gets UNKNOWN_SERVER_ERROR in each item (or at the top) and no message, as Kafka
    answers, with one log line each; the node keeps serving."""
    before = _lines(node, "answering UNKNOWN_SERVER_ERROR")
    out = bad_input.unwritable_answers(node.port)
    refused = (ec.UNKNOWN_SERVER_ERROR, None)
    assert out["CreateTopics v4, a long name"] == out["CreateTopics v7, a long name"] == [
        ("fine", *refused), ("a" * 8, *refused)]
    assert out["CreateTopics v7, a long config name"] == [("t2", *refused)]
    for case in ("IncrementalAlterConfigs, a long config name", "IncrementalAlterConfigs, a long value",
                 "AlterConfigs v2, a long config name"):
        assert out[case] == [("configur", *refused)], case
    for case in ("JoinGroup v3, a long client id", "JoinGroup v5, a long client id", "JoinGroup v7, a long client id",
                 "JoinGroup v7, a long group instance id"):
        assert out[case] == (ec.UNKNOWN_SERVER_ERROR, ""), case
    for v in (0, 5):  # the group holding the long member cannot be described, nor can anything asked beside it
        assert out[f"DescribeGroups v{v}"] == [("joined", ec.UNKNOWN_SERVER_ERROR, "", 0),
                                               ("other", ec.UNKNOWN_SERVER_ERROR, "", 0)]
    assert out["the node still answers"]
    assert _lines(node, "answering UNKNOWN_SERVER_ERROR") - before == 12
