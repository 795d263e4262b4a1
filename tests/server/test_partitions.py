"""A KRaft broker hosts the topic partitions its image assigns it (in-process, real sockets and files): Produce with
acks 0/1/-1, consumer Fetch with long polling, ListOffsets, OffsetForLeaderEpoch and idempotent producers, each
with Kafka's error codes for bad input; Kafka's files in the log directory; a restart serves the same data and a
deleted topic's directories go."""

from __future__ import annotations

import asyncio
import os
import uuid

from kraftwire import error_codes as ec
from kraftwire.log.checkpoint import parse_offset_checkpoint
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.server.edge.client import KafkaConnection
from tests.server.test_kraft_node import Combined, _create, _online

P = w.ProduceRequest
F = w.FetchRequest
L = w.ListOffsetsRequest
O = w.OffsetForLeaderEpochRequest


def _batch(values, *, pid=-1, epoch=-1, seq=-1, ts=1_700_000_000_000) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq)
    for i, v in enumerate(values):
        b.append(None if v is None else f"k{i}".encode(), v, timestamp=ts + i)
    return b.build()


def _produce(topic: str, parts: dict[int, bytes | None], acks: int = -1, timeout_ms: int = 5000):
    return P(acks=acks, timeout_ms=timeout_ms, topic_data=[P.TopicProduceData(name=topic, partition_data=[
        P.PartitionProduceData(index=i, records=r) for i, r in parts.items()])])


def _fetch(topic_id, parts: dict[int, int], *, max_wait_ms=0, min_bytes=1, epoch=-1):
    return F(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=1 << 20, isolation_level=0,
             session_id=0, session_epoch=-1, topics=[F.FetchTopic(topic_id=topic_id, partitions=[
                 F.FetchPartition(partition=i, current_leader_epoch=epoch, fetch_offset=off, last_fetched_epoch=-1,
                                  log_start_offset=-1, partition_max_bytes=1 << 20) for i, off in parts.items()])],
             forgotten_topics_data=[], rack_id="")


def _values(records) -> list[bytes]:
    return [r.value for b in read_batches(bytes(records or b"")) if not b.is_control for r in b]


async def _hosted(node, topic: str, n: int) -> None:
    for _ in range(250):
        if all(node.replicas.get(topic, i) is not None and node.replicas.get(topic, i).state.role == "leader"
               for i in range(n)):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{topic} not hosted: {node.replicas.partitions}")


