"""Fetch at every version both serve, as a consumer: the records of a partition (compared batch by batch), from the
middle of a batch and at the end, offsets out of range, unknown topics (by name, and by id from v13), unknown
partitions, the size limits (partition_max_bytes, max_bytes, a batch cut short), read_committed, leader epochs, fetch
sessions, a fetch naming a replica that is not one, and read_committed over an open and an aborted transaction. The
cases whose answer does not change with the version run at the key versions only (every_and_key_versions)."""

from __future__ import annotations

import dataclasses
import uuid

from conformance.data_steps import (A, PRODUCE_VERSION, add_partitions, end_txn, every_and_key_versions, fetch,
                                    fetch_topic, idempotent, key_versions, produce, records, settled, transactional,
                                    written)
from conformance.runner import Learned, Step, each_version, no_error
from conformance.steps import created, metadata

from kraftwire.protocol import messages as w

F = w.FetchRequest
#: a topic id neither node knows
STRANGER = uuid.UUID("6d1f7a3e-0b5c-4e8a-9c21-5f0e8b7a4d33")


def _filled(*more):
    """Topic A with two partitions: three records in partition 0 (one batch) and two in 1; then ``more``."""
    def make(v):
        steps = [*created(A, partitions=2), *written(A, (0, records(3)), (1, records(2)))]
        for item in more:
            got = item(v)
            if got is None:
                return None
            steps += got if isinstance(got, list) else [got]
        return steps
    return make


def _from(*partitions, **options):
    """A Fetch of topic A's ``partitions`` — (partition, offset[, partition_max_bytes]) — at the version."""
    return lambda v: fetch(v, fetch_topic(v, A, *partitions), **options)


def _since(version: int, make):
    return lambda v: make(v) if v >= version else None


def _unknown_topic(v):
    if v < 13:
        return [fetch(v, fetch_topic(v, "{ns}.missing", (0, 0)))]
    return [fetch(v, F.FetchTopic(topic_id=STRANGER, partitions=[F.FetchPartition(partition=0, fetch_offset=0,
                                                                                   partition_max_bytes=1 << 20)]))]


def _as_replica(v):
    """A fetch naming broker 2, which holds no replica (a follower's fetch from a node that is none)."""
    return fetch(v, fetch_topic(v, A, (0, 0)), replica_id=2)


def _session_request(v, session_id, epoch):
    return fetch(v, fetch_topic(v, A, (0, 0)), session_id=session_id, session_epoch=epoch)


def _session_switch(v):
    """A session created at ``v``, then an incremental request at the other side of v13 (names against ids)."""
    other = 13 if v < 13 else 12
    return [_session_request(v, 0, 0), _session_request(other, Learned("session_id", default=0), 1)]


def _recreated_under_session(v):
    """A session by topic id (v13+); topic A deleted and created again; the session's next request reads the
    partition it still names by the old id and the old name: INCONSISTENT_TOPIC_ID."""
    if v < 13:
        return None
    gone = metadata(A, until=lambda r: all(t.error_code == 3 for t in r.topics))
    # the broker hosts the new partition a moment after Metadata lists it led: wait for a sessionless read of it
    hosted = dataclasses.replace(fetch(v, fetch_topic(v, A, (0, 0)), until=_read), probe=True)
    return [_session_request(v, 0, 0), Step(w.DeleteTopicsRequest(topic_names=[A], timeout_ms=10000), 5), gone,
            *created(A, partitions=2), hosted,
            fetch(v, session_id=Learned("session_id", at="Fetch", default=0), session_epoch=1)]


def _read(answer) -> bool:
    return all(p.error_code == 0 for t in answer.responses for p in t.partitions)


def _second_batch(v):
    return written(A, (0, records(2, first=3)))


#: at every version: records read, an offset out of range, unknown topics and partitions (by id from v13)
EVERY = {
    "records": _filled(_from((0, 0), (1, 0))),
    "offset-out-of-range": _filled(_from((0, 10), (1, -5))),
    "unknown-partition": _filled(_from((5, 0), (0, 0))),
    "unknown-topic": _unknown_topic,
}

