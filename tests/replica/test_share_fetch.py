"""ShareFetch / ShareAcknowledge decisions on a partition leader (``kraftwire.replica.share_fetch``): the request
checks of Kafka 4.4's ``KafkaApis.handleShareFetchRequest`` (``KafkaApisTest``'s share cases), acquiring from the
batches read (``ShareFetchUtilsTest.testProcessFetchResponse*``, ``SharePartitionManagerTest``'s max-records
cases), acknowledging, releasing a member's records (``testReleaseSession*``), and ``share.isolation.level``
(``SharePartitionTest``'s read_committed cases of KAFKA-16729)."""

from __future__ import annotations

from dataclasses import replace

from kraftwire import error_codes as ec
from kraftwire.records import RecordBatchBuilder
from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from kraftwire.replica.share_fetch import (Acquired, ShareLeader, aborted_ranges, acknowledgement_error, batch_bounds,
                                           renew_ack, request_error, share_config)
from kraftwire.replica.share_partition import (ACCEPT, ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE, RELEASE, RENEW,
                                               AckBatch, AcquiredRecords, ShareConfig, ShareStateBatch, SharePartition)
from kraftwire.replica.transactions import AbortedTxn, PartitionTxns, marker_key, marker_value

KEY = ("grp", "tid", 0)
CONFIG = ShareConfig(record_lock_duration_ms=1000, delivery_count_limit=3, max_record_locks=100,
                     auto_offset_reset="earliest")


def batch(base: int, n: int) -> bytes:
    b = RecordBatchBuilder(base_offset=base)
    for i in range(n):
        b.append(None, f"v{base + i}".encode(), timestamp=1)
    return b.build()


def leader(start: int = 0) -> ShareLeader:
    return ShareLeader({KEY: SharePartition(CONFIG, leader_epoch=0, start_offset=start)})


def test_request_checks_in_kafkas_order():
    """The codes alone, as Kafka's answers carry them (checked against Kafka 4.4 in the "share" conformance pair)."""
    ok = dict(enabled=True, group_id="g", group_allowed=True, member_id="m")
    assert request_error(**ok) == ec.NONE
    assert request_error(**{**ok, "enabled": False, "group_id": None}) == ec.UNSUPPORTED_VERSION
    assert request_error(**{**ok, "group_id": None, "group_allowed": False}) == ec.INVALID_REQUEST
    assert request_error(**{**ok, "group_allowed": False, "member_id": ""}) == ec.GROUP_AUTHORIZATION_FAILED
    assert request_error(**{**ok, "member_id": ""}) == ec.INVALID_REQUEST
    assert request_error(**{**ok, "member_id": "x" * 37}) == ec.INVALID_REQUEST
    assert request_error(**ok, renew=(0, 0, 0, 0)) == ec.NONE
    assert request_error(**ok, renew=(1, 0, 5, 0)) == ec.INVALID_REQUEST


def test_batch_bounds_of_what_the_log_returns():
    raw = batch(0, 3) + batch(3, 2) + batch(5, 1)
    bounds = batch_bounds(raw)
    assert [(f, last) for f, last, _ in bounds] == [(0, 2), (3, 4), (5, 5)]
    assert bounds[-1][2] == len(raw)
    assert batch_bounds(raw[:-1]) == bounds[:2]  # a cut last batch is not whole


def test_acquire_the_batches_read():
    """``testProcessFetchResponse``: the records read are acquired with delivery count 1 and the answer carries the
    batches up to the last acquired record."""
    sl = leader()
    raw = batch(0, 3) + batch(3, 2)
    got = sl.acquire(KEY, "m1", raw, max_records=500, now_ms=0)
    assert got == Acquired((AcquiredRecords(0, 4, 1),), len(raw)) and got.count == 5
    assert sl.get(KEY).state_of(4) == (ACQUIRED, 1, "m1")
    # nothing left to acquire: the same read gives nothing to another member
    assert sl.acquire(KEY, "m2", raw, 500, 0) == Acquired()


