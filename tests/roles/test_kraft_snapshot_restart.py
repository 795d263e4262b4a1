"""KRaft nodes as real processes (``server-start``), three controllers and two brokers, restarted through their
snapshots: brokers register, are unfenced, one shuts down (controlled) and comes back as a new incarnation; topics
are created until every node has written metadata snapshots and retention has deleted the log below them; then every
node is stopped and started again, so each one rebuilds its image from its latest snapshot plus the log after it.
The image is the same afterwards (brokers, topics, partitions), ``metadata-shell`` reads it from a snapshot file and
``dump-log --cluster-metadata-decoder`` prints the snapshot's records. Snapshot and retention thresholds are lowered
from Kafka's defaults (20 MiB between snapshots) so that a few hundred records are enough."""

from __future__ import annotations

import glob
import os

from harness import processes, roles

SMALL = ("metadata.log.segment.min.bytes=4096\nmetadata.log.segment.bytes=4096\n"
         "metadata.max.retention.bytes=4096\nmetadata.log.max.record.bytes.between.snapshots=4096\n")


def _metadata_dir(cluster, node) -> str:
    return os.path.join(cluster.base, f"kraft-logs-{node.node_id}", "__cluster_metadata-0")


def _log_start(path: str) -> int:
    files = glob.glob(os.path.join(path, "*.log"))
    return min(int(os.path.basename(f).split(".")[0]) for f in files) if files else 0


def _snapshots(path: str) -> list[str]:
    return sorted(f for f in glob.glob(os.path.join(path, "*.checkpoint"))
                  if not os.path.basename(f).startswith("00000000000000000000-"))


def _view(port: int):
    """(broker ids, {topic: partition count}) from the node's Metadata answer, or None while it is not ready."""
    try:
        md = roles.metadata(port)
    except Exception:  # noqa: BLE001 - the node may be starting
        return None
    return sorted(b.node_id for b in md.brokers), {t.name: len(t.partitions) for t in md.topics if t.error_code == 0}


def test_every_node_restarts_through_its_snapshot_to_the_same_image(make_roles_cluster):
    from kafka.admin import KafkaAdminClient, NewTopic

    cluster = make_roles_cluster(controllers=3, brokers=2, kraft=True, extra_props=SMALL)
    cluster.start_all()
    cluster.wait_for_leader()
    b4, b5 = (n.port_of("BROKER") for n in cluster.brokers)
    roles.wait_until(lambda: roles.broker_ids(b4) == [4, 5], "both brokers registered and unfenced", cluster)

    # broker 5 shuts down (controlled: fenced, then gone from Metadata) and comes back as a new incarnation
    assert cluster.brokers[1].terminate() == 0
    roles.wait_until(lambda: roles.broker_ids(b4) == [4], "broker 5 out after its controlled shutdown", cluster)
    cluster.brokers[1].start()
    roles.wait_until(lambda: roles.broker_ids(b4) == [4, 5], "broker 5 registered and unfenced again", cluster)

    admin = KafkaAdminClient(bootstrap_servers=[f"127.0.0.1:{b4}"], request_timeout_ms=20000)
    dirs = [_metadata_dir(cluster, n) for n in cluster.nodes.values()]
    try:
        created = 0
        while not all(_snapshots(d) and _log_start(d) > 0 for d in dirs) and created < 400:
            admin.create_topics([NewTopic(f"t-{created + i:03d}", num_partitions=2, replication_factor=2)
                                 for i in range(20)])
            created += 20
        roles.wait_until(lambda: all(_snapshots(d) and _log_start(d) > 0 for d in dirs),
                         "a snapshot on every node and its log start moved past 0", cluster)
    finally:
        admin.close()
    expected = {f"t-{i:03d}": 2 for i in range(created)}
    roles.wait_until(lambda: _view(b4) == ([4, 5], expected) and _view(b5) == ([4, 5], expected),
                     "both brokers' images hold every topic", cluster)

    for node in cluster.nodes.values():
        assert node.terminate() == 0, node.stderr()[-3000:]
    starts = {d: _log_start(d) for d in dirs}
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    roles.wait_until(lambda: _view(b4) == ([4, 5], expected) and _view(b5) == ([4, 5], expected),
                     "the same image on both brokers after the restart", cluster)
    for node, d in zip(cluster.nodes.values(), dirs):
        assert starts[d] > 0  # the log below the snapshot was gone: the image could only come from the snapshot
        assert "metadata image loaded from snapshot" in node.stderr(), node.node_id

    # Kafka's tools read the snapshot a node wrote (stopped first: a running node replaces its snapshots, and the
    # newest one listed may be gone by the time the tool opens it)
    first = next(iter(cluster.nodes.values()))
    assert first.terminate() == 0, first.stderr()[-3000:]
    newest = _snapshots(dirs[0])[-1]
    shell = processes.kw("metadata-shell", "--snapshot", newest, "ls", "/image/cluster/brokers").stdout
    assert shell.split() == ["4", "5"]
    topics = processes.kw("metadata-shell", "--snapshot", newest, "ls", "/image/topics/byName").stdout.split()
    assert set(topics) >= {"t-000", "t-001"}
    dump = processes.kw("dump-log", "--cluster-metadata-decoder", "--files", newest).stdout
    for kind in ("REGISTER_BROKER_RECORD", "TOPIC_RECORD", "PARTITION_RECORD", "FEATURE_LEVEL_RECORD"):
        assert kind in dump, kind
