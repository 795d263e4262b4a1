"""Share groups through a broker SIGKILL (issue #43): three kraftwire brokers, a 2-partition topic at replication
factor 3, and four of Kafka 4.4's Java ``KafkaShareConsumer`` in one share group (``tests/kafka/ShareKill.java``)
reading it with explicit acknowledgement — a value ending in 7 released on its first delivery, every other delivery
accepted. Once an eighth of the records are acknowledged, the leader of partition 0 is SIGKILLed.

What must hold, from the consumers' own account of every delivery and of every acknowledgement's outcome:

* **none lost, every record acknowledged**: each value's ACCEPT is acknowledged without error, and
* **exactly once**: no value is accepted successfully twice (a durable ACCEPT is final);
* **each redelivery explained**, with **Kafka's delivery counts**: after a RELEASE that succeeded, by the release
  (the count one higher); after a delivery on a partition whose leader was killed since, by the leader change (the
  new leader loads the durable state, where an acquisition is not written: the count the same as before, or one
  higher if a lock expiry was written); otherwise by a lock expiry (the record's lock,
  ``share.record.lock.duration.ms``, had run out: the count one higher). The first delivery counts 1.

The acknowledgements in flight to the killed leader fail in the client itself as UnknownServerException (Kafka
4.4's ShareConsumeRequestManager completes a failed request's acknowledgements so when the failure is not a
KafkaException): they are logged at the kill, seconds before any broker leads the partition again, so no broker
answered them; their records come back through the leader change.

The group's lock duration is lowered to ``LOCK_MS`` (``share.record.lock.duration.ms``, Kafka's least) so the records
whose acknowledgement the kill made fail come back sooner. A delivery's time is when the consumer received it.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import defaultdict

from harness import roles
from harness.kafka import KAFKA_DIR, start_java, stop_java

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once
from server.test_kraft_node import _create

RECORDS = 400
PAUSE_MS = 25
LOCK_MS = 15_000  # Kafka's least share.record.lock.duration.ms (group.share.min.record.lock.duration.ms)
#: an answer of the old leader sent just before the kill reaches its consumer this much later at most
IN_FLIGHT_MS = 1000
#: a lock expiry is seen by the consumer at least this long after the delivery (clock and ticker granularity)
EXPIRY_SLACK_MS = 300
PROPS = ("offsets.topic.replication.factor=3\noffsets.topic.num.partitions=1\n"
         "share.coordinator.state.topic.replication.factor=3\nshare.coordinator.state.topic.min.isr=2\n"
         "share.coordinator.state.topic.num.partitions=1\nmin.insync.replicas=2\n")


def test_four_share_consumers_through_a_partition_leader_kill(make_roles_cluster, tmp_path):
    cluster = make_roles_cluster(controllers=1, brokers=3, kraft=True, extra_props=PROPS,
                                 format_args=("--feature", "share.version=1"))
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    ports = {n.node_id: n.port_of("BROKER") for n in cluster.brokers}
    first = next(iter(ports.values()))
    roles.wait_until(lambda: roles.broker_ids(first) == sorted(ports), "three brokers", cluster)
    created = asyncio.run(request_once("127.0.0.1", first, _create("q", partitions=2, rf=3), 7, timeout=15.0))
    assert created.topics[0].error_code == 0, created
    roles.wait_until(lambda: _leaders(first) is not None, "both partitions of q led", cluster)

    log = os.path.join(str(tmp_path), "share-kill.out")
    java = start_java(os.path.join(KAFKA_DIR, "ShareKill.java"), ",".join(f"localhost:{p}" for p in ports.values()),
                      "q", "sg", str(RECORDS), str(PAUSE_MS), "50000", str(LOCK_MS), log=log)
    try:
        roles.wait_until(lambda: _count(log, " OK ") >= RECORDS // 8 or java.poll() is not None,
                         "an eighth of the records acknowledged", cluster, timeout=60)
        leaders = _leaders(first)
        victim = leaders[0]
        killed_at = time.time() * 1000
        cluster.nodes[victim].kill()
        for sock in cluster.nodes[victim].socks.values():
            sock.close()  # the harness's copy of its listeners: a dead broker refuses connections, as a real one does
        moved = {p for p, leader in leaders.items() if leader == victim}
        java.wait(60)
    finally:
        stop_java(java)
    with open(log, encoding="utf-8") as f:
        out = f.read()
    lines = out.splitlines()
    assert lines and lines[-1] == f"DONE {RECORDS}", out[-3000:] + cluster.diagnostics()
    deliveries = _deliveries(lines)
    assert sorted(deliveries) == list(range(RECORDS))
    explained = _check(deliveries, moved, killed_at)
    assert explained["leader change"] > 0, explained  # the kill landed mid-way: some records came back through it
    for node in cluster.brokers:
        if node.node_id != victim:
            assert "Traceback" not in node.stderr(), node.stderr()[-3000:]


def _leaders(port: int) -> dict[int, int] | None:
    md = asyncio.run(request_once("127.0.0.1", port, w.MetadataRequest(
        topics=[w.MetadataRequest.MetadataRequestTopic(name="q")]), 12, timeout=5.0))
    parts = md.topics[0].partitions if md.topics and md.topics[0].error_code == 0 else []
    return {p.partition_index: p.leader_id for p in parts} if len(parts) == 2 and all(
        p.leader_id >= 0 for p in parts) else None


def _count(path: str, needle: str) -> int:
    try:
        with open(path, encoding="utf-8") as f:
            return sum(1 for line in f if line.startswith("ACKED ") and needle in line)
    except FileNotFoundError:
        return 0


def _deliveries(lines: list[str]) -> dict[int, list[dict]]:
    """value -> its deliveries in time order, each with the outcome of the acknowledgement that followed it."""
    pending: dict[tuple[int, int], list[dict]] = defaultdict(list)  # (consumer, value) -> deliveries not yet acked
    out: dict[int, list[dict]] = defaultdict(list)
    for n, line in enumerate(lines):
        parts = line.split()
        if parts[0] == "DELIVERY":
            consumer, partition, offset, value, count, action, at = parts[1:]
            d = dict(n=n, consumer=int(consumer), partition=int(partition), offset=int(offset), count=int(count),
                     action=action, at=int(at), outcome="NONE")
            pending[(d["consumer"], int(value))].append(d)
            out[int(value)].append(d)
        elif parts[0] == "ACKED":
            consumer, value, _action, outcome, _at = parts[1:]
            waiting = pending[(int(consumer), int(value))]
            if waiting:
                waiting.pop(0)["outcome"] = outcome
    for ds in out.values():
        ds.sort(key=lambda d: (d["at"], d["n"]))
    return out


def _check(deliveries: dict[int, list[dict]], moved: set[int], killed_at: float) -> dict[str, int]:
    """The invariants of the module docstring; how many redeliveries each cause explains."""
    causes = {"release": 0, "leader change": 0, "lock expiry": 0}
    for value, ds in deliveries.items():
        accepted = [d for d in ds if d["action"] == "ACCEPT" and d["outcome"] == "OK"]
        assert len(accepted) == 1, (value, ds)
        assert ds[0]["count"] == 1, (value, ds)
        assert ds[-1] is accepted[0], ("delivered again after a durable ACCEPT", value, ds)
        for prev, nxt in zip(ds, ds[1:]):
            gap = nxt["at"] - prev["at"]
            if prev["action"] == "RELEASE" and prev["outcome"] == "OK":
                cause, counts = "release", {prev["count"] + 1}
            elif prev["partition"] in moved and prev["at"] <= killed_at + IN_FLIGHT_MS and killed_at <= nxt["at"]:
                cause, counts = "leader change", {prev["count"], prev["count"] + 1}
            else:
                assert gap >= LOCK_MS - EXPIRY_SLACK_MS, ("redelivered with no release, leader change or expired "
                                                          "lock", value, ds)
                cause, counts = "lock expiry", {prev["count"] + 1}
            assert nxt["count"] in counts, (f"delivery count after a {cause}", value, ds)
            causes[cause] += 1
    return causes
