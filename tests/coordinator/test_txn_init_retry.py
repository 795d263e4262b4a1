"""InitProducerId naming the producer's id and epoch (KIP-360): the current epoch is bumped and remembered, so the
retry of a bump whose answer was lost gets the same epoch back instead of PRODUCER_FENCED; a new producer instance
(no id named) or a fence forgets it; the memory is not in the log, as Kafka's lastProducerEpoch is not."""

from __future__ import annotations

from coordinator.test_txn import code, fresh
from kraftwire import error_codes as ec
from kraftwire.coordinator.txn import coordinator as tc


def init(shard, log, expected=None, now=0):
    return log.write(shard, shard.init_producer_id("tx", 60_000, expected, "i", now)).replies[0].body


def answer(body):
    return body.error_code, body.producer_id, body.producer_epoch


def test_init_producer_id_with_current_epoch_provided():
    """Mirrors Kafka's TransactionCoordinatorTest testInitProducerIdWithCurrentEpochProvided (and
    TransactionMetadataTest testEpochBumpWithCurrentEpochProvided / testAttemptedEpochBumpWithLastEpoch): the bump
    from the named current epoch, then its retry, both answer the bumped epoch."""
    shard, log = fresh()
    pid = init(shard, log).producer_id
    assert answer(init(shard, log, (pid, 0))) == (0, pid, 1)
    assert shard.txns["tx"].last_producer_epoch == 0
    retry = shard.init_producer_id("tx", 60_000, (pid, 0), "i", 1)
    assert answer(retry.replies[0].body) == (0, pid, 1)  # not PRODUCER_FENCED, and not bumped again
    assert len(retry.records) == 1  # answered after a write, as Kafka appends the unchanged epoch
    log.write(shard, retry)
    # the producer goes on with the epoch it got
    assert code(log.write(shard, shard.add_partitions("tx", pid, 1, [("t", 0)], "a", 2))) == 0
    assert log.load().txns["tx"].snapshot() == shard.txns["tx"].snapshot()


def test_init_producer_id_stale_current_epoch_provided():
    """Mirrors Kafka's TransactionCoordinatorTest testInitProducerIdStaleCurrentEpochProvided (and
    TransactionMetadataTest testAttemptedEpochBumpWithFencedEpoch): after a new producer instance initialised without
    naming an epoch, the old instance naming its epoch is fenced."""
    shard, log = fresh()
    pid = init(shard, log).producer_id
    assert answer(init(shard, log, (pid, 0))) == (0, pid, 1)
    assert answer(init(shard, log)) == (0, pid, 2)  # a new instance: no retry of the earlier bump is recognised
    assert code(shard.init_producer_id("tx", 60_000, (pid, 1), "i", 1)) == ec.PRODUCER_FENCED
    assert code(shard.init_producer_id("tx", 60_000, (pid, 0), "i", 1)) == ec.PRODUCER_FENCED


def test_retry_init_producer_id_after_producer_id_rotation():
    """Mirrors Kafka's TransactionCoordinatorTest testRetryInitProducerIdAfterProducerIdRotation and
    testInitProducerIdWithInvalidEpochAfterProducerIdRotation: the bump of an exhausted epoch gives a new producer
    id; its retry (the old id, the exhausted epoch) gets the new id again; the old id with another epoch is fenced."""
    shard, log = fresh()
    pid = init(shard, log).producer_id
    shard.txns["tx"].producer_epoch = tc.EPOCH_EXHAUSTED
    first = init(shard, log, (pid, tc.EPOCH_EXHAUSTED))
    assert first.error_code == 0 and first.producer_id != pid and first.producer_epoch == 0
    assert answer(init(shard, log, (pid, tc.EPOCH_EXHAUSTED))) == (0, first.producer_id, 0)
    assert code(shard.init_producer_id("tx", 60_000, (pid, tc.EPOCH_EXHAUSTED - 1), "i", 1)) == ec.PRODUCER_FENCED


def test_fence_producer_when_mapping_exists_with_different_producer_id():
    """Mirrors Kafka's TransactionCoordinatorTest testFenceProducerWhenMappingExistsWithDifferentProducerId and
    shouldGenerateNewProducerIdIfNoStateAndProducerIdAndEpochProvided: an unknown transactional id takes whatever
    id it names and gets a new one at epoch 0; a known one naming another producer id is fenced."""
    shard, log = fresh()
    first = init(shard, log, (4242, 7))
    assert first.error_code == 0 and first.producer_id != 4242 and first.producer_epoch == 0
    assert code(shard.init_producer_id("tx", 60_000, (4242, 0), "i", 1)) == ec.PRODUCER_FENCED


def test_a_fence_forgets_the_last_epoch():
    """Kafka's prepareFenceProducerEpoch (TransactionCoordinatorTest shouldUseLastEpochToFenceWhenEpochsAreExhausted
    checks the fence's lastProducerEpoch = -1): once a new instance fenced the open transaction, the old instance's
    retry of its own earlier bump is fenced."""
    shard, log = fresh()
    pid = init(shard, log).producer_id
    assert answer(init(shard, log, (pid, 0))) == (0, pid, 1)
    log.write(shard, shard.add_partitions("tx", pid, 1, [("t", 0)], "a", 1))
    assert code(log.write(shard, shard.init_producer_id("tx", 60_000, None, "i2", 2))) == ec.CONCURRENT_TRANSACTIONS
    assert shard.txns["tx"].last_producer_epoch == -1
    log.write(shard, shard.markers_written("tx", pid, 2, 3))
    assert code(shard.init_producer_id("tx", 60_000, (pid, 0), "i", 4)) == ec.PRODUCER_FENCED


def test_a_retry_spanning_a_coordinator_move_is_fenced_as_in_kafka():
    """Mirrors Kafka's TransactionCoordinatorTest testInitProducerIdWithNoLastProducerData: the last epoch is not in
    TransactionLogValue (Kafka loads lastProducerEpoch as -1), so a coordinator that loaded the partition fences the
    retry; the producer named by its current epoch still goes on."""
    shard, log = fresh()
    pid = init(shard, log).producer_id
    assert answer(init(shard, log, (pid, 0))) == (0, pid, 1)
    moved = log.load()
    assert moved.txns["tx"].last_producer_epoch == -1
    assert code(moved.init_producer_id("tx", 60_000, (pid, 0), "i", 1)) == ec.PRODUCER_FENCED
    assert answer(moved.init_producer_id("tx", 60_000, (pid, 1), "i", 1).replies[0].body) == (0, pid, 2)


def test_a_producer_id_without_an_epoch_or_the_reverse_is_an_invalid_request():
    """Mirrors Kafka's KafkaApisTest rejectInitProducerIdWhenIdButNotEpochProvided and
    rejectInitProducerIdWhenEpochButNotIdProvided; (-1, -1) names no producer."""
    shard, log = fresh()
    assert code(shard.init_producer_id("tx", 60_000, (1000, -1), "i", 0)) == ec.INVALID_REQUEST
    assert code(shard.init_producer_id("tx", 60_000, (-1, 0), "i", 0)) == ec.INVALID_REQUEST
    assert "tx" not in shard.txns
    assert answer(init(shard, log, (-1, -1)))[0::2] == (0, 0)
