"""Three controllers + two brokers as real processes: the brokers register, become Online after catching up and appear
in Metadata and DescribeQuorum; a paused broker is fenced past the session timeout and returns; a controller failover
keeps every broker's state; SIGTERM is a controlled shutdown (Stopping, then Offline)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time

from harness import roles


def _fetch(port: int, offset: int = 0):
    """A consumer Fetch (replica id -1, v11 with topic names) to the node on ``port``: (error, high watermark, values)."""
    from kraftwire.protocol import messages as w
    from kraftwire.records import read_batches
    from kraftwire.server.edge.client import request_once

    F = w.FetchRequest
    req = F(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0, topics=[
        F.FetchTopic(topic="roles", partitions=[F.FetchPartition(partition=0, fetch_offset=offset,
                                                                  partition_max_bytes=1 << 20)])])
    resp = asyncio.run(request_once("127.0.0.1", port, req, 11, timeout=10))
    p = resp.responses[0].partitions[0]
    values = [r.value for b in read_batches(p.records or b"", validate=False) if not b.is_control for r in b]
    return p.error_code, p.high_watermark, values


def _online_after(node) -> float | None:
    m = re.search(r"is Online \(epoch \d+\) ([0-9.]+) s after start", node.stderr())
    return float(m.group(1)) if m else None


def test_brokers_lifecycle(make_roles_cluster):
    cluster = make_roles_cluster(controllers=3, brokers=2)
    cluster.start_all()
    part = cluster.wait_for_leader()
    leader = cluster.nodes[part.leader_id]
    c_port = cluster.controllers[0].port
    h = roles.processes

    # register, become Online, appear in Metadata (on a controller and on a broker) and DescribeQuorum
    roles.wait_until(lambda: roles.broker_ids(c_port) == [1, 2, 3, 4, 5], "both brokers Online in Metadata", cluster)
    roles.wait_until(lambda: roles.broker_ids(cluster.brokers[0].port) == [1, 2, 3, 4, 5],
                     "a broker's own Metadata lists both brokers", cluster)
    view = roles.wait_until(lambda: (lambda p: p if p and sorted(o.replica_id for o in p.observers) == [4, 5]
                                     else None)(h.leader_view(c_port)), "brokers under CurrentObservers", cluster)
    assert sorted(v.replica_id for v in view.current_voters) == [1, 2, 3]
    status = h.kw("metadata-quorum", "--bootstrap-server", f"127.0.0.1:{cluster.brokers[0].port}", "describe",
                  "--status").stdout
    # issue #9: the brokers are listed under CurrentObservers, Kafka's JSON objects plus an integer "lag"
    observers = json.loads(status.split("CurrentObservers:")[1].strip())
    assert sorted(o["id"] for o in observers) == [4, 5]
    assert all(type(o["lag"]) is int and o["lag"] >= 0 for o in observers)
    assert all(type(v["lag"]) is int for v in json.loads(status.split("CurrentVoters:")[1].split("\n")[0].strip()))
    times = [roles.wait_until(lambda b=b: _online_after(b), f"broker {b.node_id} logs Online", cluster)
             for b in cluster.brokers]
    print(f"\nbroker start -> Online: {', '.join(f'{t:.2f} s' for t in times)}")
    # a broker never votes nor stands for election
    for b in cluster.brokers:
        assert "Candidate" not in b.stderr() and "Prospective" not in b.stderr()

    # a consumer may fetch from an Online broker, up to the broker's own high watermark
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=[f"127.0.0.1:{c.port}" for c in cluster.controllers], acks="all",
                             request_timeout_ms=10000, max_block_ms=20000)
    want = [f"via-broker-{i:04d}".encode() for i in range(500)]
    try:
        for v in want:
            producer.send("roles", value=v)
        producer.flush(60)
    finally:
        producer.close(10)

    def served_by_broker():
        error, hw, values = _fetch(cluster.brokers[0].port)
        got = [v for v in values if v.startswith(b"via-broker-")]
        return (error, hw, got) if error == 0 and got == want else None

    error, hw, got = roles.wait_until(served_by_broker, "the broker serves the records to a consumer", cluster)
    assert got == want

    # SIGSTOP past the session timeout: fenced and gone from Metadata; SIGCONT: back
    paused = cluster.brokers[1]
    paused.signal(signal.SIGSTOP)
    t0 = time.monotonic()
    try:
        roles.wait_until(lambda: roles.broker_ids(c_port) == [1, 2, 3, 4], "the paused broker leaves Metadata",
                         cluster)
        fenced_s = time.monotonic() - t0
    finally:
        paused.signal(signal.SIGCONT)
    t0 = time.monotonic()
    roles.wait_until(lambda: roles.broker_ids(c_port) == [1, 2, 3, 4, 5], "the resumed broker returns", cluster)
    print(f"paused broker fenced after {fenced_s:.2f} s (session 3 s); back Online {time.monotonic() - t0:.2f} s "
          "after SIGCONT")
    assert "missed its heartbeats" in leader.stderr()

    # controller failover: the new leader knows every broker's state; the brokers follow it
    leader.kill()
    t0 = time.monotonic()
    new = cluster.wait_for_leader(exclude=(leader.node_id,), min_epoch=part.leader_epoch + 1)
    new_port = cluster.nodes[new.leader_id].port
    assert roles.broker_ids(new_port) == [1, 2, 3, 4, 5]  # straight from the log: no re-registration needed

    def following():
        p = h.leader_view(new_port)
        if p is None or p.leader_id != new.leader_id:
            return None
        obs = {o.replica_id: o for o in p.observers}
        return p if all(i in obs and obs[i].log_end_offset >= p.high_watermark for i in (4, 5)) else None

    roles.wait_until(following, "both brokers fetch from the new leader", cluster)
    follow_s = time.monotonic() - t0
    time.sleep(3.5)  # longer than the session timeout: the new leader keeps them Online (heartbeats reach it)
    assert roles.broker_ids(new_port) == [1, 2, 3, 4, 5]  # voters are listed from the config
    print(f"controller failover -> brokers following the new leader: {follow_s:.2f} s")

    # SIGTERM: controlled shutdown, Stopping then Offline, exit 0, gone from Metadata
    gone = cluster.brokers[0]
    assert gone.terminate() == 0
    assert "controlled shutdown complete (Offline)" in gone.stderr()
    assert roles.broker_ids(new_port) == [1, 2, 3, 5]
    leader_log = cluster.nodes[new.leader_id].stderr()
    assert "broker 4 asks for a controlled shutdown: Stopping" in leader_log
    assert re.search(r"broker 4 \(epoch \d+\) is Offline", leader_log)
