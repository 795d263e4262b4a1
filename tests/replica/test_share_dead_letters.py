"""A share group's dead-letter queue (KIP-1191, share.version 2), pure: the ARCHIVING path of
``kraftwire.replica.share_partition`` (Kafka 4.4's ``SharePartition`` with ``isDLQEnabledForGroup``,
``InFlightState.tryUpdateState``/``completeStateTransition``, ``maybeResumeDlqArchiving``,
``initiateDLQAndArchive``) and the DLQ write's decisions in ``kraftwire.replica.share_dlq`` (Kafka's
``ShareGroupDLQStateManager``: ``validateDlqTopic``, ``headers``, ``topicProduceData``)."""

from __future__ import annotations

import pytest

from kraftwire.records import read_batches
from kraftwire.records import RecordBatchBuilder
from kraftwire.replica import share_dlq
from kraftwire.replica.share_partition import (
    ACCEPT, ACKNOWLEDGED, ARCHIVED, ARCHIVING, AVAILABLE, CLIENT_REJECT, DELIVERY_COUNT_EXCEEDED, GAP, REJECT,
    RELEASE, AckBatch, DeadLetter, ShareConfig, SharePartition, ShareState, ShareStateBatch,
)

LOCK_MS = 1_000


def _part(dlq=True, limit=3) -> SharePartition:
    return SharePartition(ShareConfig(record_lock_duration_ms=LOCK_MS, delivery_count_limit=limit,
                                      dlq_enabled=dlq), leader_epoch=0, start_offset=0)


def _states(part, first, last):
    return [part.state_of(o)[:2] for o in range(first, last + 1)]


def test_reject_goes_to_archiving_then_archived_after_the_dlq_write():
    """A REJECT with a DLQ goes to ARCHIVING (written, state 3, the start offset held back); its DLQ write starts
    only once the acknowledgement's write is durable; archiving it is a second write, which carries the start
    offset as it stood, and the start then moves past it."""
    part = _part()
    part.acquire("m", 0, 3, 10, now_ms=0)
    code, _msg, write = part.acknowledge("m", [AckBatch(0, 1, (REJECT,)), AckBatch(2, 3, (ACCEPT,))], 1)
    assert code == 0 and [(b.first_offset, b.last_offset, b.delivery_state) for b in write.state_batches] == \
        [(0, 1, ARCHIVING), (2, 3, ACKNOWLEDGED)]
    assert part.dead_letters() == []  # the write is not durable yet
    assert part.complete(write, True, 2) is None
    assert part.start_offset == 0 and _states(part, 0, 1) == [(ARCHIVING, 1)] * 2
    letters = part.dead_letters()
    assert letters == [DeadLetter(0, 1, 1, CLIENT_REJECT)]
    assert part.dead_letters() == []  # handed out once
    archived = part.archive_dead_letters(letters[0])
    assert archived.start_offset == 0 and archived.delivery_complete_count == 4
    assert [(b.first_offset, b.last_offset, b.delivery_state) for b in archived.state_batches] == [(0, 1, ARCHIVED)]
    assert part.start_offset == 4 and part.records == {}
    assert part.archive_dead_letters(letters[0]) is None  # nothing left to archive


def test_reject_without_a_dlq_archives_at_once():
    part = _part(dlq=False)
    part.acquire("m", 0, 0, 10, now_ms=0)
    _code, _msg, write = part.acknowledge("m", [AckBatch(0, 0, (REJECT,))], 1)
    assert write.state_batches[0].delivery_state == ARCHIVED
    part.complete(write, True, 2)
    assert part.dead_letters() == [] and part.start_offset == 1


def test_gap_is_archived_without_the_dlq():
    """A GAP names an offset the log does not have: ARCHIVED, nothing to write to the DLQ."""
    part = _part()
    part.acquire("m", 0, 0, 10, now_ms=0)
    _code, _msg, write = part.acknowledge("m", [AckBatch(0, 0, (GAP,))], 1)
    part.complete(write, True, 2)
    assert write.state_batches[0].delivery_state == ARCHIVED and part.dead_letters() == []


@pytest.mark.parametrize("how", ["release", "expiry", "member"])
def test_the_delivery_count_limit_goes_to_archiving(how):
    """A record at the delivery-count limit released, timed out or left by its member goes to ARCHIVING with the
    cause DELIVERY_COUNT_EXCEEDED (``tryUpdateState`` with ``dlqSupportEnabled``); its write is not pending, so its
    DLQ write may start at once."""
    part = _part(limit=2)
    for n in range(2):
        part.acquire("m", 0, 0, 10, now_ms=n * 10 * LOCK_MS)
        if n == 0:
            part.expire_locks(LOCK_MS)
    now = 30 * LOCK_MS
    if how == "release":
        _c, _m, write = part.acknowledge("m", [AckBatch(0, 0, (RELEASE,))], now)
        part.complete(write, True, now)
    elif how == "expiry":
        write = part.expire_locks(now)
    else:
        write = part.release_member("m")
    assert write.state_batches == (ShareStateBatch(0, 0, ARCHIVING, 2),)
    assert part.dead_letters() == [DeadLetter(0, 0, 2, DELIVERY_COUNT_EXCEEDED)]