def test_produce_fetch_list_offsets_and_restart(tmp_path):
    c = Combined(tmp_path)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                created = await conn.request(_create("orders", partitions=3), 7)
                tid = created.topics[0].topic_id
                await _hosted(node, "orders", 3)
                # acks=-1 and acks=1 answer with the base offsets; acks=0 gets no answer at all
                r = await conn.request(_produce("orders", {0: _batch([b"a", b"b", b"c"]), 1: _batch([b"x"])}), 9)
                assert [(p.index, p.error_code, p.base_offset, p.log_start_offset)
                        for p in r.responses[0].partition_responses] == [(0, 0, 0, 0), (1, 0, 0, 0)]
                r = await conn.request(_produce("orders", {0: _batch([b"d"])}, acks=1), 9)
                assert r.responses[0].partition_responses[0].base_offset == 3
                # bad input: nothing appended, Kafka's codes
                corrupt = bytearray(_batch([b"e"]))
                corrupt[-1] ^= 0xFF
                r = await conn.request(_produce("orders", {0: bytes(corrupt), 2: None, 7: _batch([b"z"])}), 9)
                assert [(p.index, p.error_code) for p in r.responses[0].partition_responses] == [
                    (0, ec.CORRUPT_MESSAGE), (2, ec.CORRUPT_MESSAGE), (7, ec.UNKNOWN_TOPIC_OR_PARTITION)]
                r = await conn.request(_produce("orders", {0: _batch([b"e"])}, acks=2), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.INVALID_REQUIRED_ACKS
                r = await conn.request(_produce("__cluster_metadata", {0: _batch([b"e"])}), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.UNKNOWN_TOPIC_OR_PARTITION
                assert node.replicas.get("orders", 0).log.end_offset() == 4

                # fetch by topic id (v13+) and by name (v12)
                f = await conn.request(_fetch(tid, {0: 0, 1: 0, 2: 0}), 13)
                parts = f.responses[0].partitions
                assert [_values(p.records) for p in parts] == [[b"a", b"b", b"c", b"d"], [b"x"], []]
                assert [(p.high_watermark, p.last_stable_offset, p.log_start_offset) for p in parts] == [
                    (4, 4, 0), (1, 1, 0), (0, 0, 0)]
                assert f.session_id == 0
                by_name = _fetch(tid, {1: 0})
                by_name.topics[0].topic = "orders"
                f = await conn.request(by_name, 12)
                assert _values(f.responses[0].partitions[0].records) == [b"x"]
                f = await conn.request(_fetch(tid, {0: 99}), 13)
                assert f.responses[0].partitions[0].error_code == ec.OFFSET_OUT_OF_RANGE
                f = await conn.request(_fetch(uuid.uuid4(), {0: 0}), 13)
                assert f.responses[0].partitions[0].error_code == ec.UNKNOWN_TOPIC_ID
                epoch = node.replicas.get("orders", 0).state.leader_epoch
                f = await conn.request(_fetch(tid, {0: 0}, epoch=epoch + 1), 13)
                assert f.responses[0].partitions[0].error_code == ec.UNKNOWN_LEADER_EPOCH

                # long polling: a parked fetch is answered when a produce moves the high watermark
                waiting = asyncio.ensure_future(conn.request(_fetch(tid, {2: 0}, max_wait_ms=5000), 13))
                await asyncio.sleep(0.2)
                assert not waiting.done()
                other = await KafkaConnection.open("127.0.0.1", c.bport)
                try:
                    await other.request(_produce("orders", {2: _batch([b"late"])}), 9)
                finally:
                    await other.close()
                f = await asyncio.wait_for(waiting, 3)
                assert _values(f.responses[0].partitions[0].records) == [b"late"]
                # and one that nothing wakes ends after MaxWaitMs, empty
                f = await conn.request(_fetch(tid, {1: 1}, max_wait_ms=100), 13)
                assert f.responses[0].partitions[0].records in (b"", None)

                # ListOffsets: earliest, latest, by timestamp, max timestamp (one request each: a partition named
                # twice in one request is refused, as Kafka refuses it)
                got = []
                for t in (-2, -1, 1_700_000_000_001, -3):
                    lo = L(replica_id=-1, isolation_level=0, topics=[L.ListOffsetsTopic(name="orders", partitions=[
                        L.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=t)])])
                    got += (await conn.request(lo, 8)).topics[0].partitions
                assert [(p.error_code, p.offset) for p in got] == [(0, 0), (0, 4), (0, 1), (0, 2)]
                # OffsetForLeaderEpoch: the end of the leader's epoch is the log end; an unknown epoch is undefined
                ofl = O(replica_id=-1, topics=[O.OffsetForLeaderTopic(topic="orders", partitions=[
                    O.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=e)
                    for e in (epoch, epoch + 5)])])
                got = await conn.request(ofl, 4)
                assert [(p.error_code, p.leader_epoch, p.end_offset) for p in got.topics[0].partitions] == [
                    (0, epoch, 4), (0, -1, -1)]
            finally:
                await conn.close()
        finally:
            await node.shutdown()
        return tid

    tid = asyncio.run(main())
    # Kafka's files: one directory per partition, the offset checkpoints at the log directory's root
    names = sorted(os.listdir(c.logs))
    assert {"orders-0", "orders-1", "orders-2", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
            "replication-offset-checkpoint"} <= set(names)
    assert {"00000000000000000000.log", "00000000000000000000.index", "leader-epoch-checkpoint",
            "partition.metadata"} <= set(os.listdir(c.logs / "orders-0"))
    hws = parse_offset_checkpoint((c.logs / "replication-offset-checkpoint").read_text())
    assert {k: v for k, v in hws.items() if k[0] == "orders"} == {("orders", 0): 4, ("orders", 1): 1,
                                                                  ("orders", 2): 1}

    async def restart():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            await _hosted(node, "orders", 3)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                f = await conn.request(_fetch(tid, {0: 0, 2: 0}), 13)
                assert [_values(p.records) for p in f.responses[0].partitions] == [
                    [b"a", b"b", b"c", b"d"], [b"late"]]
                r = await conn.request(_produce("orders", {0: _batch([b"after"])}), 9)
                assert r.responses[0].partition_responses[0].base_offset == 4
                d = await conn.request(w.DeleteTopicsRequest(topic_names=["orders"], timeout_ms=5000), 5)
                assert d.responses[0].error_code == ec.NONE
                for _ in range(250):
                    if not any(n.startswith("orders-") for n in os.listdir(c.logs)):
                        break
                    await asyncio.sleep(0.02)
                assert not any(n.startswith("orders-") for n in os.listdir(c.logs)), os.listdir(c.logs)
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(restart())
    points = parse_offset_checkpoint((c.logs / "recovery-point-offset-checkpoint").read_text())
    assert not any(k[0] == "orders" for k in points)


