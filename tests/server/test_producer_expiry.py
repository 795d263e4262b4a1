"""producer.id.expiration.ms on a KRaft broker (in-process, real sockets and files): a producer idle that long
without an open transaction is forgotten, as Kafka's broker forgets it — DescribeProducers no longer lists it and its
next batch is taken as from a producer never seen — while one with an open transaction stays whatever its age."""

from __future__ import annotations

import asyncio
import time

from kraftwire import error_codes as ec
from server.test_describe_producers import _ask, _batch, _produce, _table
from server.test_kraft_node import Combined, _create
from server.test_txn_partitions import _pids

HOUR_MS = 3_600_000


async def _topic_led(node, conn) -> None:
    """Create topic ``t`` (one partition) and wait, bounded, until this node leads it."""
    assert (await conn.request(_create("t", partitions=1), 7)).topics[0].error_code == ec.NONE
    for _ in range(250):
        hp = node.replicas.get("t", 0)
        if hp is not None and hp.state.role == "leader":
            return
        await asyncio.sleep(0.02)


def test_idle_producers_are_forgotten_but_not_those_in_a_transaction(tmp_path):
    c = Combined(tmp_path, extra=f"transaction.partition.verification.enable=false\nproducer.id.expiration.ms={HOUR_MS}\n")

    async def scenario(node, conn):
        await _topic_led(node, conn)
        idem, txn = await _pids(conn, 2)
        now = int(time.time() * 1000)
        old = now - 2 * HOUR_MS
        for records, tid in ((_batch([b"a", b"b"], pid=idem, ts=old), None),
                             (_batch([b"x"], pid=txn, transactional=True, ts=old), "app")):
            r = await conn.request(_produce("t", 0, records, tid), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.NONE
        # before the expiry a gap in the sequence is refused
        r = await conn.request(_produce("t", 0, _batch([b"gap"], pid=idem, seq=7, ts=now)), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.OUT_OF_ORDER_SEQUENCE_NUMBER
        listed = lambda resp: sorted(s[0] for s in _table(resp)[("t", 0)][2])  # noqa: E731
        assert listed(await conn.request(_ask(("t", [0])), 0)) == sorted([idem, txn])

        node.replicas.expire_producers(now)  # what the check every ...check.interval.ms does
        assert listed(await conn.request(_ask(("t", [0])), 0)) == [txn], "the open transaction keeps txn"
        # forgotten: its next batch may start anywhere, as from a producer never seen
        r = await conn.request(_produce("t", 0, _batch([b"after"], pid=idem, seq=7, ts=now)), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.NONE
        assert listed(await conn.request(_ask(("t", [0])), 0)) == sorted([idem, txn])
        # a recent producer is not expired
        node.replicas.expire_producers(now + HOUR_MS // 2)
        assert idem in listed(await conn.request(_ask(("t", [0])), 0))

    c.run(scenario)


def test_the_periodic_check_expires_an_idle_producer_in_a_running_broker(tmp_path):
    """The broker's own check, every ``producer.id.expiration.check.interval.ms``, forgets an idempotent producer
    idle for ``producer.id.expiration.ms`` (mirrors Kafka's ProducerIdExpirationTest
    testProducerIdExpirationWithNoTransactions). The check compares the producers' batch timestamps (wall clock)
    with the wall clock, as Kafka's ``removeExpiredProducers(time.milliseconds)`` does."""
    c = Combined(tmp_path, extra="transaction.partition.verification.enable=false\n"
                                 "producer.id.expiration.ms=1500\nproducer.id.expiration.check.interval.ms=100\n")

    async def scenario(node, conn):
        await _topic_led(node, conn)
        (idem,) = await _pids(conn, 1)
        listed = lambda resp: [s[0] for s in _table(resp)[("t", 0)][2]]  # noqa: E731
        r = await conn.request(_produce("t", 0, _batch([b"a"], pid=idem, ts=int(time.time() * 1000))), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.NONE
        assert listed(await conn.request(_ask(("t", [0])), 0)) == [idem]
        for _ in range(400):  # bounded (20 s): the broker's beat runs about once a second
            if not listed(await conn.request(_ask(("t", [0])), 0)):
                break
            await asyncio.sleep(0.05)
        assert listed(await conn.request(_ask(("t", [0])), 0)) == [], "the idle producer was never expired"
        # sent again, the producer is back (its next batch taken as from a producer never seen)
        r = await conn.request(_produce("t", 0, _batch([b"b"], pid=idem, seq=1, ts=int(time.time() * 1000))), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.NONE
        assert listed(await conn.request(_ask(("t", [0])), 0)) == [idem]

    c.run(scenario)
