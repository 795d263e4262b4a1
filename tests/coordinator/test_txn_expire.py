"""Kafka's removal of expired transactional ids in the pure transaction coordinator: an id idle (Empty or Complete*)
for ``transactional.id.expiration.ms`` gets a tombstone and is forgotten; an open transaction is never removed, and a
shard loading the tombstone forgets the id too."""

from __future__ import annotations

from kraftwire.coordinator.txn.coordinator import TxnShard

DAY = 86_400_000


def _apply(shard: TxnShard, result, log: list) -> None:
    log.extend(result.records)


def test_idle_ids_expire_open_ones_do_not():
    shard, log = TxnShard(0), []
    _apply(shard, shard.init_producer_id("idle", 60_000, None, "t", 0), log)
    _apply(shard, shard.init_producer_id("busy", 60_000, None, "t", 0), log)
    busy = shard.txns["busy"]
    _apply(shard, shard.add_partitions("busy", busy.producer_id, busy.producer_epoch, [("t", 0)], "t", 0), log)
    assert not shard.expire(7 * DAY - 1, 7 * DAY).records  # not idle long enough
    result = shard.expire(7 * DAY, 7 * DAY)
    assert [value for _key, value in result.records] == [None] and set(shard.txns) == {"busy"}
    _apply(shard, result, log)
    loaded = TxnShard(0)
    for key, value in log:
        loaded.replay(key, value)
    assert set(loaded.txns) == {"busy"}
    again = shard.init_producer_id("idle", 60_000, None, "t", 8 * DAY)  # the id starts over with a new producer
    assert again.replies[0].body.producer_epoch == 0
