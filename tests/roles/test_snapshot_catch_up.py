"""A broker restarted after retention moved the controllers' log start past its log end catches up through the
latest snapshot (FetchSnapshot: the full image instead of the deltas), then registers again and becomes Online; its
broker registry comes from the snapshot image plus the log after it."""

from __future__ import annotations

import glob
import os
import time

from harness import roles

SMALL = ("metadata.log.segment.min.bytes=16384\nmetadata.log.segment.bytes=16384\n"
         "metadata.max.retention.bytes=16384\nmetadata.log.max.record.bytes.between.snapshots=20000\n")


def _log_start(node) -> int:
    files = glob.glob(os.path.join(node.log_dir, "roles-0", "*.log"))
    return min(int(os.path.basename(f).split(".")[0]) for f in files) if files else 0


def test_broker_behind_the_log_start_catches_up_through_a_snapshot(make_roles_cluster):
    from kafka import KafkaProducer

    cluster = make_roles_cluster(controllers=3, brokers=1, extra_props=SMALL)
    cluster.start_all()
    cluster.wait_for_leader()
    c_port = cluster.controllers[0].port
    broker = cluster.brokers[0]
    roles.wait_until(lambda: roles.broker_ids(c_port) == [1, 2, 3, 4], "the broker is Online", cluster)
    code = broker.terminate()
    assert code == 0, f"the broker exited {code} on SIGTERM:\n{broker.stderr()[-6000:]}"
    batches = roles.processes.segment_batches(os.path.join(broker.log_dir, "roles-0"), check=False)
    broker_end = batches[-1]["last_offset"] + 1 if batches else 0
    roles.wait_until(lambda: roles.broker_ids(c_port) == [1, 2, 3], "the stopped broker leaves Metadata", cluster)

    producer = KafkaProducer(bootstrap_servers=[f"127.0.0.1:{c.port}" for c in cluster.controllers], acks="all",
                             request_timeout_ms=10000, max_block_ms=20000, linger_ms=5)
    try:
        deadline = time.monotonic() + 90
        i = 0
        while min(_log_start(c) for c in cluster.controllers) <= broker_end and time.monotonic() < deadline:
            for _ in range(500):
                producer.send("roles", value=b"x" * 100 + str(i).encode())
                i += 1
            producer.flush(60)
    finally:
        producer.close(10)
    starts = {c.node_id: _log_start(c) for c in cluster.controllers}
    assert min(starts.values()) > broker_end, (starts, broker_end)

    t0 = time.monotonic()
    broker.start()
    roles.wait_until(lambda: roles.broker_ids(c_port) == [1, 2, 3, 4], "the restarted broker is Online again",
                     cluster, timeout=60)
    online_s = time.monotonic() - t0
    snapshots = glob.glob(os.path.join(broker.log_dir, "roles-0", "*.checkpoint"))
    assert snapshots, "the broker installed no snapshot"
    assert roles.broker_ids(broker.port) == [1, 2, 3, 4]  # its own registry: image + log after it
    assert "broker registry loaded from snapshot" in broker.stderr()
    with open(sorted(snapshots)[-1], "rb") as f:
        image = f.read()
    assert b'"kw":"broker","id":4' in image  # the registry is part of the snapshot image
    print(f"\nbroker log end {broker_end}, behind a log start of {min(starts.values())}: Online again "
          f"{online_s:.2f} s after restart (through snapshot {os.path.basename(sorted(snapshots)[-1])})")
