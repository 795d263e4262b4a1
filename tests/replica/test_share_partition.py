"""The pure share-partition state (``kraftwire.replica.share_partition``), each test named after the test of
Kafka's ``SharePartitionTest`` whose rule it checks."""

from __future__ import annotations

import pytest

from kraftwire import error_codes as ec
from kraftwire.replica import share_partition as sp
from kraftwire.replica.share_partition import (
    ACCEPT, ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE, GAP, REJECT, RELEASE, RENEW,
    AckBatch, AcquiredRecords, ShareConfig, SharePartition, ShareState, ShareStateBatch,
)

LOCK_MS = 30_000


def _part(start=0, **config) -> SharePartition:
    return SharePartition(ShareConfig(**config), leader_epoch=0, start_offset=start)


def _ack(first, last, *types):
    return AckBatch(first, last, tuple(types))


def _durable(part, member, batches, now_ms):
    """An acknowledgement whose write the share coordinator took (the persister's future completing)."""
    answer = part.acknowledge(member, batches, now_ms)
    if answer[2] is not None:
        assert part.complete(answer[2], True, now_ms) is None
    return answer


def _states(part, first, last):
    return [part.state_of(o)[:2] for o in range(first, last + 1)]


def test_record_state_for_id():
    # RecordState ids as Kafka 4.4 numbers them (ARCHIVING, 3: the dead-letter queue's); all but ACQUIRED are written
    assert (AVAILABLE, ACQUIRED, ACKNOWLEDGED, sp.ARCHIVING, ARCHIVED) == (0, 1, 2, 3, 4)
    assert (GAP, ACCEPT, RELEASE, REJECT, RENEW) == (0, 1, 2, 3, 4)


def test_maybe_initialize():
    durable = ShareState(state_epoch=3, start_offset=5, state_batches=(
        ShareStateBatch(5, 10, AVAILABLE, 2), ShareStateBatch(11, 15, ARCHIVED, 3)))
    part = SharePartition.initialize(ShareConfig(), durable, leader_epoch=1, log_start_offset=0,
                                     log_end_offset=20)
    assert (part.start_offset, part.fetched_end, part.next_fetch_offset()) == (5, 16, 5)
    assert part.state_of(5) == (AVAILABLE, 2, "")
    assert part.state_of(15) == (ARCHIVED, 3, "")


def test_maybe_initialize_with_empty_state_batches():
    durable = ShareState(start_offset=10)
    part = SharePartition.initialize(ShareConfig(), durable, leader_epoch=1, log_start_offset=0, log_end_offset=20)
    assert (part.start_offset, part.fetched_end, part.next_fetch_offset()) == (10, 10, 10)
    assert part.records == {}


@pytest.mark.parametrize("policy,start", [("latest", 20), ("earliest", 3), ("by_duration:PT1H", 7)])
def test_maybe_initialize_when_read_state_rpc_returns_zero_available_records(policy, start):
    """No durable state yet: ``share.auto.offset.reset`` chooses the start (by_duration: the offset of the time the
    runtime looked up, here 7)."""
    part = SharePartition.initialize(ShareConfig(auto_offset_reset=policy), ShareState(), leader_epoch=0,
                                     log_start_offset=3, log_end_offset=20, offset_for_duration=7)
    assert part.start_offset == part.next_fetch_offset() == start


def test_acquire_single_record():
    part = _part()
    assert part.acquire("m1", 0, 0, 500, now_ms=0) == [AcquiredRecords(0, 0, 1)]
    assert part.state_of(0) == (ACQUIRED, 1, "m1")
    assert (part.next_fetch_offset(), part.fetched_end) == (1, 1)


def test_acquire_with_max_fetch_records():
    part = _part()
    assert part.acquire("m1", 0, 9, 4, now_ms=0) == [AcquiredRecords(0, 3, 1)]
    assert part.next_fetch_offset() == 4


def test_acquire_same_batch_again():
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    assert part.acquire("m2", 0, 4, 500, now_ms=0) == []
    assert all(part.state_of(o)[2] == "m1" for o in range(5))