def test_a_refused_write_rolls_back_archiving():
    """A refused acknowledgement write gives the rejected record back to its member (no DLQ write); if its lock ran
    out meanwhile it is released — ARCHIVED at the limit, not ARCHIVING, as Kafka's ``completeStateTransition``."""
    part = _part(limit=1)
    part.acquire("m", 0, 1, 10, now_ms=0)
    _c, _m, write = part.acknowledge("m", [AckBatch(0, 1, (REJECT,))], 1)
    assert part.complete(write, False, 2) is None  # locks still held
    assert part.dead_letters() == [] and _states(part, 0, 1) == [(1, 1)] * 2  # ACQUIRED again
    _c, _m, write = part.acknowledge("m", [AckBatch(0, 1, (REJECT,))], 3)
    release = part.complete(write, False, 2 * LOCK_MS)
    assert part.dead_letters() == [] and part.records == {}  # ARCHIVED, not ARCHIVING: nothing for the DLQ
    assert release.start_offset == 2  # the write moves the start past them


def test_a_new_leader_sends_archiving_records_again():
    """``maybeResumeDlqArchiving``: ARCHIVING runs in the durable state are written to the DLQ again, their cause
    told by the delivery count."""
    durable = ShareState(start_offset=0, state_batches=(
        ShareStateBatch(0, 1, ARCHIVING, 3), ShareStateBatch(2, 2, ACKNOWLEDGED, 1),
        ShareStateBatch(3, 4, ARCHIVING, 1), ShareStateBatch(5, 5, AVAILABLE, 1)))
    part = SharePartition.initialize(ShareConfig(delivery_count_limit=3, dlq_enabled=True), durable,
                                     leader_epoch=2, log_start_offset=0, log_end_offset=10)
    assert part.start_offset == 0 and part.next_fetch_offset() == 5
    assert part.dead_letters() == [DeadLetter(0, 1, 3, DELIVERY_COUNT_EXCEEDED), DeadLetter(3, 4, 1, CLIENT_REJECT)]
    part.archive_dead_letters(DeadLetter(0, 1, 3, DELIVERY_COUNT_EXCEEDED))
    assert part.start_offset == 3  # past 0-1 archived and 2 acknowledged, held at 3 (still ARCHIVING)
    assert part.snapshot(1, 1).state_batches[0] == ShareStateBatch(3, 4, ARCHIVING, 1)


def test_refusal_in_kafkas_order():
    r = lambda topic, **kw: share_dlq.refusal("g", topic, **{  # noqa: E731
        "prefix": "dlq.", "topic_exists": True, "topic_configs": {"errors.deadletterqueue.group.enable": "true"},
        "auto_create": "false", **kw})
    assert r("") == "Configured DLQ topic name in share group: g is empty."
    assert r("__dlq.x") == "Configured DLQ topic name in share group: g cannot start with __, topic: __dlq.x."
    assert r("dlq.x", topic_configs={}) == "DLQ is not enabled on configured DLQ topic for share group: g, topic: dlq.x."
    assert r("dlq.x", topic_exists=False) == (
        "DLQ topic does not exist and auto create is disabled on cluster for share group: g, topic: dlq.x.")
    assert r("other", topic_exists=False, auto_create="true") == (
        "Configured DLQ topic name does not comply with the DLQ topic prefix in share group: g, topic: other, "
        "prefix: dlq..")  # Kafka's "prefix: %s." after a prefix ending in a dot
    assert r("dlq.x") is None and r("dlq.x", topic_exists=False, auto_create="true") is None
    assert r("other", prefix="") is None  # an empty prefix allows any name


def test_records_headers_and_partition():
    records = share_dlq.dead_letter_records(group_id="g", topic="orders", partition=3, first_offset=7,
                                            last_offset=8, delivery_count=5, cause=DELIVERY_COUNT_EXCEEDED,
                                            originals={7: (b"k", b"v")})
    assert records[0].key == b"k" and records[0].value == b"v" and records[1].key is records[1].value is None
    assert dict(records[1].headers) == {
        "__dlq.errors.topic": b"orders", "__dlq.errors.partition": b"3", "__dlq.errors.offset": b"8",
        "__dlq.errors.group": b"g", "__dlq.errors.delivery.count": b"5",
        "__dlq.errors.message": b"Offset delivery count exceeded the threshold."}
    assert [share_dlq.destination_partition(p, 2) for p in range(4)] == [0, 1, 0, 1]


def test_batches_stay_within_max_message_bytes():
    records = share_dlq.dead_letter_records(group_id="g", topic="t", partition=0, first_offset=0, last_offset=9,
                                            delivery_count=1, cause=CLIENT_REJECT)
    one = len(share_dlq.batches(records[:1], 5, 1 << 20)[0][1])
    split = share_dlq.batches(records, 5, 3 * one)
    assert sum(n for n, _b in split) == 10 and all(len(b) <= 3 * one for _n, b in split) and len(split) > 1
    got = [r for _n, b in split for batch in read_batches(b) for r in batch]
    assert [dict(r.headers)["__dlq.errors.offset"] for r in got] == [str(o).encode() for o in range(10)]
    assert {r.timestamp for r in got} == {5}


def test_copy_records_takes_data_records_in_range():
    builder = RecordBatchBuilder(base_offset=10)
    for i in range(4):
        builder.append(b"k%d" % i, b"v%d" % i)
    got = share_dlq.copy_records(list(read_batches(builder.build())), 11, 12)
    assert got == {11: (b"k1", b"v1"), 12: (b"k2", b"v2")}
