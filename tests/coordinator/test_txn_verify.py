"""The transaction coordinator's answer to a partition leader's verification (KIP-890 part 1, AddPartitionsToTxn
v4+ with VerifyOnly; Kafka's ``handleVerifyPartitionsInTransaction``), pure: whether each partition is in the
producer's ongoing transaction, with Kafka's error codes, and nothing written."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator.txn import coordinator as tc


def _ongoing(partitions):
    shard = tc.TxnShard(0)
    init = shard.init_producer_id("tx", 60_000, None, "i", 0).replies[0].body
    shard.add_partitions("tx", init.producer_id, init.producer_epoch, partitions, "a", 1)
    return shard, init.producer_id, init.producer_epoch


def test_a_partition_in_the_ongoing_transaction_is_verified_one_not_added_is_abortable():
    shard, pid, epoch = _ongoing([("t", 0), ("t", 1)])
    before = shard.txns["tx"].snapshot()
    codes = shard.verify_partitions("tx", pid, epoch, [("t", 0), ("t", 2), ("u", 0)])
    assert codes == {("t", 0): ec.NONE, ("t", 2): ec.TRANSACTION_ABORTABLE, ("u", 0): ec.TRANSACTION_ABORTABLE}
    assert shard.txns["tx"].snapshot() == before  # a verification changes nothing


def test_the_whole_transaction_is_refused_for_a_wrong_producer_or_a_commit_under_way():
    shard, pid, epoch = _ongoing([("t", 0)])
    tps = [("t", 0), ("t", 1)]
    assert shard.verify_partitions("tx", pid + 1, epoch, tps) == dict.fromkeys(tps, ec.INVALID_PRODUCER_ID_MAPPING)
    assert shard.verify_partitions("nobody", pid, epoch, tps) == dict.fromkeys(tps, ec.INVALID_PRODUCER_ID_MAPPING)
    assert shard.verify_partitions("tx", pid, epoch - 1, tps) == dict.fromkeys(tps, ec.PRODUCER_FENCED)
    assert shard.verify_partitions("tx", pid, epoch + 1, tps) == dict.fromkeys(tps, ec.PRODUCER_FENCED)
    assert shard.verify_partitions("", pid, epoch, tps) == dict.fromkeys(tps, ec.INVALID_REQUEST)
    shard.end_txn("tx", pid, epoch, False, "e", 2)
    assert shard.txns["tx"].state == tc.PREPARE_ABORT
    assert shard.verify_partitions("tx", pid, epoch, tps) == dict.fromkeys(tps, ec.CONCURRENT_TRANSACTIONS)


def test_after_an_abort_completes_a_late_write_is_not_verified():
    """The hanging-transaction case: the transaction ended (its partitions cleared), so a produce arriving late for
    one of its partitions must not open a new transaction there."""
    shard, pid, epoch = _ongoing([("t", 0)])
    shard.end_txn("tx", pid, epoch, False, "e", 2)
    shard.markers_written("tx", pid, epoch, 3)
    assert shard.txns["tx"].state == tc.COMPLETE_ABORT
    assert shard.verify_partitions("tx", pid, epoch, [("t", 0)]) == {("t", 0): ec.TRANSACTION_ABORTABLE}
    # an Empty transaction (just initialised) holds no partition either
    fresh = tc.TxnShard(0)
    init = fresh.init_producer_id("ty", 60_000, None, "i", 0).replies[0].body
    assert fresh.verify_partitions("ty", init.producer_id, init.producer_epoch, [("t", 0)]) == {
        ("t", 0): ec.TRANSACTION_ABORTABLE}


def test_a_timed_out_transaction_fences_the_producer_for_verification():
    shard, pid, epoch = _ongoing([("t", 0)])
    shard.tick(1 + 60_001)  # past transaction.timeout.ms: fenced (epoch + 1) and aborted
    assert shard.verify_partitions("tx", pid, epoch, [("t", 0)]) == {("t", 0): ec.PRODUCER_FENCED}
    assert shard.verify_partitions("tx", pid, epoch + 1, [("t", 0)]) == {("t", 0): ec.CONCURRENT_TRANSACTIONS}