def test_idempotent_producer_ids_retries_and_sequence_errors(tmp_path):
    c = Combined(tmp_path)

    async def scenario(node, conn):
        await conn.request(_create("idem", partitions=1), 7)
        await _hosted(node, "idem", 1)
        I = w.InitProducerIdRequest
        first = await conn.request(I(transactional_id=None, transaction_timeout_ms=60000, producer_id=-1,
                                     producer_epoch=-1), 4)
        second = await conn.request(I(transactional_id=None, transaction_timeout_ms=60000, producer_id=-1,
                                      producer_epoch=-1), 4)
        assert first.error_code == second.error_code == ec.NONE
        assert second.producer_id == first.producer_id + 1 and first.producer_epoch == 0
        # the block came from the active controller's ProducerIdsRecord
        assert node.metadata.image.producer_ids.next_producer_id >= first.producer_id + 1
        # naming its id and epoch (KIP-360) an idempotent producer gets a new id, as from Kafka (conformance, #36)
        bumped = await conn.request(I(transactional_id=None, transaction_timeout_ms=60000,
                                      producer_id=first.producer_id, producer_epoch=0), 4)
        assert (bumped.producer_id, bumped.producer_epoch) == (second.producer_id + 1, 0)
        txn = await conn.request(I(transactional_id="tx", transaction_timeout_ms=60000, producer_id=-1,
                                   producer_epoch=-1), 4)
        assert txn.error_code == ec.NOT_COORDINATOR  # no __transaction_state yet: it coordinates none

        pid = first.producer_id
        b0 = _batch([b"0", b"1"], pid=pid, epoch=0, seq=0)
        r = await conn.request(_produce("idem", {0: b0}), 9)
        assert r.responses[0].partition_responses[0].base_offset == 0
        r = await conn.request(_produce("idem", {0: b0}), 9)  # a retry: the original offsets, no append
        assert (r.responses[0].partition_responses[0].error_code,
                r.responses[0].partition_responses[0].base_offset) == (0, 0)
        r = await conn.request(_produce("idem", {0: _batch([b"x"], pid=pid, epoch=0, seq=5)}), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.OUT_OF_ORDER_SEQUENCE_NUMBER
        r = await conn.request(_produce("idem", {0: _batch([b"2"], pid=pid, epoch=0, seq=2)}), 9)
        assert r.responses[0].partition_responses[0].base_offset == 2
        assert node.replicas.get("idem", 0).log.end_offset() == 3

    c.run(scenario)

    async def restart():
        """The producer state is folded from the log again: a retry after a restart is still a duplicate."""
        node = c.node()
        await node.start()
        try:
            await _online(node)
            await _hosted(node, "idem", 1)
            hp = node.replicas.get("idem", 0)
            [pid] = list(hp.producer_table())
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                r = await conn.request(_produce("idem", {0: _batch([b"2"], pid=pid, epoch=0, seq=2)}), 9)
                assert r.responses[0].partition_responses[0].base_offset == 2
                assert hp.log.end_offset() == 3
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(restart())


def test_flush_messages_and_flush_ms_fsync_a_partition_log(tmp_path):
    """Kafka's durability knobs: by default nothing is fsynced per write; flush.messages=N fsyncs once N records are
    unflushed; flush.ms fsyncs on the replica manager's beat once the last flush is that old; the broker's
    log.flush.interval.messages is the default of topics that set neither."""
    c = Combined(tmp_path, extra="log.flush.interval.messages=1000000\n")

    async def scenario(node, conn):
        for name, configs in (("plain", []), ("every2", [("flush.messages", "2")]),
                              ("timed", [("flush.ms", "50")])):
            body = _create(name, partitions=1)
            body.topics[0].configs = [w.CreateTopicsRequest.CreatableTopicConfig(name=k, value=v)
                                      for k, v in configs]
            created = await conn.request(body, 7)
            assert created.topics[0].error_code == ec.NONE
            await _hosted(node, name, 1)
            r = await conn.request(_produce(name, {0: _batch([b"one"])}, acks=1), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.NONE
        hp = {n: node.replicas.get(n, 0) for n in ("plain", "every2", "timed")}
        assert hp["plain"].flush_messages == 1_000_000 and hp["every2"].flush_messages == 2
        assert [hp[n].log.flushed_offset() for n in hp] == [0, 0, 0]  # one record each: nothing yet
        r = await conn.request(_produce("every2", {0: _batch([b"two"])}, acks=1), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.NONE
        assert hp["every2"].log.flushed_offset() == 2  # two unflushed records: fsynced with the append
        replicas = node.replicas
        replicas.beat(hp["timed"].flushed_at_ms + 10)
        assert hp["timed"].log.flushed_offset() == 0  # not 50 ms yet
        replicas.beat(hp["timed"].flushed_at_ms + 60)
        assert hp["timed"].log.flushed_offset() == 1 and hp["plain"].log.flushed_offset() == 0

    c.run(scenario)


def _pipelined(port: int, bodies: list, version: int) -> list:
    """Send every request on one socket before reading any answer; the answers, checked to come in order."""
    import socket

    from kraftwire.protocol.framing import decode_response, encode_request

    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(b"".join(bytes(chunk) for i, b in enumerate(bodies) for chunk in encode_request(b, version, i)))
        f = s.makefile("rb")
        out = []
        for i, b in enumerate(bodies):
            size = int.from_bytes(f.read(4), "big")
            cid, body = decode_response(f.read(size), b.API_KEY, version)
            assert cid == i, (cid, i)
            out.append(body)
        return out


def test_large_consumer_fetches_leave_as_file_regions_in_order_and_free_their_descriptors(tmp_path):
    """64 KiB or more of committed whole batches are answered as a segment file region with sendfile: the bytes are
    the log's, answers pipelined behind one leave in order, a fetch inside the uncommitted tail is read as before,
    and no duplicated descriptor outlives its answer (sent, or dropped with a closed connection)."""
    c = Combined(tmp_path)

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    async def scenario(node, conn):
        created = await conn.request(_create("big", partitions=1), 7)
        tid = created.topics[0].topic_id
        await _hosted(node, "big", 1)
        values = [bytes([i]) * 20_000 for i in range(40)]  # forty batches of one 20 kB record
        for v in values:
            r = await conn.request(_produce("big", {0: _batch([v])}, acks=1), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.NONE
        lg = node.replicas.get("big", 0).log
        on_disk = lg.read(0, 1 << 30).records
        before = open_fds()

        async def settled() -> None:  # the node closes its side of a closed connection a moment later
            for _ in range(100):
                if open_fds() == before:
                    return
                await asyncio.sleep(0.02)
            assert open_fds() == before, os.listdir("/proc/self/fd")
        apis = node.partition_apis
        # several answers in flight on one connection: the region ones and the small ones keep their order
        asks = [(0, 1 << 20), (0, 1000), (10, 1 << 20), (39, 1 << 20), (5, 100_000)]
        bodies = [F(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 24, isolation_level=0,
                    session_id=0, session_epoch=-1, topics=[F.FetchTopic(topic_id=tid, partitions=[
                        F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=o,
                                         last_fetched_epoch=-1, log_start_offset=-1,
                                         partition_max_bytes=m)])],
                    forgotten_topics_data=[], rack_id="") for o, m in asks]
        answers = await asyncio.to_thread(_pipelined, c.bport, bodies, 13)
        got = [_values(a.responses[0].partitions[0].records) for a in answers]
        assert got[0] == values and got[1] == values[:1] and got[2] == values[10:]
        assert got[3] == values[39:] and got[4][0] == values[5] and len(got[4]) <= 5
        assert bytes(answers[0].responses[0].partitions[0].records) == bytes(on_disk)
        assert apis.region_bytes >= len(on_disk)  # the first answer went out as a region
        await settled()
        # a connection closed with region answers queued drops them and their descriptors
        doomed = await KafkaConnection.open("127.0.0.1", c.bport)
        pending = [asyncio.ensure_future(doomed.request(_fetch(tid, {0: 0}), 13)) for _ in range(5)]
        await asyncio.sleep(0)
        await doomed.close()
        await asyncio.gather(*pending, return_exceptions=True)
        await settled()

    c.run(scenario)


def test_a_file_region_over_tls_is_read_and_encrypted(tmp_path):
    """On a TLS listener a region cannot go through sendfile: asyncio's fallback reads it and the TLS layer
    encrypts it, and the client gets the same bytes."""
    import ssl

    from harness.certs import CA

    ca = CA(str(tmp_path / "ca"))
    cert = ca.issue("broker")
    c = Combined(tmp_path / "n", extra=(
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:SSL\n"
        f"listener.name.plaintext.ssl.keystore.type=PEM\nlistener.name.plaintext.ssl.keystore.location="
        f"{cert.bundle_path}\n"))

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            tls = ssl.create_default_context(cafile=ca.path)
            conn = await KafkaConnection.open("localhost", c.bport, ssl_context=tls)
            try:
                created = await conn.request(_create("big", partitions=1), 7)
                tid = created.topics[0].topic_id
                await _hosted(node, "big", 1)
                values = [bytes([i]) * 30_000 for i in range(8)]
                for v in values:
                    r = await conn.request(_produce("big", {0: _batch([v])}, acks=1), 9)
                    assert r.responses[0].partition_responses[0].error_code == ec.NONE
                f = await conn.request(_fetch(tid, {0: 0}), 13)
                assert _values(f.responses[0].partitions[0].records) == values
                assert node.partition_apis.region_bytes > 0
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(asyncio.wait_for(main(), 60))  # a hang in the TLS path fails here instead of stalling CI


def test_producer_state_snapshots_spare_a_restart_the_log_scan(tmp_path):
    """A clean shutdown writes Kafka's ``<log end>.snapshot``; the next start folds only the batches after it (a
    retry of the last batch is still recognised, the next sequence still accepted); a damaged snapshot is ignored
    for a full fold; a truncation below a snapshot deletes it."""
    import kraftwire.server.runtime.hosted as replicas_module  # the fold of a hosted partition lives there

    c = Combined(tmp_path)
    scanned: list[tuple[int, int]] = []
    real = replicas_module.batches_between

    def counting(lg, start, end, isolation):
        scanned.append((start, end))
        return real(lg, start, end, isolation)

    replicas_module.batches_between = counting

    state = {}

    async def first(node, conn):
        await conn.request(_create("idem", partitions=1), 7)
        await _hosted(node, "idem", 1)
        I = w.InitProducerIdRequest
        got = await conn.request(I(transactional_id=None, transaction_timeout_ms=60000, producer_id=-1,
                                   producer_epoch=-1), 4)
        state["pid"] = pid = got.producer_id
        for seq in range(0, 40, 2):
            r = await conn.request(_produce("idem", {0: _batch([b"a", b"b"], pid=pid, epoch=0, seq=seq)}), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.NONE
        state["dir"] = node.replicas.get("idem", 0).log.directory

    async def again(node, conn):
        await _hosted(node, "idem", 1)
        pid = state["pid"]
        scanned.clear()
        retry = await conn.request(_produce("idem", {0: _batch([b"a", b"b"], pid=pid, epoch=0, seq=38)}), 9)
        assert (retry.responses[0].partition_responses[0].error_code,
                retry.responses[0].partition_responses[0].base_offset) == (ec.NONE, 38)
        state["scanned"] = list(scanned)
        nxt = await conn.request(_produce("idem", {0: _batch([b"c"], pid=pid, epoch=0, seq=40)}), 9)
        assert nxt.responses[0].partition_responses[0].base_offset == 40
        bad = await conn.request(_produce("idem", {0: _batch([b"d"], pid=pid, epoch=0, seq=45)}), 9)
        assert bad.responses[0].partition_responses[0].error_code == ec.OUT_OF_ORDER_SEQUENCE_NUMBER

    try:
        c.run(first)
        snaps = sorted(f for f in os.listdir(state["dir"]) if f.endswith(".snapshot"))
        assert snaps == ["00000000000000000040.snapshot"]
        c.run(again)
        assert state["scanned"] == [(40, 40)]  # nothing before the snapshot was read
        assert sorted(f for f in os.listdir(state["dir"]) if f.endswith(".snapshot")) == [
            "00000000000000000040.snapshot", "00000000000000000041.snapshot"]
        with open(os.path.join(state["dir"], "00000000000000000041.snapshot"), "r+b") as f:
            f.seek(8)
            f.write(b"\xff")  # damaged: the restart folds the whole log instead

        async def after_damage(node, conn):
            await _hosted(node, "idem", 1)
            scanned.clear()
            r = await conn.request(_produce("idem", {0: _batch([b"e"], pid=state["pid"], epoch=0, seq=41)}), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.NONE
            state["scanned"] = list(scanned)

        c.run(after_damage)
        assert state["scanned"] == [(40, 41)]  # the damaged snapshot is skipped for the older one
        lg_dir = state["dir"]
        from kraftwire.log.partition_log import LogDirCheckpoints, PartitionLog

        lg = PartitionLog(lg_dir, LogDirCheckpoints(os.path.dirname(lg_dir)), retention_bytes=-1, retention_ms=-1)
        lg.truncate_to(30)
        assert [f for f in os.listdir(lg_dir) if f.endswith(".snapshot")] == []
        lg.close()
    finally:
        replicas_module.batches_between = real


def test_an_io_error_takes_one_log_directory_offline_and_the_last_one_stops_the_broker(tmp_path):
    """Kafka's JBOD rule: an I/O error in a partition's log takes its log directory offline (its partitions answer
    KAFKA_STORAGE_ERROR, DescribeLogDirs reports it) while the other directory keeps serving; when the last one goes
    the broker stops (fail-stop, replaced here by a recorder)."""
    second = tmp_path / "second"
    c = Combined(tmp_path, extra=f"log.dirs={tmp_path / 'logs'},{second}\n")
    from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
    from tests.server.test_kraft_node import CLUSTER

    second.mkdir()
    write_meta_properties(str(second), MetaProperties(cluster_id=CLUSTER, node_id=1))

    async def main():
        node = c.node()
        stops = []
        await node.start()
        node.replicas.on_all_offline = lambda what, exc: stops.append(what)
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                created = await conn.request(_create("jbod", partitions=2), 7)
                tid = created.topics[0].topic_id
                await _hosted(node, "jbod", 2)
                hps = [node.replicas.get("jbod", i) for i in (0, 1)]
                assert hps[0].root != hps[1].root  # a new partition goes to the directory with fewer
                broken, healthy = hps
                broken.log.inject_io_error()
                r = await conn.request(_produce("jbod", {0: _batch([b"x"]), 1: _batch([b"y"])}), 9)
                assert [p.error_code for p in r.responses[0].partition_responses] == [
                    ec.KAFKA_STORAGE_ERROR, ec.NONE]
                f = await conn.request(_fetch(tid, {0: 0, 1: 0}), 13)
                assert [p.error_code for p in f.responses[0].partitions] == [ec.KAFKA_STORAGE_ERROR, ec.NONE]
                assert _values(f.responses[0].partitions[1].records) == [b"y"]
                dirs = await conn.request(w.DescribeLogDirsRequest(topics=None), 4)
                by_dir = {r.log_dir: r for r in dirs.results}
                assert by_dir[broken.root].error_code == ec.KAFKA_STORAGE_ERROR
                assert by_dir[healthy.root].error_code == ec.NONE
                assert [(t.name, [p.partition_index for p in t.partitions]) for t in by_dir[healthy.root].topics] \
                    == [("jbod", [1])]
                assert stops == []
                healthy.log.inject_io_error()
                r = await conn.request(_produce("jbod", {1: _batch([b"z"])}), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.KAFKA_STORAGE_ERROR
                assert stops == ["every log directory is offline"]
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(main())


def test_a_segment_roll_writes_a_producer_snapshot_at_its_base(tmp_path):
    """As Kafka does at every roll, so a crash replays at most the batch headers after the last roll."""
    c = Combined(tmp_path)

    async def scenario(node, conn):
        body = _create("rolling", partitions=1)
        body.topics[0].configs = [w.CreateTopicsRequest.CreatableTopicConfig(name="segment.bytes",
                                                                             value=str(1 << 20))]
        assert (await conn.request(body, 7)).topics[0].error_code == ec.NONE
        await _hosted(node, "rolling", 1)
        pid = (await conn.request(w.InitProducerIdRequest(
            transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1),
            4)).producer_id
        for seq in range(30):  # 30 × 100 kB: rolls at about every tenth batch
            r = await conn.request(_produce("rolling", {0: _batch([b"x" * 100_000], pid=pid, epoch=0,
                                                                  seq=seq)}), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.NONE
        hp = node.replicas.get("rolling", 0)
        bases = hp.log.segment_base_offsets()
        assert len(bases) >= 3
        assert hp.log.producer_snapshots() == bases[-2:]  # one per roll, the two newest kept
        with open(os.path.join(hp.log.directory, f"{bases[-1]:020d}.snapshot"), "rb") as f:
            from kraftwire.replica.producer_snapshot import decode

            table = decode(f.read())
        assert table[pid].last_seq == bases[-1] - 1  # the state below the roll, without the batch at it

    c.run(scenario)


def test_hosting_many_partitions_is_spread_over_turns_of_the_event_loop(tmp_path, monkeypatch):
    """A burst of new partitions is created a budget at a time (here one partition per turn), the rest at the next
    turns with the latest image; meanwhile the node keeps serving, and in the end every partition is hosted once."""
    from kraftwire.server.runtime import replicas as replicas_module

    monkeypatch.setattr(replicas_module, "APPLY_BUDGET_S", 0.0)
    c = Combined(tmp_path)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            passes = []
            real = node.replicas._apply_pass

            def counted():
                passes.append(len(node.replicas.partitions))
                real()
            node.replicas._apply_pass = counted
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            r = await conn.request(_create("burst", partitions=12), 5)
            assert r.topics[0].error_code == 0
            await _hosted(node, "burst", 12)
            # one partition per pass: at least twelve passes, each starting with one more partition hosted
            assert len([p for p in passes if p < 12]) >= 12 and sorted(passes) == passes
            md = await conn.request(w.MetadataRequest(topics=None), 1)  # served between the passes too
            assert [t.name for t in md.topics] == ["burst"]
            assert sorted(i for (t, i) in node.replicas.partitions if t == "burst") == list(range(12))
            await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(main())
