"""Follower fetching (KIP-392) on real sockets, in-process: one controller and three brokers, each in its own rack
(``broker.rack=rack-<id>``) with ``replica.selector.class`` set to Kafka's rack-aware selector, a topic of three
replicas. Mirrors Kafka's ``FetchFromFollowerIntegrationTest`` (``testFollowerCompleteDelayedFetchesOnReplication``,
``testFetchFromLeaderWhilePreferredReadReplicaIsUnavailable``) and ``ReplicaManagerTest``'s
``testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined`` and ``testFetchFollowerNotAllowedForOlderClients``.

No assertion here times anything: an answer that should come at once is asked with a MaxWaitMs far longer than the
request's own timeout, so a parked answer fails the request instead of passing slowly."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.config import RACK_AWARE_SELECTOR
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection
from tests.server.test_partitions import _values
from tests.server.test_replication import Cluster, _until

F = w.FetchRequest
TOPIC = "racked"
LONG_WAIT_MS = 60_000  # beyond every request timeout below
REQUEST_TIMEOUT_S = 10.0


def _racked(b: int) -> str:
    return f"broker.rack=rack-{b}\nreplica.selector.class={RACK_AWARE_SELECTOR}\n"


def _fetch(topic_id, offset: int, *, rack: str, max_wait_ms=0, min_bytes=1):
    return F(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=1 << 20, isolation_level=0,
             session_id=0, session_epoch=-1, topics=[F.FetchTopic(topic=TOPIC, topic_id=topic_id, partitions=[
                 F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1,
                                  log_start_offset=-1, partition_max_bytes=1 << 20)])],
             forgotten_topics_data=[], rack_id=rack)


async def _ask(port: int, body, version: int):
    conn = await KafkaConnection.open("127.0.0.1", port)
    try:
        return await asyncio.wait_for(conn.request(body, version), REQUEST_TIMEOUT_S)
    finally:
        await conn.close()


async def _partition(port: int, body, version: int = 18):
    return (await _ask(port, body, version)).responses[0].partitions[0]


def _in_sync(cluster: Cluster, leader: int, end: int) -> bool:
    """Every follower's fetch has reached ``end`` as the leader saw it (so it may be sent consumers)."""
    hp = cluster.nodes[leader].replicas.get(TOPIC, 0)
    return hp is not None and all(f.end_offset >= end for f in hp.state.followers.values())


def _follower_hw(cluster: Cluster, follower: int) -> int:
    return cluster.nodes[follower].replicas.get(TOPIC, 0).log.high_watermark()


def test_a_consumer_in_a_followers_rack_is_sent_there_and_the_follower_serves_it(tmp_path):
    async def run():
        cluster = Cluster(tmp_path, broker_props=_racked)
        await cluster.start()
        try:
            await cluster.create_topic(TOPIC)
            assert (await cluster.produce_to_leader(TOPIC, [b"a", b"b", b"c"])).error_code == ec.NONE
            reg = cluster.partition(TOPIC, 0)
            leader, follower, other = reg.leader, *[b for b in reg.replicas if b != reg.leader]
            topic_id = cluster.controller.metadata.image.topic(TOPIC).id
            await _until("followers caught up", lambda: _in_sync(cluster, leader, 3))

            # the leader names the follower in the client's rack, at once, with no records and its own offsets
            # (MinBytes far out of reach and MaxWaitMs beyond the request's timeout: a parked answer fails here)
            pd = await _partition(cluster.port(leader), _fetch(topic_id, 0, rack=f"rack-{follower}",
                                                               max_wait_ms=LONG_WAIT_MS, min_bytes=1 << 20))
            assert (pd.error_code, pd.preferred_read_replica, pd.high_watermark, pd.log_start_offset) \
                == (ec.NONE, follower, 3, 0)
            assert _values(pd.records) == []
            pd = await _partition(cluster.port(leader), _fetch(topic_id, 0, rack=f"rack-{other}"))
            assert pd.preferred_read_replica == other
            # the leader's own rack, a rack no replica is in, no rack: read here
            for rack in (f"rack-{leader}", "rack-nowhere", ""):
                pd = await _partition(cluster.port(leader), _fetch(topic_id, 0, rack=rack))
                assert (pd.preferred_read_replica, _values(pd.records)) == (-1, [b"a", b"b", b"c"]), rack

            # the follower serves the consumer up to its high watermark (learnt on its next fetch), and never
            # redirects it
            await _until("the follower's high watermark", lambda: _follower_hw(cluster, follower) == 3)
            pd = await _partition(cluster.port(follower), _fetch(topic_id, 0, rack=f"rack-{follower}"))
            assert (pd.error_code, pd.preferred_read_replica, _values(pd.records)) == (ec.NONE, -1, [b"a", b"b", b"c"])
            # beyond its log end: OFFSET_OUT_OF_RANGE, as on a leader
            pd = await _partition(cluster.port(follower), _fetch(topic_id, 9, rack=f"rack-{follower}"))
            assert pd.error_code == ec.OFFSET_OUT_OF_RANGE

            # a client older than v11 may not read a follower; v11 may (testFetchFollowerNotAllowedForOlderClients)
            old = _fetch(topic_id, 0, rack="")
            old.topics[0].topic_id = None
            pd = await _partition(cluster.port(follower), old, 10)
            assert pd.error_code == ec.NOT_LEADER_OR_FOLLOWER
            pd = await _partition(cluster.port(follower), old, 11)
            assert (pd.error_code, _values(pd.records)) == (ec.NONE, [b"a", b"b", b"c"])

            # ListOffsets stays the leader's (a consumer's, replica id -1)
            L = w.ListOffsetsRequest
            lo = await _ask(cluster.port(follower), L(replica_id=-1, isolation_level=0, timeout_ms=1000, topics=[
                L.ListOffsetsTopic(name=TOPIC, partitions=[L.ListOffsetsPartition(partition_index=0,
                                                                                  timestamp=-1)])]), 9)
            assert lo.topics[0].partitions[0].error_code == ec.NOT_LEADER_OR_FOLLOWER
        finally:
            await cluster.stop()

    asyncio.run(run())


