"""The shape of a consumer's Fetch answer around the reads (``kraftwire.replica.fetch_answer``), as the
conformance run against Kafka 4.4 found it."""

from __future__ import annotations

import uuid

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.replica.fetch_answer import (READ, REFUSED, by_topic, error_answer, fetching_replica, hinted_leaders,
                                            in_answer_order, refused, request_error)

F = w.FetchRequest
TOPIC_ID = uuid.UUID(int=7)


def _request(*, epoch: int = -1, isolation: int = 0) -> F:
    return F(session_id=0, session_epoch=epoch, isolation_level=isolation, topics=[F.FetchTopic(
        topic="a", topic_id=TOPIC_ID, partitions=[F.FetchPartition(partition=0), F.FetchPartition(partition=1)])])


def test_a_session_error_is_answered_without_partitions_or_session():
    for error in (ec.FETCH_SESSION_ID_NOT_FOUND, ec.INVALID_FETCH_SESSION_EPOCH, ec.FETCH_SESSION_TOPIC_ID_ERROR):
        for version in (7, 12, 13):
            answer = error_answer(F(session_id=9, session_epoch=3, isolation_level=0, topics=[]), version, error)
            assert (answer.error_code, answer.session_id, answer.responses) == (error, 0, [])


def test_an_unknown_isolation_level_refuses_the_request_as_kafkas_exception_does():
    assert [request_error(_request(isolation=i), 12) for i in (0, 1, 2)] == [0, 0, ec.UNKNOWN_SERVER_ERROR]
    old = error_answer(_request(isolation=3), 12, ec.UNKNOWN_SERVER_ERROR)
    assert old.error_code == ec.UNKNOWN_SERVER_ERROR
    assert [(p.partition_index, p.error_code, p.high_watermark, p.aborted_transactions)
            for p in old.responses[0].partitions] == [(0, -1, -1, []), (1, -1, -1, [])]
    new = error_answer(_request(isolation=3), 13, ec.UNKNOWN_SERVER_ERROR)
    assert (new.error_code, new.responses) == (ec.UNKNOWN_SERVER_ERROR, [])


def test_partitions_read_come_before_those_refused():
    a0, a5, b0 = refused(0, 0), refused(5, ec.UNKNOWN_TOPIC_OR_PARTITION), refused(0, ec.UNKNOWN_TOPIC_OR_PARTITION)
    assert a5.aborted_transactions == [] and a5.log_start_offset == -1
    pairs = in_answer_order([(REFUSED, ("b", None), b0), (REFUSED, ("a", None), a5), (READ, ("a", None), a0)])
    assert pairs == [(("a", None), a0), (("b", None), b0), (("a", None), a5)]
    assert by_topic(pairs, lambda k: k) == [(("a", None), [a0, a5]), (("b", None), [b0])]


def test_the_leaders_a_refused_partition_points_to_go_along_as_endpoints():
    """KIP-951: only the
    partitions refused as not led here (or with a fenced epoch) name a leader, and only a known one counts."""
    R = w.FetchResponse

    def part(index, error, leader):
        return R.PartitionData(partition_index=index, error_code=error,
                               current_leader=R.LeaderIdAndEpoch(leader_id=leader, leader_epoch=0))

    answer = R(responses=[R.FetchableTopicResponse(topic="a", partitions=[
        part(0, ec.NOT_LEADER_OR_FOLLOWER, 1), part(1, ec.FENCED_LEADER_EPOCH, 3),
        part(2, ec.NOT_LEADER_OR_FOLLOWER, -1), part(3, ec.OFFSET_OUT_OF_RANGE, 2), part(4, 0, 4)])])
    assert hinted_leaders(answer) == {1, 3}


def test_the_fetcher_is_named_in_the_replica_state_from_v15():
    body = F(replica_id=-1, replica_state=F.ReplicaState(replica_id=2, replica_epoch=9))
    assert fetching_replica(body, 15) == (2, 9)
    assert fetching_replica(body, 14) == (-1, -1)


def test_only_the_debugging_consumer_reads_any_replica():
    """Replica id -2 (FetchRequest.DEBUGGING_CONSUMER_ID) reads followers up to the log end; a consumer (-1) and a
    follower broker (an id >= 0) do not."""
    from kraftwire.replica.fetch_answer import reads_any_replica

    assert [reads_any_replica(r) for r in (-2, -1, 0, 3)] == [True, False, False, False]
