"""Kafka's idempotent-producer sequence rules on the pure per-partition table."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.replica.producers import CACHED_BATCHES, MAX_EPOCH, SEQ_MOD, TV_UNKNOWN, ProducerEntry, ProducerTable


def test_sequence_rules():
    t = ProducerTable()
    assert t.check(7, 0, 42, 3).error == ec.NONE  # an unknown producer may start anywhere
    t.apply(7, 0, 0, 3, 100, 102)
    assert t.check(7, 0, 3, 1).error == ec.NONE
    assert t.check(7, 0, 0, 3).duplicate == (100, 102)  # a retry of a cached batch
    assert t.check(7, 0, 5, 1).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert t.check(7, 0, 1, 2).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER  # overlaps, not equal
    assert t.check(7, 1, 3, 1).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER  # a new epoch starts at 0
    assert t.check(7, 1, 0, 1).error == ec.NONE
    t.apply(7, 1, 0, 1, 103, 103)
    assert t.check(7, 0, 3, 1).error == ec.INVALID_PRODUCER_EPOCH
    assert t.check(-1, 0, 0, 1).error == ec.NONE  # no producer id: no checks


def test_a_retried_batch_is_answered_with_its_own_max_timestamp():
    """Kafka's ``UnifiedLog.append``: a duplicate's LogAppendInfo takes the cached batch's timestamp (its
    ``BatchMetadata.timestamp``), which the Produce answer carries as log_append_time_ms (conformance run, #36)."""
    t = ProducerTable()
    t.apply(7, 0, 0, 3, 100, 102, timestamp=1_700_000_000_002)
    t.apply(7, 0, 3, 2, 103, 104, timestamp=1_600_000_000_000)  # an older clock: the producer's maximum stays
    assert (t.check(7, 0, 0, 3).duplicate, t.check(7, 0, 0, 3).timestamp) == ((100, 102), 1_700_000_000_002)
    assert (t.check(7, 0, 3, 2).duplicate, t.check(7, 0, 3, 2).timestamp) == ((103, 104), 1_600_000_000_000)
    assert t.check(7, 0, 5, 1).timestamp == -1


def test_only_the_last_five_batches_are_remembered_and_sequences_wrap():
    t = ProducerTable()
    for i in range(CACHED_BATCHES + 1):
        t.apply(1, 0, i, 1, i, i)
    assert t.check(1, 0, 0, 1).duplicate is None and t.check(1, 0, 1, 1).duplicate == (1, 1)
    t = ProducerTable()
    t.apply(2, 0, SEQ_MOD - 2, 2, 0, 1)
    assert t.check(2, 0, 0, 1).error == ec.NONE


def test_folding_batch_headers_skips_control_and_anonymous_batches():
    from types import SimpleNamespace as B

    t = ProducerTable()
    t.apply_batch(B(producer_id=-1, is_control=False))
    t.apply_batch(B(producer_id=9, is_control=True))
    t.apply_batch(B(producer_id=9, producer_epoch=0, base_sequence=0, last_offset_delta=1, base_offset=5,
                    last_offset=6, is_control=False, max_timestamp=1234))
    assert list(t) == [9] and t[9].last_seq == 1 and t[9].timestamp == 1234


def test_a_producer_snapshot_round_trips_kafkas_layout_and_refuses_damage():
    import struct

    import pytest

    from kraftwire.replica import producer_snapshot as ps

    t = ProducerTable()
    t.apply(7, 2, 0, 3, 10, 12, timestamp=1000)
    t.apply(7, 2, 3, 2, 20, 21, timestamp=2000)  # only the last batch is kept, as Kafka keeps it
    t.apply(9, 0, SEQ_MOD - 1, 2, 30, 31, timestamp=3000)  # its sequences wrap
    data = ps.encode(t)
    # int16 version, uint32 crc, int32 count, then 46-byte entries in producer id order
    assert struct.unpack_from(">hIi", data) == (1, struct.unpack_from(">I", data, 2)[0], 2) and len(data) == 10 + 2 * 46
    assert struct.unpack_from(">qhiqiqiq", data, 10) == (7, 2, 4, 21, 1, 2000, -1, -1)
    back = ps.decode(data)
    assert sorted(back) == [7, 9] and back[7].epoch == 2 and back[7].last_seq == 4 and back[7].timestamp == 2000
    assert list(back[7].batches) == [(3, 4, 20, 21, 2000)]
    assert list(back[9].batches) == [(SEQ_MOD - 1, 0, 30, 31, 3000)]
    assert back.check(7, 2, 3, 2).duplicate == (20, 21) and back.check(7, 2, 5, 1).error == ec.NONE
    assert back.check(7, 2, 0, 3).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER  # not among the kept batches any more
    assert ps.snapshot_name(21) == "00000000000000000021.snapshot" and ps.parse_snapshot_name("x.snapshot") is None
    assert ps.parse_snapshot_name(ps.snapshot_name(21)) == 21
    import crc32c

    lying = struct.pack(">i", 3) + data[10:]  # says three entries, holds two, with a CRC that matches
    lying = struct.pack(">hI", 1, crc32c.crc32c(lying)) + lying
    for bad, why in ((lying, "fit"), (data[:-1], "CRC"), (b"\x00\x02" + data[2:], "version"), (data[:12] + b"\xff" + data[13:], "CRC"),
                     (b"", "short")):
        with pytest.raises(ps.CorruptProducerSnapshot, match=why):
            ps.decode(bad)


def test_transaction_markers_fence_old_epochs_and_coordinators():
    """Kafka's appendEndTxnMarker: an older producer epoch is INVALID_PRODUCER_EPOCH, an older coordinator epoch
    TRANSACTION_COORDINATOR_FENCED; a marker with a newer epoch (the coordinator fenced the producer) starts that
    epoch with no sequence, so the producer's next batch must start at 0 and the old epoch is refused."""
    t = ProducerTable()
    assert t.check_marker(5, 0, 0).error == ec.NONE  # unknown producer: fine
    t.apply(5, 0, 0, 2, 0, 1)
    t.apply_marker(5, 0, 3, 2)
    assert t[5].coordinator_epoch == 3 and t[5].last_seq == 1  # same epoch: the sequence goes on
    assert t.check_marker(5, 0, 2).error == ec.TRANSACTION_COORDINATOR_FENCED
    assert t.check_marker(5, 0, 3).error == ec.NONE
    t.apply_marker(5, 1, 3, 3)  # fenced: epoch 1
    assert t[5].epoch == 1 and not t[5].batches and t[5].marker_offset == 3
    assert t.check_marker(5, 0, 4).error == ec.INVALID_PRODUCER_EPOCH
    assert t.check(5, 0, 2, 1).error == ec.INVALID_PRODUCER_EPOCH
    assert t.check(5, 1, 2, 1).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert t.check(5, 1, 0, 1).error == ec.NONE
    t.apply(5, 2, 0, 1, 4, 4)  # a data batch of a new epoch keeps the coordinator epoch
    assert t[5].coordinator_epoch == 3


def test_a_producer_snapshot_carries_open_transactions_and_marker_epochs():
    import struct

    from kraftwire.replica import producer_snapshot as ps

    t = ProducerTable()
    t.apply(7, 0, 0, 2, 10, 11, timestamp=100)
    t.apply_marker(8, 3, 2, 12, timestamp=200)  # an epoch begun by a marker, no batch yet
    t[7].coordinator_epoch = 4
    data = ps.encode(t, {7: 10})
    assert struct.unpack_from(">qhiqiqiq", data, 10) == (7, 0, 1, 11, 1, 100, 4, 10)
    assert struct.unpack_from(">qhiqiqiq", data, 56) == (8, 3, -1, 12, 0, 200, 2, -1)
    back, ongoing = ps.decode_with_txns(data)
    assert ongoing == {7: 10} and back[7].coordinator_epoch == 4 and back[7].last_seq == 1
    assert back[8].epoch == 3 and back[8].marker_offset == 12 and back[8].coordinator_epoch == 2
    assert back.check(8, 3, 0, 1).error == ec.NONE and back.check(8, 2, 0, 1).error == ec.INVALID_PRODUCER_EPOCH
    assert ps.decode(data).keys() == back.keys()


def test_expire_forgets_idle_producers_without_an_open_transaction():
    from kraftwire.replica.producers import ProducerTable

    t = ProducerTable()
    t.apply(1, 0, 0, 2, 0, 1, timestamp=1_000)
    t.apply(2, 0, 0, 1, 2, 2, timestamp=1_000)
    t.apply(3, 0, 0, 1, 3, 3, timestamp=9_000)
    t.apply_marker(4, 1, 0, 4)  # a marker without a timestamp: -1, as old as can be
    assert sorted(t.expire(10_000, 5_000, ongoing={2})) == [1, 4]
    assert sorted(t) == [2, 3]
    assert t.expire(13_999, 5_000, ongoing=set()) == [2]  # 13,999 - 9,000 < 5,000 keeps 3
    assert sorted(t) == [3]
    assert t.expire(14_000, 5_000, ongoing=()) == [3]


def test_a_tv2_marker_must_bump_the_epoch_of_an_open_transaction():
    """KIP-1228 (Kafka 4.4's ``ProducerAppendInfo.checkProducerEpoch`` with a transaction version of 2, checked
    against a Kafka 4.4 node): a TV2 coordinator bumps the epoch at every end, so a marker at the producer's current
    epoch while its transaction is open is INVALID_PRODUCER_EPOCH ("<=" where TV0/1 says "<"); a higher epoch is
    taken, and so is an older transaction version's marker at the current epoch (WriteTxnMarkers v1 says 0).
    ProducerStateManagerTest's testOldEpochForControlRecord (an older epoch, any version) and
    testControlRecordBumpsProducerEpoch (a higher one) hold under TV2 too; any version from 2 up counts as TV2."""
    t = ProducerTable()
    t.apply(5, 3, 0, 2, 0, 1)
    for version in (2, 3, 127):
        refused = t.check_marker(5, 3, 0, version, txn_open=True)
        assert refused.error == ec.INVALID_PRODUCER_EPOCH and f"<= its current epoch 3 (TV{version})" in refused.message
        assert t.check_marker(5, 2, 0, version, txn_open=True).error == ec.INVALID_PRODUCER_EPOCH
        assert t.check_marker(5, 4, 0, version, txn_open=True).error == ec.NONE
    for version in (0, 1, -2):
        assert t.check_marker(5, 3, 0, version, txn_open=True).error == ec.NONE
        stale = t.check_marker(5, 2, 0, version, txn_open=True)
        assert stale.error == ec.INVALID_PRODUCER_EPOCH and "< its current epoch 3" in stale.message
    t.apply_marker(5, 4, 0, 2)
    assert t.check_marker(5, 4, 1, 2, txn_open=True).error == ec.INVALID_PRODUCER_EPOCH
    assert t.check_marker(5, 5, 0, 2, txn_open=True).error == ec.NONE
    assert t.check_marker(5, 5, -1, 2).error == ec.TRANSACTION_COORDINATOR_FENCED  # the epoch first, then this


def test_a_tv2_marker_may_repeat_one_already_written_or_an_exhausted_epoch():
    """Kafka 4.4 lets a TV2 marker at the current epoch through when it repeats a marker already written (the
    producer has no transaction open: a coordinator retrying after a lost answer) and when the epoch is 32767, which
    no bump can pass; ProducerStateManagerTest's testAppendTxnMarkerWithNoProducerState holds for every version."""
    t = ProducerTable()
    assert t.check_marker(9, 0, 0, 2).error == ec.NONE
    t.apply(9, 3, 0, 1, 0, 0)
    assert t.check_marker(9, 3, 0, 2, txn_open=False).error == ec.NONE
    assert t.check_marker(9, 2, 0, 2, txn_open=False).error == ec.INVALID_PRODUCER_EPOCH
    t.apply(9, MAX_EPOCH, 0, 1, 1, 1)
    assert t.check_marker(9, MAX_EPOCH, 0, 2, txn_open=True).error == ec.NONE


def test_a_marker_of_unknown_transaction_version_is_an_unknown_server_error():
    """Kafka 4.4's appendEndTxnMarker throws IllegalArgumentException for TV_UNKNOWN (-1) from a coordinator, whatever
    the producer (a Kafka 4.4 node answers UNKNOWN_SERVER_ERROR, and appends nothing)."""
    t = ProducerTable()
    for table in (t, ProducerTable({5: ProducerEntry(3)})):
        refused = table.check_marker(5, 4, 0, TV_UNKNOWN)
        assert refused.error == ec.UNKNOWN_SERVER_ERROR and "TV_UNKNOWN" in refused.message