def test_acquire_multiple_records_with_overlap_and_new_batch():
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    assert part.acquire("m1", 0, 9, 500, now_ms=0) == [AcquiredRecords(5, 9, 1)]


def test_acquire_released_record():
    part = _part()
    part.acquire("m1", 0, 2, 500, now_ms=0)
    _durable(part, "m1", [_ack(1, 1, RELEASE)], now_ms=0)
    assert part.next_fetch_offset() == 1
    assert part.acquire("m2", 1, 2, 500, now_ms=0) == [AcquiredRecords(1, 1, 2)]
    assert part.state_of(1) == (ACQUIRED, 2, "m2")


def test_can_acquire_records_with_cached_data_and_limit_reached():
    part = _part(max_record_locks=100)
    assert part.acquire("m1", 0, 199, 500, now_ms=0) == [AcquiredRecords(0, 99, 1)]
    assert not part.can_acquire()
    _durable(part, "m1", [_ack(50, 50, RELEASE)], now_ms=0)
    assert part.can_acquire()  # a record inside the window is available again


def test_can_acquire_records_after_accept_acknowledgement():
    part = _part(max_record_locks=100)
    part.acquire("m1", 0, 99, 500, now_ms=0)
    _durable(part, "m1", [_ack(0, 9, ACCEPT)], now_ms=0)
    assert part.start_offset == 10 and part.can_acquire()


def test_acknowledge_single_record_batch():
    part = _part()
    part.acquire("m1", 0, 0, 500, now_ms=0)
    error, message, write = _durable(part, "m1", [_ack(0, 0, ACCEPT)], now_ms=0)
    assert (error, message) == (ec.NONE, None)
    assert part.start_offset == 1 and part.records == {}
    # the write carries the start offset as it was (Kafka moves it once the write is durable) and the record
    assert write == sp.ShareWrite(0, 0, 1, (ShareStateBatch(0, 0, ACKNOWLEDGED, 1),))


def test_acknowledge_multiple_record_batch_with_gap_offsets():
    part = _part()
    part.acquire("m1", 0, 5, 500, now_ms=0)
    error, _, write = _durable(part, "m1", [_ack(0, 5, ACCEPT, GAP, ACCEPT, RELEASE, REJECT, ACCEPT)], now_ms=0)
    assert error == ec.NONE
    assert part.start_offset == 3
    assert _states(part, 3, 5) == [(AVAILABLE, 1), (ARCHIVED, 1), (ACKNOWLEDGED, 1)]
    assert write.start_offset == 0 and write.delivery_complete_count == 5
    assert write.state_batches == (ShareStateBatch(0, 0, ACKNOWLEDGED, 1), ShareStateBatch(1, 1, ARCHIVED, 1),
                                   ShareStateBatch(2, 2, ACKNOWLEDGED, 1), ShareStateBatch(3, 3, AVAILABLE, 1),
                                   ShareStateBatch(4, 4, ARCHIVED, 1), ShareStateBatch(5, 5, ACKNOWLEDGED, 1))


def test_acknowledge_out_of_range_cached_data():
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    before = _states(part, 0, 4)
    assert _durable(part, "m1", [_ack(5, 9, ACCEPT)], now_ms=0) == (
        ec.INVALID_REQUEST, "Batch record not found. The first offset in request is past acquired records.", None)
    assert _durable(part, "m1", [_ack(3, 9, ACCEPT)], now_ms=0) == (
        ec.INVALID_REQUEST, "Batch record not found. The last offset in request is past acquired records.", None)
    assert _states(part, 0, 4) == before


def test_acknowledge_with_another_member():
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    assert _durable(part, "m2", [_ack(0, 4, ACCEPT)], now_ms=0) == (
        ec.INVALID_RECORD_STATE, "Member is not the owner of offset", None)
    assert part.state_of(0) == (ACQUIRED, 1, "m1")


def test_acknowledge_when_offset_not_acquired():
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    _durable(part, "m1", [_ack(2, 2, RELEASE)], now_ms=0)
    error, message, _ = _durable(part, "m1", [_ack(2, 2, ACCEPT)], now_ms=0)
    assert (error, message) == (
        ec.INVALID_RECORD_STATE, "The batch cannot be acknowledged. The subset batch is not in the acquired state.")


