"""The three-node harness of ``harness.clusters`` (used by ``benchmarks/vs_kafka.py``), for both kinds alike:
Apache Kafka 4.4.0 and kraftwire each come up as three combined nodes with all three brokers unfenced, keep an RF-3
topic with ``min.insync.replicas=2`` writable with acks=all through the SIGKILL of one node (the shape of Kafka's
``ReplicationTest``/``RoundTripFaultTest`` system tests), take the killed node back with ``start``, and report a node
that exits without being told to."""

from __future__ import annotations

import os
import signal
import types

import pytest

from harness import roles
from harness.clusters import KafkaCluster, KraftwireCluster

#: a killed broker is fenced, and leaves the ISRs, within seconds rather than Kafka's defaults (9 s / 30 s)
FAST = "broker.heartbeat.interval.ms=500\nbroker.session.timeout.ms=3000\nreplica.lag.time.max.ms=3000\n"
TOPIC = "harness"


@pytest.mark.parametrize("kind", [KafkaCluster, KraftwireCluster], ids=["kafka", "kraftwire"])
def test_rf3_topic_through_a_node_kill_and_restart(tmp_path, kind):
    with kind(tmp_path, n=3, props=FAST) as cluster:
        assert all(cluster.brokers_seen(i) == [1, 2, 3] for i in (1, 2, 3))
        pids = {i: cluster.pid(i) for i in (1, 2, 3)}
        assert None not in pids.values() and len(set(pids.values())) == 3
        cluster.create_topic(TOPIC, 3, 3, {"min.insync.replicas": "2"})

        victim = types.SimpleNamespace(kill=lambda: cluster.kill(3))
        acked = roles.produce_through_a_kill(cluster.bootstrap, TOPIC, victim, total=900)
        assert cluster.pid(3) is None and cluster.running() == [1, 2]
        cluster.wait_ready()
        assert cluster.brokers_seen(1) == [1, 2]
        read = roles.read_partitions(cluster.nodes[1].port, TOPIC, 3)
        for partition, pairs in acked.items():
            assert set(pairs) <= set(read.get(partition, ())), f"partition {partition} lost acknowledged records"

        cluster.start(3)
        cluster.wait_ready()
        assert cluster.brokers_seen(3) == [1, 2, 3]
        assert cluster.pid(3) not in (None, pids[3])

        cluster.check_alive()
        os.kill(cluster.pid(2), signal.SIGKILL)  # not through the harness: a node dying on its own
        cluster.nodes[2].proc.wait(10)
        with pytest.raises(AssertionError, match=f"{cluster.kind} node 2 exited with -9"):
            cluster.check_alive()