def test_max_records_takes_the_last_batch_whole():
    """Kafka 4.4's batch-optimized acquisition (checked in the "share" conformance pair): MaxRecords 2 on a batch of
    3 acquires the batch; the next fetch takes the next batch."""
    sl = leader()
    raw = batch(0, 3) + batch(3, 2)
    got = sl.acquire(KEY, "m1", raw, max_records=2, now_ms=0)
    assert got.ranges == (AcquiredRecords(0, 2, 1),) and got.record_bytes == len(batch(0, 3))
    got = sl.acquire(KEY, "m2", raw, max_records=10, now_ms=0)
    assert got.ranges == (AcquiredRecords(3, 4, 1),) and got.record_bytes == len(raw)
    assert sl.acquire(KEY, "m3", raw, max_records=0, now_ms=0) == Acquired()


def test_record_limit_mode_cuts_the_acquisition_and_the_bytes():
    """ShareAcquireMode 1 (record-limit): exactly MaxRecords."""
    sl = leader()
    raw = batch(0, 3) + batch(3, 2)
    got = sl.acquire(KEY, "m1", raw, max_records=2, now_ms=0, record_limit=True)
    assert got.ranges == (AcquiredRecords(0, 1, 1),) and got.record_bytes == len(batch(0, 3))
    got = sl.acquire(KEY, "m2", raw, max_records=10, now_ms=0, record_limit=True)
    assert got.ranges == (AcquiredRecords(2, 4, 1),) and got.record_bytes == len(raw)


def test_the_whole_last_batch_skips_what_is_not_available():
    """A released record inside a batch whose other records are taken: only it is acquired."""
    sl = leader()
    raw = batch(0, 3)
    sl.acquire(KEY, "m1", raw, 500, 0)
    _e, _m, write = sl.acknowledge(KEY, "m1", [AckBatch(0, 0, (RELEASE,)), AckBatch(1, 2, (ACCEPT,))], 0)
    sl.complete(KEY, write, True, 0)
    got = sl.acquire(KEY, "m2", raw, max_records=1, now_ms=0)
    assert got.ranges == (AcquiredRecords(0, 0, 2),)


def test_released_records_are_acquired_again_with_a_higher_count():
    sl = leader()
    raw = batch(0, 4)
    sl.acquire(KEY, "m1", raw, 500, 0)
    error, _msg, write = sl.acknowledge(KEY, "m1", [AckBatch(0, 1, (ACCEPT,)), AckBatch(2, 3, (RELEASE,))], 10)
    assert error == ec.NONE and write.start_offset == 0
    assert sl.acquire(KEY, "m2", raw, 500, 20) == Acquired(), "not while the write is on its way"
    assert sl.complete(KEY, write, True, 20) is None
    got = sl.acquire(KEY, "m2", raw, 500, 20)
    assert got.ranges == (AcquiredRecords(2, 3, 2),)


def test_acknowledge_unknown_share_partition():
    """``testAcknowledgeEmptyPartitionCacheMap``: no share-partition loaded here: UNKNOWN_TOPIC_OR_PARTITION."""
    assert ShareLeader().acknowledge(KEY, "m", [AckBatch(0, 0, (ACCEPT,))], 0) == (
        ec.UNKNOWN_TOPIC_OR_PARTITION, None, None)


def test_acknowledge_by_another_member_is_invalid_record_state():
    sl = leader()
    sl.acquire(KEY, "m1", batch(0, 2), 500, 0)
    error, _msg, write = sl.acknowledge(KEY, "m2", [AckBatch(0, 1, (ACCEPT,))], 0)
    assert error == ec.INVALID_RECORD_STATE and write is None
    assert sl.get(KEY).state_of(0) == (ACQUIRED, 1, "m1")