#: at the key versions: v7 (sessions), v12 (the last by name), v13 (by id), v16 (KIP-951's leaders), the newest
SOME = {
    "two-batches": _filled(_second_batch, _from((0, 0))),
    "from-inside-a-batch": _filled(_from((0, 1))),
    "at-the-end": _filled(_from((0, 3), (1, 2))),
    "partition-max-bytes": _filled(_second_batch, _from((0, 0, 1), (1, 0, 1))),
    "max-bytes": _filled(_second_batch, _from((0, 0), (1, 0), max_bytes=1)),
    "batch-cut-short": _filled(_second_batch, _from((0, 0, 90))),
    "read-committed": _filled(_from((0, 0), (1, 0), isolation=1)),
    "invalid-isolation": _filled(_from((0, 0), isolation=3)),
    "min-bytes-not-reached": _filled(_from((0, 0), min_bytes=1 << 20, max_wait_ms=50)),
    "not-a-replica": _filled(_as_replica),
    "leader-epoch-current": _filled(_since(9, lambda v: fetch(v, fetch_topic(v, A, (0, 0), leader_epoch=0)))),
    "leader-epoch-future": _filled(_since(9, lambda v: fetch(v, fetch_topic(v, A, (0, 0), leader_epoch=5)))),
    "session-new-then-incremental": _filled(_since(7, lambda v: [
        _session_request(v, 0, 0), *_second_batch(v),
        _session_request(v, Learned("session_id", default=0), 1)])),
    "session-unknown": _filled(_since(7, lambda v: _session_request(v, 1234567, 1))),
    "session-bad-epoch": _filled(_since(7, lambda v: _session_request(v, 0, 5))),
    # the same incremental request twice: the second names an epoch the session has left
    "session-stale-epoch": _filled(_since(7, lambda v: [
        _session_request(v, 0, 0), _session_request(v, Learned("session_id", default=0), 1),
        _session_request(v, Learned("session_id", at="Fetch", default=0), 1)])),
    # an incremental request that changed nothing: nothing listed; then epoch -1 closes the session
    "session-nothing-new-then-closed": _filled(_since(7, lambda v: [
        fetch(v, fetch_topic(v, A, (0, 3), (1, 2)), session_epoch=0),
        fetch(v, fetch_topic(v, A), session_id=Learned("session_id", default=0), session_epoch=1),
        fetch(v, fetch_topic(v, A, (0, 3), (1, 2)), session_id=Learned("session_id", at="Fetch", default=0),
              session_epoch=-1),
        fetch(v, fetch_topic(v, A), session_id=Learned("session_id", at="Fetch", default=0), session_epoch=2)])),
    "session-topic-id-switch": _filled(_since(7, _session_switch)),
    # a session id beyond the last of Kafka's eight cache shards: its lookup fails, the request with it
    "session-outside-the-shards": _filled(_since(7, lambda v: _session_request(v, 2**31 - 1, -1))),
    "session-topic-recreated": _filled(_recreated_under_session),
}


TXN = "{ns}.t"


def _open_transaction(v):
    """A transactional producer writes two records to A-0 and leaves the transaction open."""
    return [*created(A), *transactional(), add_partitions(3, (A, [0])),
            produce(PRODUCE_VERSION, (A, 0, idempotent(2, 0, transactional=True)), transactional_id=TXN,
                    until=no_error)]


TXN_CASES = {
    "read-committed-open-transaction": lambda v: [*_open_transaction(v), fetch(v, fetch_topic(v, A, (0, 0))),
                                                  fetch(v, fetch_topic(v, A, (0, 0)), isolation=1)],
    # the abort marker carries the coordinator's clock, years after the records' fixed timestamps: Kafka rolls a
    # new segment for it (segment.ms counts from the first batch's timestamp), and a fetch reads one segment
    "read-committed-aborted-transaction": lambda v: [
        *_open_transaction(v), end_txn(3, committed=False),
        fetch(v, fetch_topic(v, A, (0, 0)), isolation=1, until=settled),
        fetch(v, fetch_topic(v, A, (0, 2)), isolation=1)],
}

KEY = (7, 12, 13, 16)
SCENARIOS = [*every_and_key_versions("Fetch", EVERY, SOME, *KEY),
             *each_version("Fetch", TXN_CASES, config="coordinators", at=key_versions("Fetch", *KEY))]
