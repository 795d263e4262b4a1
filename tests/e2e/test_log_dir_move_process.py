"""A real ``server-start`` process with two log directories (``log.dirs=a,b``): a topic under an acks=all producer
(confluent-kafka) has its partition moved live to the other directory with AlterReplicaLogDirs; every acknowledged
record is there, the old directory is emptied, and a restart of the process finds the partition in its new one with
every record."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once
from tests.harness.kafka import until_broker_answers
from tests.harness.processes import CombinedNode, kraftwire_env
from tests.harness.roles import wait_until

A = w.AlterReplicaLogDirsRequest


def _dirs(port: int) -> dict:
    answer = asyncio.run(request_once("127.0.0.1", port, w.DescribeLogDirsRequest(topics=None), 4, timeout=10.0))
    return {(t.name, p.partition_index, p.is_future_key): r.log_dir for r in answer.results for t in r.topics
            for p in t.partitions}


def test_a_partition_moves_live_between_two_log_dirs_of_a_process(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    props = f"log.dirs={a},{b}\noffsets.topic.replication.factor=1\nnum.partitions=1\n"
    node = CombinedNode(tmp_path, props)
    with node:
        until_broker_answers(node.port, 30)
        bootstrap = f"127.0.0.1:{node.port}"
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
        acked = []
        deliver = lambda err, msg: acked.append(msg.value()) if err is None else None  # noqa: E731
        for i in range(2000):
            producer.produce("moving", value=b"before-%d" % i, on_delivery=deliver)
        producer.flush(20)
        source = _dirs(node.port)[("moving", 0, False)]
        target = b if source == a else a
        answer = asyncio.run(request_once("127.0.0.1", node.port, A(dirs=[A.AlterReplicaLogDir(
            path=target, topics=[A.AlterReplicaLogDirTopic(name="moving", partitions=[0])])]), 2, timeout=10.0))
        assert answer.results[0].partitions[0].error_code == 0
        for i in range(2000):  # produced while it moves
            producer.produce("moving", value=b"during-%d" % i, on_delivery=deliver)
            producer.poll(0)
        producer.flush(20)
        wait_until(lambda: _dirs(node.port).get(("moving", 0, False)) == target, "moved", timeout=15)
        wait_until(lambda: not [n for n in os.listdir(source) if n.startswith("moving-0")], "old dir emptied",
                   timeout=15)
        assert len(acked) == 4000
        del producer
    # the same node again, binding its (now free) ports itself
    proc = subprocess.Popen([sys.executable, "-m", "kraftwire", "server-start", "--config", node.config],
                            stdout=subprocess.DEVNULL, stderr=open(node.log_path, "ab"), env=kraftwire_env())
    try:
        until_broker_answers(node.port, 30)
        assert _dirs(node.port) == {("moving", 0, False): target}
        consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{node.port}", "group.id": "g",
                             "enable.auto.commit": False})
        consumer.assign([TopicPartition("moving", 0, 0)])  # no group to join: read the partition from its start
        seen = []
        deadline = time.monotonic() + 20
        while len(seen) < len(acked) and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                seen.append(m.value())
        consumer.close()
        assert sorted(seen) == sorted(acked)
    finally:
        proc.kill()
        proc.wait(10)