def test_release_member_and_expire_locks():
    """``testReleaseSessionSuccess``: a closed session's records go back AVAILABLE (written); locks expire at their
    deadline; ``only`` limits the release to the session's partitions."""
    other = ("grp", "tid", 1)
    sl = leader()
    sl.partitions[other] = SharePartition(CONFIG, leader_epoch=0, start_offset=0)
    sl.acquire(KEY, "m1", batch(0, 2), 500, 0)
    sl.acquire(other, "m1", batch(0, 2), 500, 0)
    writes = sl.release_member("grp", "m1", only=(("tid", 0),))
    assert [k for k, _w in writes] == [KEY] and sl.get(KEY).state_of(0) == (AVAILABLE, 1, "")
    assert sl.get(other).state_of(0) == (ACQUIRED, 1, "m1")
    assert sl.next_deadline() == 1000
    assert sl.expire_locks(999) == []
    assert [k for k, _w in sl.expire_locks(1000)] == [other] and sl.next_deadline() is None
    assert sl.release_member("other-group", "m1") == []


def test_drop_group_and_partition():
    sl = leader()
    sl.partitions[("g2", "tid", 0)] = SharePartition(CONFIG, 0, 0)
    sl.drop_group("grp")
    assert list(sl.partitions) == [("g2", "tid", 0)]
    sl.drop_partition("tid", 0)
    assert sl.partitions == {}


def test_accepted_record_is_final():
    sl = leader()
    sl.acquire(KEY, "m1", batch(0, 1), 500, 0)
    error, _msg, write = sl.acknowledge(KEY, "m1", [AckBatch(0, 0, (ACCEPT,))], 0)
    assert error == ec.NONE and write.start_offset == 0
    assert [(b.first_offset, b.delivery_state) for b in write.state_batches] == [(0, ACKNOWLEDGED)]
    sl.complete(KEY, write, True, 0)
    assert sl.get(KEY).state_of(0) is None
    assert sl.acknowledge(KEY, "m1", [AckBatch(0, 0, (ACCEPT,))], 0)[0] == ec.INVALID_RECORD_STATE


def test_acknowledge_rolls_back_when_the_write_fails():
    """``SharePartitionTest.testAcknowledgeWithPersisterWriteFailure`` / ``testRollbackOrProcessStateUpdates``
    (Kafka 4.4's ``InFlightState.completeStateTransition(false)``): the share coordinator refused the write, so the
    acknowledged records go back to their member, still ACQUIRED under the lock they had; the start offset stays."""
    sl = leader()
    sl.acquire(KEY, "m1", batch(0, 3), 500, 0)
    error, _msg, write = sl.acknowledge(KEY, "m1", [AckBatch(0, 1, (ACCEPT,)), AckBatch(2, 2, (RELEASE,))], 10)
    assert error == ec.NONE and write.pending == (0, 1, 2)
    assert sl.complete(KEY, write, False, 20) is None
    part = sl.get(KEY)
    assert part.start_offset == 0 and [part.state_of(o) for o in range(3)] == [(ACQUIRED, 1, "m1")] * 3
    assert part.next_lock_deadline() == 1000
    error, _msg, write = sl.acknowledge(KEY, "m1", [AckBatch(0, 2, (ACCEPT,))], 30)
    assert error == ec.NONE and sl.complete(KEY, write, True, 30) is None and part.start_offset == 3


def test_a_rollback_after_the_lock_expired_releases_the_records():
    """``SharePartitionTest.testAcquisitionLockTimeoutForBatchesPostStartOffsetWithPersisterWriteFailure`` (4.4's
    ``completeStateTransition`` with an expired timer task): the lock ran out while the write was on its way, so the
    failed acknowledgement leaves the records AVAILABLE (ARCHIVED at the delivery-count limit) — a write to make."""
    sl = leader()
    sl.acquire(KEY, "m1", batch(0, 2), 500, 0)
    _e, _m, write = sl.acknowledge(KEY, "m1", [AckBatch(0, 1, (ACCEPT,))], 10)
    assert sl.expire_locks(5_000) == [], "records with a write on its way are not ACQUIRED"
    again = sl.complete(KEY, write, False, 5_000)
    assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in again.state_batches] == [
        (0, 1, AVAILABLE, 1)]
    assert sl.acquire(KEY, "m2", batch(0, 2), 500, 5_000).ranges == (AcquiredRecords(0, 1, 2),)