def test_acknowledge_rollback_with_subset_error():
    """One bad batch refuses the whole request: nothing of the good batches before it is applied."""
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    part.acquire("m2", 5, 9, 500, now_ms=0)
    error, _, write = _durable(part, "m1", [_ack(0, 4, ACCEPT), _ack(5, 5, ACCEPT)], now_ms=0)
    assert error == ec.INVALID_RECORD_STATE and write is None
    assert part.start_offset == 0 and part.state_of(0) == (ACQUIRED, 1, "m1")


@pytest.mark.parametrize("batches", [
    [AckBatch(3, 2, (ACCEPT,))],  # first offset after the last
    [AckBatch(0, 2, (ACCEPT,)), AckBatch(1, 3, (ACCEPT,))],  # starting before the previous batch's last offset
    [AckBatch(2, 3, (ACCEPT,)), AckBatch(0, 1, (ACCEPT,))],  # not ascending
    [AckBatch(0, 3, (ACCEPT, ACCEPT))],  # neither one type nor one per offset
    [AckBatch(0, 0, (7,))],  # no such type
    [AckBatch(0, 0, (-1,))],
])
def test_validate_acknowledgement_batches(batches):
    """KafkaApis.validateAcknowledgementBatches: a malformed request is INVALID_REQUEST and changes nothing."""
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    assert _durable(part, "m1", batches, now_ms=0) == (ec.INVALID_REQUEST, None, None)
    assert _states(part, 0, 4) == [(ACQUIRED, 1)] * 5


def test_renew_acknowledgement_extends_the_lock():
    """RENEW (KIP-1222) keeps the records acquired by the member with a lock from now; nothing is written (Kafka
    4.4's ``SharePartition`` per offset and per batch: the renewed offsets stay ACQUIRED with their delivery count,
    their lock timer rescheduled, the others take their acknowledgement)."""
    part = _part()
    part.acquire("m1", 0, 2, 500, now_ms=0)
    assert _durable(part, "m1", [_ack(0, 2, RENEW, ACCEPT, RENEW)], now_ms=LOCK_MS - 1)[0] == ec.NONE
    assert part.expire_locks(LOCK_MS) is None
    assert part.state_of(0) == (ACQUIRED, 1, "m1") and part.state_of(1) == (ACKNOWLEDGED, 1, "")
    assert _durable(part, "m1", [_ack(0, 0, RENEW)], now_ms=LOCK_MS) == (ec.NONE, None, None)
    assert part.next_lock_deadline() == 2 * LOCK_MS - 1  # offset 2's renewal; offset 0 was renewed again later
    assert _durable(part, "m2", [_ack(0, 0, RENEW)], now_ms=LOCK_MS)[0] == ec.INVALID_RECORD_STATE


def test_renew_after_the_lock_expired_is_invalid_record_state():
    """A lock that ran out released its record: renewing it is acknowledging a record that is not acquired
    (INVALID_RECORD_STATE, as for any type), and a redelivery to another member is not renewed by the first."""
    part = _part()
    part.acquire("m1", 0, 1, 500, now_ms=0)
    assert part.expire_locks(LOCK_MS).state_batches == (ShareStateBatch(0, 1, AVAILABLE, 1),)
    assert _durable(part, "m1", [_ack(0, 1, RENEW)], now_ms=LOCK_MS) == (
        ec.INVALID_RECORD_STATE, "The batch cannot be acknowledged. The subset batch is not in the acquired state.",
        None)
    assert part.acquire("m2", 0, 1, 500, now_ms=LOCK_MS) == [AcquiredRecords(0, 1, 2)]
    assert _durable(part, "m1", [_ack(0, 1, RENEW)], now_ms=LOCK_MS)[:2] == (
        ec.INVALID_RECORD_STATE, "Member is not the owner of offset")
    assert _states(part, 0, 1) == [(ACQUIRED, 2)] * 2 and part.next_lock_deadline() == 2 * LOCK_MS