def test_a_consumer_parked_on_a_follower_is_answered_when_replication_moves_its_high_watermark(tmp_path):
    """``testFollowerCompleteDelayedFetchesOnReplication``: a fetch at the follower's end waits; the next produce,
    once replicated and committed, answers it long before its MaxWaitMs."""

    async def run():
        cluster = Cluster(tmp_path, broker_props=_racked)
        await cluster.start()
        try:
            await cluster.create_topic(TOPIC)
            assert (await cluster.produce_to_leader(TOPIC, [b"first"])).error_code == ec.NONE
            reg = cluster.partition(TOPIC, 0)
            follower = next(b for b in reg.replicas if b != reg.leader)
            topic_id = cluster.controller.metadata.image.topic(TOPIC).id
            await _until("the follower's high watermark", lambda: _follower_hw(cluster, follower) == 1)
            parked = asyncio.ensure_future(_partition(cluster.port(follower), _fetch(
                topic_id, 1, rack=f"rack-{follower}", max_wait_ms=LONG_WAIT_MS)))
            await _until("the fetch parked on the follower",
                         lambda: len(cluster.nodes[follower].partition_apis.purgatory.parked) == 1)
            assert not parked.done()
            assert (await cluster.produce_to_leader(TOPIC, [b"second"])).error_code == ec.NONE
            pd = await parked
            assert (pd.error_code, pd.high_watermark, _values(pd.records)) == (ec.NONE, 2, [b"second"])
        finally:
            await cluster.stop()

    asyncio.run(run())


def test_a_preferred_replica_that_stops_is_no_longer_named(tmp_path):
    """``testFetchFromLeaderWhilePreferredReadReplicaIsUnavailable``: once the follower is fenced (out of the
    leader's image endpoints), the consumer in its rack reads from the leader."""

    async def run():
        cluster = Cluster(tmp_path, broker_props=_racked)
        await cluster.start()
        try:
            await cluster.create_topic(TOPIC)
            assert (await cluster.produce_to_leader(TOPIC, [b"x"] * 10)).error_code == ec.NONE
            reg = cluster.partition(TOPIC, 0)
            leader, follower = reg.leader, next(b for b in reg.replicas if b != reg.leader)
            topic_id = cluster.controller.metadata.image.topic(TOPIC).id
            await _until("followers caught up", lambda: _in_sync(cluster, leader, 10))
            pd = await _partition(cluster.port(leader), _fetch(topic_id, 0, rack=f"rack-{follower}"))
            assert pd.preferred_read_replica == follower
            await cluster.nodes.pop(follower).shutdown()
            await _until("the follower fenced in the leader's image",
                         lambda: cluster.nodes[leader].metadata.image.brokers[follower].fenced)
            pd = await _partition(cluster.port(leader), _fetch(topic_id, 0, rack=f"rack-{follower}"))
            assert (pd.preferred_read_replica, len(_values(pd.records))) == (-1, 10)
        finally:
            await cluster.stop()

    asyncio.run(run())