def test_complete_after_the_share_partition_went():
    sl = leader()
    sl.acquire(KEY, "m1", batch(0, 1), 500, 0)
    _e, _m, write = sl.acknowledge(KEY, "m1", [AckBatch(0, 0, (ACCEPT,))], 0)
    sl.drop_partition("tid", 0)
    assert sl.complete(KEY, write, False, 0) is None


def test_share_config_from_group_and_broker():
    broker = {"group.share.record.lock.duration.ms": "15000", "group.share.delivery.count.limit": "4",
              "group.share.partition.max.record.locks": "200", "group.share.min.record.lock.duration.ms": "1000",
              "group.share.max.record.lock.duration.ms": "60000"}.get
    assert share_config({}, broker) == ShareConfig(15000, 4, 200, "latest")
    assert share_config({"share.record.lock.duration.ms": "500", "share.auto.offset.reset": "earliest"},
                        broker) == ShareConfig(1000, 4, 200, "earliest")


def test_share_config_renew_enable():
    """``share.renew.acknowledge.enable`` is a group config alone (true unless the group says false)."""
    broker = {}.get
    assert share_config({}, broker).renew_enabled
    assert not share_config({"share.renew.acknowledge.enable": "false"}, broker).renew_enabled
    assert share_config({"share.renew.acknowledge.enable": "TRUE"}, broker).renew_enabled


def test_renew_ack_by_version():
    """``IsRenewAck`` counts from ShareFetch / ShareAcknowledge v2; the type check follows the version
    (Kafka 4.4's ``KafkaApis.validateAcknowledgementBatches``: RENEW without IsRenewAck, or in v1, INVALID_REQUEST)."""
    fetch = w.ShareFetchRequest(is_renew_ack=True)
    assert renew_ack(2, fetch) and not renew_ack(1, fetch) and not renew_ack(2, w.ShareAcknowledgeRequest())
    renew = [AckBatch(0, 0, (RENEW,))]
    assert acknowledgement_error(renew, 2, True) == ec.NONE
    assert acknowledgement_error(renew, 2, False) == ec.INVALID_REQUEST
    assert acknowledgement_error(renew, 1, False) == ec.INVALID_REQUEST
    assert acknowledgement_error([AckBatch(0, 0, (ACCEPT,))], 1, False) == ec.NONE


def test_the_group_config_as_it_stands_applies_to_the_named_share_partitions():
    """The leader applies the group's current settings to the loaded share-partitions a request names, as Kafka's
    ``SharePartition`` reads ``share.renew.acknowledge.enable`` and ``share.record.lock.duration.ms`` on each use
    (``SharePartitionTest.testAcquireWithDynamicRecordLockDuration`` …): RENEW refused, then renewed under the new
    lock duration; a share-partition not named keeps its settings."""
    lead = leader()
    lead.acquire(KEY, "m", batch(0, 2), 10, now_ms=0)
    lead.refresh_config(replace(CONFIG, renew_enabled=False), [KEY])
    assert lead.acknowledge(KEY, "m", [AckBatch(0, 0, (RENEW,))], 1)[0] == ec.INVALID_RECORD_STATE
    lead.refresh_config(replace(CONFIG, record_lock_duration_ms=7_000), [KEY, ("grp", "other", 0)])
    assert lead.acknowledge(KEY, "m", [AckBatch(0, 0, (RENEW,))], 1) == (ec.NONE, None, None)
    assert lead.get(KEY).records[0].deadline_ms == 1 + 7_000  # offset 0's lock renewed for the new duration
    assert lead.get(KEY).records[1].deadline_ms == CONFIG.record_lock_duration_ms  # acquired under the old one