def test_renew_disabled_for_the_group():
    """``share.renew.acknowledge.enable`` false: a RENEW is INVALID_RECORD_STATE with Kafka's message, and the whole
    acknowledgement (an ACCEPT beside it included) changes nothing."""
    part = _part(renew_enabled=False)
    part.acquire("m1", 0, 1, 500, now_ms=0)
    assert _durable(part, "m1", [_ack(0, 1, ACCEPT, RENEW)], now_ms=1) == (
        ec.INVALID_RECORD_STATE, "Renewing acquisition locks is not enabled for the group.", None)
    assert _states(part, 0, 1) == [(ACQUIRED, 1)] * 2 and part.next_lock_deadline() == LOCK_MS


def test_an_offset_acknowledged_twice():
    """Batches meeting at one offset pass the shape check (Kafka 4.4 refuses only a batch starting before the
    previous one's last offset): the offset is renewed twice, or renewed then accepted, but once accepted it is no
    longer acquired, and the whole acknowledgement is refused."""
    part = _part()
    part.acquire("m1", 0, 2, 500, now_ms=0)
    assert _durable(part, "m1", [_ack(0, 0, RENEW), _ack(0, 1, RENEW)], now_ms=5) == (ec.NONE, None, None)
    assert _durable(part, "m1", [_ack(0, 1, ACCEPT), _ack(1, 2, ACCEPT)], now_ms=5) == (
        ec.INVALID_RECORD_STATE, "The batch cannot be acknowledged. The subset batch is not in the acquired state.",
        None)
    assert _states(part, 0, 2) == [(ACQUIRED, 1)] * 3
    assert _durable(part, "m1", [_ack(0, 1, RENEW), _ack(1, 2, ACCEPT)], now_ms=5)[0] == ec.NONE
    assert _states(part, 0, 2) == [(ACQUIRED, 1), (ACKNOWLEDGED, 1), (ACKNOWLEDGED, 1)]


@pytest.mark.parametrize("batches, max_type, renew_ack, code", [
    ([AckBatch(0, 0, (RENEW,))], RENEW, True, ec.NONE),
    ([AckBatch(0, 1, (RENEW, ACCEPT))], RENEW, True, ec.NONE),  # RENEW mixes with the other types
    ([AckBatch(0, 0, (ACCEPT,))], RENEW, True, ec.NONE),  # IsRenewAck without a RENEW is fine
    ([AckBatch(0, 0, (RENEW,))], RENEW, False, ec.INVALID_REQUEST),  # a RENEW needs IsRenewAck
    ([AckBatch(0, 1, (ACCEPT, RENEW))], RENEW, False, ec.INVALID_REQUEST),
    ([AckBatch(0, 0, (RENEW,))], REJECT, False, ec.INVALID_REQUEST),  # v1: no type past REJECT
    ([AckBatch(0, 0, (5,))], RENEW, True, ec.INVALID_REQUEST),
])
def test_validate_acknowledgement_batches_renew(batches, max_type, renew_ack, code):
    """``KafkaApis.validateAcknowledgementBatches`` with KIP-1222's rules: the highest type is RENEW from v2 (REJECT
    before), and RENEW only in a request with ``IsRenewAck``."""
    assert sp.check_ack_batches(batches, max_type=max_type, renew_ack=renew_ack) == code


def test_acquisition_lock_for_acquiring_single_record():
    part = _part()
    part.acquire("m1", 0, 0, 500, now_ms=1000)
    assert part.next_lock_deadline() == 1000 + LOCK_MS
    assert part.expire_locks(1000 + LOCK_MS - 1) is None
    write = part.expire_locks(1000 + LOCK_MS)
    assert part.state_of(0) == (AVAILABLE, 1, "")
    assert write.state_batches == (ShareStateBatch(0, 0, AVAILABLE, 1),)
    assert part.next_lock_deadline() is None


def test_acknowledge_after_acquisition_lock_timeout():
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    part.expire_locks(LOCK_MS)
    error, _, _ = _durable(part, "m1", [_ack(0, 4, ACCEPT)], now_ms=0)
    assert error == ec.INVALID_RECORD_STATE
    assert part.acquire("m2", 0, 4, 500, now_ms=LOCK_MS) == [AcquiredRecords(0, 4, 2)]


