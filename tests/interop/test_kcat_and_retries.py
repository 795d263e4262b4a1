"""kcat (-L, -P, -C -o beginning -e) and the idempotence rules with hand-built batches: a resent batch is
acknowledged with its original offset and not appended twice; a gap is OUT_OF_ORDER_SEQUENCE_NUMBER (45); an old
epoch is INVALID_PRODUCER_EPOCH (47); a transactional InitProducerId is refused."""

from __future__ import annotations

import asyncio
import shutil
import subprocess

from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.client import request_once

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def test_kcat_metadata_produce_consume(quorum, interop):
    assert KCAT, "kcat is not installed (.ci/run installs the Debian package)"
    out = subprocess.run([KCAT, "-b", quorum.bootstrap, "-L"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f'topic "{interop.TOPIC}" with 1 partitions' in out.stdout and "3 brokers" in out.stdout
    want = interop.values("kcat")
    out = subprocess.run([KCAT, "-b", quorum.bootstrap, "-P", "-t", interop.TOPIC, "-X", "acks=all"],
                         input=b"\n".join(want) + b"\n", capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([KCAT, "-b", quorum.bootstrap, "-C", "-t", interop.TOPIC, "-o", "beginning", "-e",
                          "-q"], capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert interop.only("kcat", out.stdout.split(b"\n")) == want


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


def test_idempotent_sequences_like_kafka(quorum, interop):
    leader = quorum.leader()
    init = asyncio.run(request_once("127.0.0.1", leader.port, w.InitProducerIdRequest(
        transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1), 4))
    assert init.error_code == 0 and init.producer_id >= 0
    pid, epoch = init.producer_id, init.producer_epoch
    first = batch(pid, epoch, 0, [b"seq-0", b"seq-1"])
    a = produce(leader.port, first, interop.TOPIC)
    assert a.error_code == 0
    # the same batch again (a client retry after a lost answer): same offset, nothing appended
    again = produce(leader.port, first, interop.TOPIC)
    assert (again.error_code, again.base_offset) == (0, a.base_offset)
    # a gap in the sequence
    gap = produce(leader.port, batch(pid, epoch, 5, [b"seq-5"]), interop.TOPIC)
    assert gap.error_code == 45  # OUT_OF_ORDER_SEQUENCE_NUMBER
    nxt = produce(leader.port, batch(pid, epoch, 2, [b"seq-2"]), interop.TOPIC)
    assert (nxt.error_code, nxt.base_offset) == (0, a.base_offset + 2)  # nothing was appended in between
    # a bumped epoch must restart at 0; afterwards the old epoch is fenced
    assert produce(leader.port, batch(pid, epoch + 1, 3, [b"x"]), interop.TOPIC).error_code == 45
    assert produce(leader.port, batch(pid, epoch + 1, 0, [b"seq-e1-0"]), interop.TOPIC).error_code == 0
    assert produce(leader.port, batch(pid, epoch, 3, [b"seq-3"]), interop.TOPIC).error_code == 47
    # the log holds each accepted batch once
    data = [(b["base_offset"], b["record_count"]) for b in quorum.batches(leader) if not b["is_control"]
            and a.base_offset <= b["base_offset"] <= nxt.base_offset]
    assert data == [(a.base_offset, 2), (nxt.base_offset, 1)]
    # transactions are refused clearly (a fatal error on every client)
    txn = asyncio.run(request_once("127.0.0.1", leader.port, w.InitProducerIdRequest(
        transactional_id="tx", transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1), 4))
    assert txn.error_code == 53 and txn.producer_id == -1
