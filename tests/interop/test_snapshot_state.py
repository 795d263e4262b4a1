"""Broker state in the snapshots: with a small snapshot trigger, every node writes snapshots whose image holds the
committed group offsets and the producer state; after a restart of the whole quorum (state rebuilt from the latest
snapshot's image plus the log after it) the group's committed offset is still served and a resent idempotent batch
is still recognised (acknowledged with its original offset, not appended again)."""

from __future__ import annotations

import asyncio
import glob
import os
import time

from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.edge.client import request_once

from harness import clients


def produce(port, batch: bytes):
    P = w.ProduceRequest
    req = P(acks=-1, timeout_ms=10000, topic_data=[P.TopicProduceData(name="clients", partition_data=[
        P.PartitionProduceData(index=0, records=batch)])])
    return asyncio.run(request_once("127.0.0.1", port, req, 9, timeout=15)).responses[0].partition_responses[0]


def offset_fetch(port, group):
    req = w.OffsetFetchRequest(group_id=group, topics=[w.OffsetFetchRequest.OffsetFetchRequestTopic(
        name="clients", partition_indexes=[0])])
    resp = asyncio.run(request_once("127.0.0.1", port, req, 7, timeout=15))
    if resp.error_code:  # COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR while the new leader settles: retried
        return resp.error_code, None
    return resp.error_code, resp.topics[0].partitions[0].committed_offset


def test_group_offsets_and_producer_state_survive_a_restart_through_the_snapshot(tmp_path):
    quorum = clients.start_quorum(str(tmp_path), "metadata.log.max.record.bytes.between.snapshots=20000\n")
    cluster = quorum.cluster
    try:
        leader = quorum.leader()
        init = asyncio.run(request_once("127.0.0.1", leader.port, w.InitProducerIdRequest(
            transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1), 4))
        pid = init.producer_id
        b = RecordBatchBuilder(producer_id=pid, producer_epoch=0, base_sequence=0)
        b.append(None, b"snap-idem")
        first = b.build()
        acked = produce(leader.port, first)
        assert acked.error_code == 0

        from kafka import KafkaConsumer, KafkaProducer

        producer = KafkaProducer(bootstrap_servers=quorum.servers, acks="all", request_timeout_ms=10000)
        for v in clients.values("snap", 2000):
            producer.send("clients", value=v)
        producer.flush(60)
        producer.close(10)
        consumer = KafkaConsumer("clients", bootstrap_servers=quorum.servers, group_id="snap-group",
                                 auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=3000,
                                 session_timeout_ms=10000, heartbeat_interval_ms=1000)
        committed = None
        deadline = clients.bounded(60)
        while committed is None and not deadline.expired():
            for m in consumer:
                if m.value == b"snap-001000":
                    consumer.commit()
                    committed = m.offset + 1
                    break
        consumer.close(autocommit=False)
        assert committed is not None
        # more data so that the next snapshot is taken after the commit
        producer = KafkaProducer(bootstrap_servers=quorum.servers, acks="all", request_timeout_ms=10000)
        for v in clients.values("snap2", 2000):
            producer.send("clients", value=v)
        producer.flush(60)
        producer.close(10)

        def images():
            out = []
            for node in cluster.nodes.values():
                files = sorted(glob.glob(os.path.join(quorum.partition_dir(node), "*.checkpoint")))
                out.append(files and open(files[-1], "rb").read())
            return out

        deadline = clients.bounded(60)
        while not deadline.expired():
            found = images()
            if all(f and b'"kw":"group_record"' in f and b'"kw":"producer"' in f for f in found):
                break
            time.sleep(0.5)
        # the group's records (Kafka's __consumer_offsets keys, hex in the image) are in every snapshot
        assert all(f and b"snap-group".hex().encode() in f for f in images()), "no snapshot with the broker state"

        assert cluster.stop_all() == {1: 0, 2: 0, 3: 0}
        cluster.start_all()
        leader = quorum.leader()
        deadline = clients.bounded(60)
        result = None
        while not deadline.expired():
            result = offset_fetch(leader.port, "snap-group")
            if result[0] == 0:
                break
            time.sleep(0.2)
            leader = quorum.leader()
        assert result == (0, committed)
        assert "broker state loaded from snapshot" in leader.stderr()  # the image, not only the log, was used
        again = produce(leader.port, first)
        assert (again.error_code, again.base_offset) == (0, acked.base_offset)
    finally:
        cluster.close()