def test_acquisition_lock_timeout_cause_max_delivery_count_exceed():
    part = _part(delivery_count_limit=2)
    part.acquire("m1", 0, 1, 500, now_ms=0)
    part.expire_locks(LOCK_MS)
    part.acquire("m1", 0, 1, 500, now_ms=LOCK_MS)
    write = part.expire_locks(2 * LOCK_MS)
    assert part.start_offset == 2 and part.records == {}  # both archived at the limit, the start moved past them
    assert write.start_offset == 2


def test_acquisition_lock_timeout_cause_spso_move_forward():
    part = _part(delivery_count_limit=2)
    part.acquire("m1", 0, 9, 500, now_ms=0)
    _durable(part, "m1", [_ack(5, 9, RELEASE)], now_ms=0)
    part.acquire("m1", 5, 9, 500, now_ms=0)
    _durable(part, "m1", [_ack(0, 4, RELEASE)], now_ms=0)
    part.acquire("m1", 0, 4, 500, now_ms=0)
    part.expire_locks(LOCK_MS)
    assert part.start_offset == 10 and part.records == {}


def test_release_acquired_records_with_another_member():
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    part.acquire("m2", 5, 9, 500, now_ms=0)
    write = part.release_member("m2")
    assert write.state_batches == (ShareStateBatch(5, 9, AVAILABLE, 1),)
    assert part.state_of(0) == (ACQUIRED, 1, "m1")
    assert part.next_fetch_offset() == 5


def test_release_acquired_records_for_empty_cached_data():
    assert _part().release_member("m1") is None


def test_release_acknowledged_multiple_subset_record_batch():
    part = _part()
    part.acquire("m1", 0, 9, 500, now_ms=0)
    _durable(part, "m1", [_ack(2, 3, ACCEPT)], now_ms=0)
    part.release_member("m1")
    assert _states(part, 0, 4) == [(AVAILABLE, 1), (AVAILABLE, 1), (ACKNOWLEDGED, 1), (ACKNOWLEDGED, 1),
                                   (AVAILABLE, 1)]


def test_max_delivery_count_limit_exceeded_for_record_batch():
    part = _part(delivery_count_limit=2)
    part.acquire("m1", 0, 9, 500, now_ms=0)
    _durable(part, "m1", [_ack(0, 9, RELEASE)], now_ms=0)
    assert part.acquire("m1", 0, 9, 500, now_ms=0) == [AcquiredRecords(0, 9, 2)]
    _, _, write = _durable(part, "m1", [_ack(0, 9, RELEASE)], now_ms=0)
    assert part.start_offset == 10 and write.start_offset == 0
    assert write.state_batches == (ShareStateBatch(0, 9, ARCHIVED, 2),)


def test_max_delivery_count_limit_exceeded_for_records_subset_and_cached_state_not_cleared():
    part = _part(delivery_count_limit=2)
    part.acquire("m1", 0, 9, 500, now_ms=0)
    _durable(part, "m1", [_ack(0, 4, RELEASE)], now_ms=0)
    part.acquire("m1", 0, 4, 500, now_ms=0)
    _durable(part, "m1", [_ack(0, 1, RELEASE)], now_ms=0)
    assert part.start_offset == 2 and part.state_of(2) == (ACQUIRED, 2, "m1")


def test_next_fetch_offset_with_multiple_consumers():
    part = _part()
    part.acquire("m1", 0, 2, 500, now_ms=0)
    part.acquire("m2", 3, 5, 500, now_ms=0)
    _durable(part, "m1", [_ack(1, 1, RELEASE)], now_ms=0)
    assert part.next_fetch_offset() == 1
    part.acquire("m2", 1, 5, 500, now_ms=0)
    assert part.next_fetch_offset() == 6


