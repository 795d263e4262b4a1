"""Fetch sessions (KIP-227) on a running cluster, in-process on real sockets and files (one controller, three
brokers): a consumer's full Fetch creates a session and incremental ones list only what changed; each session
error as Kafka answers it; replica fetchers keep privileged sessions with their leaders and still replicate."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection
from tests.server.test_partitions import _batch, _produce
from tests.server.test_replication import Cluster, _until

F = w.FetchRequest
PARTS = 12


def _fetch(parts: dict, *, session_id=0, epoch=0, forgotten=(), max_wait_ms=50, by_name=False):
    """A consumer Fetch: ``parts`` maps (topic id or name, partition) to the fetch offset."""
    topics: dict = {}
    for (topic, index), offset in parts.items():
        topics.setdefault(topic, []).append(F.FetchPartition(
            partition=index, current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1, log_start_offset=-1,
            partition_max_bytes=1 << 20))
    gone: dict = {}
    for topic, index in forgotten:
        gone.setdefault(topic, []).append(index)

    def topic_fields(topic):
        return {"topic": topic} if by_name else {"topic_id": topic}
    return F(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 22, isolation_level=0,
             session_id=session_id, session_epoch=epoch,
             topics=[F.FetchTopic(**topic_fields(t), partitions=ps) for t, ps in topics.items()],
             forgotten_topics_data=[F.ForgottenTopic(**topic_fields(t), partitions=ps) for t, ps in gone.items()],
             rack_id="")


def _listed(resp) -> dict:
    return {p.partition_index: p for t in resp.responses for p in t.partitions}


def test_consumer_sessions_on_a_broker(tmp_path):
    """A leader of every partition (replication factor 1, all on one broker): the full request lists all twelve
    partitions and opens a session; incremental ones list what changed only, take forgotten partitions out and
    new offsets in; a wrong epoch, an unknown session, a switch between names and ids are refused as Kafka does."""
    cluster = Cluster(tmp_path, brokers=(1,))

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("s", partitions=PARTS, replication_factor=1)
            await _until("hosted", lambda: all(cluster.nodes[1].replicas.get("s", i) for i in range(PARTS)))
            tid = cluster.controller.metadata.image.topic("s").id
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                r = await conn.request(_produce("s", {i: _batch([f"v{i}".encode()]) for i in range(PARTS)}), 9)
                assert all(p.error_code == 0 for p in r.responses[0].partition_responses)
                offsets = {(tid, i): 0 for i in range(PARTS)}
                full = await conn.request(_fetch(offsets), 15)
                assert full.error_code == 0 and full.session_id != 0
                assert sorted(_listed(full)) == list(range(PARTS))
                sid = full.session_id
                # incremental, the offsets moved past the records: nothing changed, so nothing is listed
                moved = {k: 1 for k in offsets}
                inc = await conn.request(_fetch(moved, session_id=sid, epoch=1), 15)
                assert (inc.error_code, inc.session_id, _listed(inc)) == (0, sid, {})
                # one new record on partition 3: only partition 3 is listed, naming no partition at all
                await conn.request(_produce("s", {3: _batch([b"news"])}), 9)
                inc = await conn.request(_fetch({}, session_id=sid, epoch=2), 15)
                assert list(_listed(inc)) == [3] and _listed(inc)[3].high_watermark == 2
                # forget partitions 0-5; a partition read from offset 0 again returns its records
                inc = await conn.request(_fetch({(tid, 7): 0}, session_id=sid, epoch=3,
                                                forgotten=[(tid, i) for i in range(6)]), 15)
                assert list(_listed(inc)) == [7] and inc.responses[0].partitions[0].records
                sessions = cluster.nodes[1].partition_apis.sessions
                assert sessions.get(sid).epoch == 4 and len(sessions.get(sid).partitions) == PARTS - 6
                # Kafka's session errors: a stale epoch, an unknown id, a v12 request on a topic-id session
                for body, version, error in ((_fetch({}, session_id=sid, epoch=2), 15, ec.INVALID_FETCH_SESSION_EPOCH),
                                             (_fetch({}, session_id=sid + 1, epoch=1), 15,
                                              ec.FETCH_SESSION_ID_NOT_FOUND),
                                             (_fetch({}, session_id=sid, epoch=4, by_name=True), 12,
                                              ec.FETCH_SESSION_TOPIC_ID_ERROR)):
                    bad = await conn.request(body, version)
                    assert (bad.error_code, bad.session_id, bad.responses) == (error, 0, []), (version, bad)
                # a full request with epoch -1 closes the session and answers without one
                last = await conn.request(_fetch(offsets, session_id=sid, epoch=-1), 15)
                assert last.session_id == 0 and len(_listed(last)) == PARTS and sessions.get(sid) is None
                # by name (v12): a session keyed by topic names
                named = {("s", i): 0 for i in range(PARTS)}
                full = await conn.request(_fetch(named, by_name=True), 12)
                assert full.session_id != 0 and len(_listed(full)) == PARTS
                past = {k: 2 if k[1] == 3 else 1 for k in named}
                inc = await conn.request(_fetch(past, session_id=full.session_id, epoch=1, by_name=True), 12)
                assert (inc.error_code, _listed(inc)) == (0, {})
            finally:
                await conn.close()
        finally:
            await cluster.stop()

    asyncio.run(main())


def test_replica_fetchers_keep_sessions_and_replicate(tmp_path):
    """Three brokers, a topic of twelve partitions on all of them: each follower keeps one privileged session with
    each leader; its requests become incremental; records produced later still reach every replica."""
    cluster = Cluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("r", partitions=PARTS, replication_factor=3)
            await _until("hosted", lambda: all(n.replicas.get("r", i) for n in cluster.nodes.values()
                                               for i in range(PARTS)))
            leaders = {i: cluster.partition("r", i).leader for i in range(PARTS)}
            for leader in set(leaders.values()):
                conn = await KafkaConnection.open("127.0.0.1", cluster.port(leader))
                try:
                    mine = [i for i, b in leaders.items() if b == leader]
                    r = await conn.request(_produce("r", {i: _batch([f"x{i}".encode()]) for i in mine}), 9)
                    assert all(p.error_code == 0 for p in r.responses[0].partition_responses), r
                finally:
                    await conn.close()

            def replicated():
                return all(n.replicas.get("r", i).log.end_offset() == 1 for n in cluster.nodes.values()
                           for i in range(PARTS))
            await _until("replicated", replicated)

            def incremental(b):
                return cluster.nodes[b].metrics.value("fetch_session_requests_total", context="IncrementalContext")
            await _until("incremental follower fetches", lambda: all(incremental(b) > 0 for b in set(leaders.values())))
            for b in set(leaders.values()):
                cache = cluster.nodes[b].partition_apis.sessions
                sessions = [s for shard in cache.shards for s in shard.sessions.values()]
                assert sessions and all(s.privileged for s in sessions)
                assert len(sessions) == 2  # one per follower broker fetching from this leader
        finally:
            await cluster.stop()

    asyncio.run(main())