def test_fetch_ready():
    """``DelayedShareFetchTest``: ``testTryCompleteWhenMinBytesNotSatisfiedOnFirstFetch`` / ``…OnSubsequentFetch``
    (readable bytes below MinBytes, the other partition unable to acquire: wait),
    ``testDelayedShareFetchTryCompleteReturnsFalseDueToNonAcquirablePartitions`` (no partition can acquire: wait);
    the partitions' bytes add up, each up to its share of MaxBytes (``isMinBytesSatisfied``), and a failed partition
    completes the fetch."""
    from kraftwire.replica.share_fetch import fetch_ready
    assert not fetch_ready([50], 1 << 20, 100, False)
    assert fetch_ready([50, 60], 1 << 20, 100, False)
    assert not fetch_ready([None, None], 1 << 20, 1, False)
    assert fetch_ready([None], 1 << 20, 1, True)
    assert fetch_ready([0], 1 << 20, 0, False), "MinBytes 0 completes once a partition can acquire"
    # each partition counts up to its share of MaxBytes: two partitions under MaxBytes 100 count 50 each
    assert not fetch_ready([500, 40], 100, 100, False)
    assert fetch_ready([500, 50], 100, 100, False)
    assert fetch_ready([None, 50], 100, 100, False) is False and fetch_ready([None, 100], 100, 100, False)


# ---------------------------------------------------------------------------------------------------- isolation
def transaction(commit: bool, n: int, producer_id: int, base: int) -> bytes:
    """``n`` transactional records of ``producer_id`` from ``base`` and their COMMIT / ABORT marker after them (the
    layout of Kafka's ``SharePartitionTest.newTransactionalRecords``)."""
    data = RecordBatchBuilder(base_offset=base, producer_id=producer_id, producer_epoch=0, base_sequence=0,
                              is_transactional=True)
    for i in range(n):
        data.append(None, f"t{base + i}".encode(), timestamp=1)
    marker = RecordBatchBuilder(base_offset=base + n, producer_id=producer_id, producer_epoch=0,
                                is_transactional=True, is_control=True)
    marker.append(marker_key(commit), marker_value(0), timestamp=1)
    return data.build() + marker.build()


def aborted_of(raw: bytes) -> list[AbortedTxn]:
    """The aborted transactions a read_committed Fetch of ``raw`` is told, folded as the log folds them."""
    txns = PartitionTxns()
    txns.on_high_watermark(1 << 40)
    for b in read_batches(raw, validate=False):
        txns.apply_batch(b)
    return txns.aborted_between(0, 1 << 40)


#: Kafka's mixed layout: pid 1 aborts 0-1 (marker 2), pid 2 commits 3-4 (5) and aborts 6-7 (8), pid 1 aborts 9-10
#: (11), commits 12-13 (14), aborts 15-16 (17)
MIXED = (transaction(False, 2, 1, 0) + transaction(True, 2, 2, 3) + transaction(False, 2, 2, 6)
         + transaction(False, 2, 1, 9) + transaction(True, 2, 1, 12) + transaction(False, 2, 1, 15))


def test_fetch_aborted_transaction_record_batches_for_only_aborted_transactions():
    """``testFetchAbortedTransactionRecordBatchesForOnlyAbortedTransactions``: every data batch of an aborted
    transaction is found, never its marker."""
    raw = transaction(False, 2, 1, 0) + transaction(False, 3, 2, 3) + transaction(False, 1, 1, 7)
    assert aborted_ranges(read_batches(raw, validate=False), aborted_of(raw)) == [(0, 1), (3, 5), (7, 7)]