def test_maybe_update_cached_state_when_all_records_in_cached_state_are_acknowledged():
    part = _part(start=100)
    part.acquire("m1", 100, 104, 500, now_ms=0)
    part.acquire("m2", 105, 109, 500, now_ms=0)
    _durable(part, "m2", [_ack(105, 109, ACCEPT)], now_ms=0)
    assert part.start_offset == 100
    _, _, write = _durable(part, "m1", [_ack(100, 104, REJECT)], now_ms=0)
    assert part.start_offset == part.fetched_end == 110 and part.records == {}
    assert write == sp.ShareWrite(0, 100, 10, (ShareStateBatch(100, 104, ARCHIVED, 1),))


def test_acknowledge_below_the_start_offset():
    """Offsets below the start offset are finished: acknowledging them again changes nothing and is no error."""
    part = _part()
    part.acquire("m1", 0, 4, 500, now_ms=0)
    _durable(part, "m1", [_ack(0, 1, ACCEPT)], now_ms=0)
    error, _, write = _durable(part, "m1", [_ack(0, 2, ACCEPT)], now_ms=0)
    assert error == ec.NONE and write.start_offset == 2 and part.start_offset == 3
    assert _durable(part, "m1", [_ack(1, 2, ACCEPT)], now_ms=0) == (
        ec.INVALID_RECORD_STATE, "Batch record not found. The request batch offsets are not found in the cache.", None)


def test_write_share_group_state():
    """The writes folded by the share coordinator rebuild the durable state a new leader loads: acquired records
    come back AVAILABLE with the count last written (KIP-932: the acquired state is transient)."""
    part = _part()
    durable = ShareState(start_offset=0)
    part.acquire("m1", 0, 9, 500, now_ms=0)
    durable = durable.apply(_durable(part, "m1", [_ack(0, 2, ACCEPT), _ack(5, 5, RELEASE)], now_ms=0)[2])
    part.acquire("m2", 5, 9, 500, now_ms=0)  # offset 5 now delivered twice, not yet written
    assert durable.start_offset == 0
    assert durable.state_batches == (ShareStateBatch(0, 2, ACKNOWLEDGED, 1), ShareStateBatch(5, 5, AVAILABLE, 1))
    moved = SharePartition.initialize(ShareConfig(), durable, leader_epoch=1, log_start_offset=0, log_end_offset=10)
    assert _states(moved, 3, 5) == [(AVAILABLE, 0), (AVAILABLE, 0), (AVAILABLE, 1)]
    assert moved.acquire("m3", 3, 9, 500, now_ms=0) == [AcquiredRecords(3, 4, 1), AcquiredRecords(5, 5, 2),
                                                        AcquiredRecords(6, 9, 1)]
    assert part.snapshot(0, 0).state_batches == (ShareStateBatch(3, 4, AVAILABLE, 0),
                                                 ShareStateBatch(5, 5, AVAILABLE, 1),
                                                 ShareStateBatch(6, 9, AVAILABLE, 0))


def test_acquire_past_the_window_is_refused():
    part = _part()
    with pytest.raises(ValueError):
        part.acquire("m1", 3, 5, 500, now_ms=0)


@pytest.mark.parametrize("answered, expected", [
    (ec.NONE, ec.NONE), (ec.NOT_COORDINATOR, ec.COORDINATOR_NOT_AVAILABLE),
    (ec.COORDINATOR_NOT_AVAILABLE, ec.COORDINATOR_NOT_AVAILABLE),
    (ec.COORDINATOR_LOAD_IN_PROGRESS, ec.COORDINATOR_NOT_AVAILABLE), (ec.GROUP_ID_NOT_FOUND, ec.GROUP_ID_NOT_FOUND),
    (ec.UNKNOWN_TOPIC_OR_PARTITION, ec.UNKNOWN_TOPIC_OR_PARTITION),
    (ec.FENCED_LEADER_EPOCH, ec.NOT_LEADER_OR_FOLLOWER), (ec.FENCED_STATE_EPOCH, ec.NOT_LEADER_OR_FOLLOWER),
    (ec.UNSUPPORTED_VERSION, ec.UNKNOWN_SERVER_ERROR), (ec.INVALID_REQUEST, ec.UNKNOWN_SERVER_ERROR),
])
def test_write_share_group_state_failure(answered, expected):
    """``testWriteShareGroupStateFailure``: the acknowledgement's error for each answer of the share coordinator to
    its write (4.4's ``fetchPersisterError``)."""
    assert sp.persister_error(answered) == expected


