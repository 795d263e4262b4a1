"""kcat (-L, -P, -C -o beginning -e) and the idempotence rules with hand-built batches: a resent batch is
acknowledged with its original offset and not appended twice; a gap is OUT_OF_ORDER_SEQUENCE_NUMBER (45); an old
epoch is INVALID_PRODUCER_EPOCH (47); a transactional InitProducerId is refused."""

from __future__ import annotations

import asyncio
import shutil
import subprocess

from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.edge.client import request_once

from harness import clients

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def test_kcat_metadata_produce_consume(quorum):
    assert KCAT, "kcat is not installed (.ci/run installs the Debian package)"
    out = subprocess.run([KCAT, "-b", quorum.bootstrap, "-L"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f'topic "{clients.TOPIC}" with 1 partitions' in out.stdout and "3 brokers" in out.stdout
    want = clients.values("kcat")
    out = subprocess.run([KCAT, "-b", quorum.bootstrap, "-P", "-t", clients.TOPIC, "-X", "acks=all"],
                         input=b"\n".join(want) + b"\n", capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([KCAT, "-b", quorum.bootstrap, "-C", "-t", clients.TOPIC, "-o", "beginning", "-e",
                          "-q"], capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert clients.only("kcat", out.stdout.split(b"\n")) == want


def produce(port, batch: bytes, topic: str, acks: int = -1, version: int = 9):
    P = w.ProduceRequest
    req = P(acks=acks, timeout_ms=10000, topic_data=[P.TopicProduceData(name=topic, partition_data=[
        P.PartitionProduceData(index=0, records=batch)])])
    resp = asyncio.run(request_once("127.0.0.1", port, req, version, timeout=15))
    return resp.responses[0].partition_responses[0]


def batch(pid, epoch, seq, values):
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq)
    for v in values:
        b.append(None, v)
    return b.build()


def test_idempotent_sequences_like_kafka(quorum):
    leader = quorum.leader()
    init = asyncio.run(request_once("127.0.0.1", leader.port, w.InitProducerIdRequest(
        transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1), 4))
    assert init.error_code == 0 and init.producer_id >= 0
    pid, epoch = init.producer_id, init.producer_epoch
    first = batch(pid, epoch, 0, [b"seq-0", b"seq-1"])
    a = produce(leader.port, first, clients.TOPIC)
    assert a.error_code == 0
    # the same batch again (a client retry after a lost answer): same offset, nothing appended
    again = produce(leader.port, first, clients.TOPIC)
    assert (again.error_code, again.base_offset) == (0, a.base_offset)
    # a gap in the sequence
    gap = produce(leader.port, batch(pid, epoch, 5, [b"seq-5"]), clients.TOPIC)
    assert gap.error_code == 45  # OUT_OF_ORDER_SEQUENCE_NUMBER
    nxt = produce(leader.port, batch(pid, epoch, 2, [b"seq-2"]), clients.TOPIC)
    assert (nxt.error_code, nxt.base_offset) == (0, a.base_offset + 2)  # nothing was appended in between
    # a bumped epoch must restart at 0; afterwards the old epoch is fenced
    assert produce(leader.port, batch(pid, epoch + 1, 3, [b"x"]), clients.TOPIC).error_code == 45
    assert produce(leader.port, batch(pid, epoch + 1, 0, [b"seq-e1-0"]), clients.TOPIC).error_code == 0
    assert produce(leader.port, batch(pid, epoch, 3, [b"seq-3"]), clients.TOPIC).error_code == 47
    # the log holds each accepted batch once
    data = [(b["base_offset"], b["record_count"]) for b in quorum.batches(leader) if not b["is_control"]
            and a.base_offset <= b["base_offset"] <= nxt.base_offset]
    assert data == [(a.base_offset, 2), (nxt.base_offset, 1)]
    # transactions are refused clearly (a fatal error on every client)
    txn = asyncio.run(request_once("127.0.0.1", leader.port, w.InitProducerIdRequest(
        transactional_id="tx", transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1), 4))
    assert txn.error_code == 53 and txn.producer_id == -1


def fetch_request(offset, max_wait_ms, topic):
    F = w.FetchRequest
    return F(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20, isolation_level=0, topics=[
        F.FetchTopic(topic=topic, partitions=[F.FetchPartition(partition=0, fetch_offset=offset,
                                                               partition_max_bytes=1 << 20)])])


def test_acks_0_and_1_and_a_long_polling_fetch(quorum):
    """acks=1 answers with the offset; acks=0 gets no answer (the next request on the connection is answered and the
    record is there); a Fetch parked at the end (MaxWaitMs 20 s, MinBytes 1) returns the record produced while it
    waited."""
    from kraftwire.records import read_batches
    from kraftwire.server.edge.client import KafkaConnection

    leader = quorum.leader()
    one = RecordBatchBuilder()
    one.append(None, b"acks-1")
    r1 = produce(leader.port, one.build(), clients.TOPIC, acks=1)
    assert r1.error_code == 0 and r1.base_offset > 0

    async def scenario():
        conn = await KafkaConnection.open("127.0.0.1", leader.port)
        try:
            zero = RecordBatchBuilder()
            zero.append(None, b"acks-0")
            P = w.ProduceRequest
            cid, chunks = conn._out.encode(P(acks=0, timeout_ms=5000, topic_data=[P.TopicProduceData(
                name=clients.TOPIC, partition_data=[P.PartitionProduceData(index=0, records=zero.build())])]), 9)
            conn._out.cancel(cid)  # acks=0: the node sends nothing back
            conn._writer.writelines(chunks)
            md = await conn.request(w.MetadataRequest(topics=None), 9)  # answered next, nothing in between
            assert md.topics[0].name == clients.TOPIC
            # wait (bounded) until acks-0 is committed, then park a fetch at the end
            deadline = asyncio.get_running_loop().time() + 30
            while True:
                lo = await conn.request(w.ListOffsetsRequest(replica_id=-1, topics=[
                    w.ListOffsetsRequest.ListOffsetsTopic(name=clients.TOPIC, partitions=[
                        w.ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=-1)])]), 5)
                end = lo.topics[0].partitions[0].offset
                if end > r1.base_offset + 1 or asyncio.get_running_loop().time() > deadline:
                    break
                await asyncio.sleep(0.05)
            got = await conn.request(fetch_request(r1.base_offset + 1, 0, clients.TOPIC), 11)
            values = [r.value for b in read_batches(got.responses[0].partitions[0].records) for r in b]
            assert values[:1] == [b"acks-0"]
            parked = asyncio.ensure_future(conn.request(fetch_request(end, 20000, clients.TOPIC), 11, timeout=30))
            await asyncio.sleep(0.3)
            late = RecordBatchBuilder()
            late.append(None, b"while-parked")
            r = await asyncio.get_running_loop().run_in_executor(None, produce, leader.port, late.build(),
                                                                 clients.TOPIC)
            assert r.error_code == 0
            resp = await parked
            part = resp.responses[0].partitions[0]
            values = [rec.value for b in read_batches(part.records) for rec in b]
            assert part.error_code == 0 and values == [b"while-parked"]
        finally:
            await conn.close()

    asyncio.run(scenario())