def test_fetch_aborted_transaction_record_batches_for_aborted_and_committed_transactions():
    """``testFetchAbortedTransactionRecordBatchesForAbortedAndCommittedTransactions``: only the batches of the
    aborted transactions told — an aborted transaction of another producer starting at a committed one's offset
    marks nothing of it, and one the fetch is not told about is not found."""
    batches = list(read_batches(MIXED, validate=False))
    told = [AbortedTxn(1, 0, 2, 3), AbortedTxn(1, 6, 11, 12), AbortedTxn(2, 6, 8, 9), AbortedTxn(1, 15, 17, 18)]
    assert aborted_ranges(batches, told) == [(0, 1), (6, 7), (9, 10), (15, 16)]
    # pid 2's abort at 6 not told: its batch 6-7 is delivered; pid 1's told from 6 still marks its batch 9-10 only
    assert aborted_ranges(batches, [a for a in told if a.producer_id == 1]) == [(0, 1), (9, 10), (15, 16)]
    assert aborted_ranges(batches, []) == []
    assert aborted_ranges(batches, aborted_of(MIXED)) == [(0, 1), (6, 7), (9, 10), (15, 16)]


def test_acquire_with_read_committed_isolation_level():
    """``testAcquireWithReadCommittedIsolationLevel``: the records of aborted transactions are acquired and at once
    ARCHIVED (their delivery count kept), left out of the acquired ranges and written; committed records and the
    markers are delivered; the start offset moves past the archived records at its front."""
    sl = leader()
    got = sl.acquire(KEY, "m1", MIXED, max_records=500, now_ms=0, aborted=aborted_of(MIXED))
    assert [(r.first_offset, r.last_offset) for r in got.ranges] == [(2, 5), (8, 8), (11, 14), (17, 17)]
    assert all(r.delivery_count == 1 for r in got.ranges) and got.count == 10
    assert got.record_bytes == len(MIXED)
    sp = sl.get(KEY)
    assert sp.state_of(0) is None and sp.start_offset == 2  # 0-1 archived and passed
    assert [sp.state_of(o) for o in (6, 7, 9, 16)] == [(ARCHIVED, 1, "")] * 4
    assert sp.state_of(8) == (ACQUIRED, 1, "m1")
    assert got.write.start_offset == 2
    assert got.write.state_batches == (ShareStateBatch(6, 7, ARCHIVED, 1), ShareStateBatch(9, 10, ARCHIVED, 1),
                                       ShareStateBatch(15, 16, ARCHIVED, 1))
    # never redelivered: a member's release makes the delivered records available again, not the archived ones
    sp.release_member("m1")
    assert sp.next_fetch_offset() == 2
    again = sl.acquire(KEY, "m2", MIXED, 500, 0, aborted=aborted_of(MIXED))
    assert [(r.first_offset, r.last_offset, r.delivery_count) for r in again.ranges] == \
        [(2, 5, 2), (8, 8, 2), (11, 14, 2), (17, 17, 2)]
    assert again.write is None


def test_acquire_with_read_uncommitted_isolation_level_delivers_everything():
    """read_uncommitted (no aborted transactions given): every record read is delivered, aborted or not."""
    sl = leader()
    got = sl.acquire(KEY, "m1", MIXED, max_records=500, now_ms=0)
    assert got == Acquired((AcquiredRecords(0, 17, 1),), len(MIXED))


def test_read_committed_with_only_aborted_records_delivers_nothing():
    """A read holding only an aborted transaction's data: nothing goes out, nothing of its bytes; only the marker
    would be left, and it is past the read here."""
    raw = transaction(False, 3, 7, 0)
    data = raw[:batch_bounds(raw)[0][2]]
    sl = leader()
    got = sl.acquire(KEY, "m1", data, 500, 0, aborted=[AbortedTxn(7, 0, 3, 4)])
    assert got.ranges == () and got.record_bytes == 0 and got.write.start_offset == 3
    assert sl.get(KEY).next_fetch_offset() == 3


def test_share_config_isolation_level():
    """``share.isolation.level`` is a group config alone, read_uncommitted unless the group says read_committed."""
    broker = {}.get
    assert not share_config({}, broker).read_committed
    assert share_config({"share.isolation.level": "read_committed"}, broker).read_committed
    assert not share_config({"share.isolation.level": "read_uncommitted"}, broker).read_committed