def test_acknowledge_batch_with_write_share_group_state_failure():
    """``testAcknowledgeBatchWithWriteShareGroupStateFailure``: the write failed, so the cached state is as before
    the acknowledgement — ACQUIRED by the member — and the start offset has not moved."""
    part = _part(start=5)
    part.acquire("m1", 5, 14, 500, now_ms=0)
    error, _, write = part.acknowledge("m1", [_ack(5, 14, ACCEPT)], now_ms=0)
    assert error == ec.NONE and part.start_offset == 5
    assert part.complete(write, False, now_ms=10) is None
    assert part.start_offset == 5 and _states(part, 5, 14) == [(ACQUIRED, 1)] * 10
    assert {part.state_of(o)[2] for o in range(5, 15)} == {"m1"} and part.next_lock_deadline() == LOCK_MS


def test_acknowledge_offset_with_write_share_group_state_failure():
    """``testAcknowledgeOffsetWithWriteShareGroupStateFailure``: per-offset types, the same rollback — a RELEASE
    inside is undone too (the record is not offered to another member)."""
    part = _part(start=5)
    part.acquire("m1", 5, 9, 500, now_ms=0)
    error, _, write = part.acknowledge("m1", [_ack(5, 9, ACCEPT, RELEASE, REJECT, ACCEPT, GAP)], now_ms=0)
    assert error == ec.NONE and part.next_fetch_offset() == 10
    part.complete(write, False, now_ms=10)
    assert _states(part, 5, 9) == [(ACQUIRED, 1)] * 5 and part.next_fetch_offset() == 10


def test_acknowledge_then_the_write_is_durable_moves_the_start_offset():
    """``testAcknowledgeSingleRecordBatch`` with the persister answering later: until the write is durable the start
    offset stays and the records are neither acquirable nor acknowledgeable again."""
    part = _part()
    part.acquire("m1", 0, 2, 500, now_ms=0)
    _, _, write = part.acknowledge("m1", [_ack(0, 1, ACCEPT, RELEASE)], now_ms=0)
    assert part.start_offset == 0 and part.next_fetch_offset() == 3
    assert part.acknowledge("m1", [_ack(0, 0, ACCEPT)], now_ms=0)[0] == ec.INVALID_RECORD_STATE
    assert part.complete(write, True, now_ms=0) is None
    assert part.start_offset == 1 and part.next_fetch_offset() == 1 and part.state_of(1) == (AVAILABLE, 1, "")


def test_filter_aborted_transactional_acquired_records():
    """``testFilterAbortedTransactionalAcquiredRecords``' state part: archiving the aborted records of a
    read_committed fetch touches only the records just ACQUIRED (an ACKNOWLEDGED or AVAILABLE one stays), keeps their
    delivery count, writes them, and moves the start offset past those at its front."""
    part = _part()
    part.acquire("m", 0, 5, 500, 0)
    _durable(part, "m", [_ack(3, 3, ACCEPT)], 0)
    part.acquire("m", 6, 6, 500, 0)
    assert part.release_member("m") is not None
    part.acquire("m", 0, 2, 500, 0)  # 0-2 acquired again (count 2); 4, 5, 6 AVAILABLE (count 1); 3 ACKNOWLEDGED
    write = part.archive(range(0, 6))
    assert write.start_offset == 4 and part.start_offset == 4
    assert write.state_batches == ()  # the archived records are all below the new start offset
    assert write.delivery_complete_count == part.delivery_complete_count() == 0
    assert _states(part, 4, 6) == [(AVAILABLE, 1)] * 3
    assert part.archive(range(4, 7)) is None  # nothing ACQUIRED among them
    part.acquire("m", 4, 6, 500, 0)
    write = part.archive([5])
    assert write.start_offset == 4 and write.state_batches == (ShareStateBatch(5, 5, ARCHIVED, 2),)
    assert _states(part, 4, 6) == [(ACQUIRED, 2), (ARCHIVED, 2), (ACQUIRED, 2)]
