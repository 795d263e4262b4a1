"""A broker SIGKILLed and restarted before its old session expired leads nothing until its new registration is in
its metadata image (real processes: one controller, two brokers).

Until then the controller refuses the new incarnation (DUPLICATE_BROKER_REGISTRATION) and still names the killed
broker leader of its partitions; the image the restarted broker reads from its own metadata log says the same. It
must not act on it: leading from that image it took writes its followers never saw and loaded coordinators from a
log the controller was about to take away (seen with SIGKILLed transaction coordinators,
``tests/roles/test_txn_exactly_once_kills.py``). Kafka's broker publishes no metadata to its replica manager before
it has caught up and registered. Once registered, the controller having moved the leadership first, it follows.
Metadata is held until then too.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import re
import time

from harness import roles
from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.edge.client import request_once

P = w.ProduceRequest
SESSION_MS = 8000  # the window in which the controller refuses the restarted broker's registration


def _partition(port: int):
    md = roles.metadata(port)
    for t in md.topics:
        if t.name == "t" and t.error_code == 0 and t.partitions:
            p = t.partitions[0]
            return p.leader_id, sorted(p.isr_nodes)
    return None


def _produce(port: int) -> int:
    b = RecordBatchBuilder()
    b.append(b"k", b"written to the restarted broker", timestamp=1_700_000_000_000)
    body = P(transactional_id=None, acks=1, timeout_ms=3000, topic_data=[P.TopicProduceData(
        name="t", partition_data=[P.PartitionProduceData(index=0, records=b.build())])])
    r = asyncio.run(request_once("127.0.0.1", port, body, 9, timeout=5))
    return r.responses[0].partition_responses[0].error_code


def _logged_at(text: str, needle: str) -> float:
    """The wall-clock time of the first log line holding ``needle`` (the node logs local time, to the millisecond)."""
    line = next(line for line in text.splitlines() if needle in line)
    stamp = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]", line)
    assert stamp, line
    return datetime.datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S").timestamp() + int(stamp.group(2)) / 1000


def _log(node) -> str:
    with open(node.stderr_path, encoding="utf-8", errors="replace") as f:
        return f.read()


def test_a_restarted_broker_leads_nothing_before_it_registers(tmp_path):
    from kafka.admin import KafkaAdminClient, NewTopic

    cluster = roles.RolesCluster(str(tmp_path), controllers=1, brokers=2, kraft=True,
                                 extra_props=f"broker.session.timeout.ms={SESSION_MS}\n")
    try:
        for node in cluster.nodes.values():
            node.start()
        cluster.wait_for_leader()
        ports = {n.node_id: n.port_of("BROKER") for n in cluster.brokers}
        roles.wait_until(lambda: all(roles.broker_ids(p) == [2, 3] for p in ports.values()), "two brokers", cluster)
        admin = KafkaAdminClient(bootstrap_servers=[f"127.0.0.1:{p}" for p in ports.values()])
        try:
            admin.create_topics([NewTopic("t", num_partitions=1, replication_factor=2)])
        finally:
            admin.close()
        leader, _ = roles.wait_until(lambda: (lambda p: p if p is not None and p[1] == [2, 3] else None)(
            _partition(ports[2])), "t-0 with both brokers in sync", cluster)
        other = 5 - leader
        victim = cluster.nodes[leader]
        victim.kill()
        victim.start()
        # answered while the controller still refuses the new incarnation (its old session is alive)
        deadline = time.monotonic() + SESSION_MS / 1000
        code = None
        while time.monotonic() < deadline:
            try:
                code = _produce(ports[leader])
                break
            except (OSError, asyncio.TimeoutError, ConnectionError):
                time.sleep(0.1)  # still starting
        text = _log(victim)
        assert "registered with controller" not in text, "registered too early for this test: " + text[-2000:]
        assert code in (ec.NOT_LEADER_OR_FOLLOWER, ec.UNKNOWN_TOPIC_OR_PARTITION), (
            f"the restarted broker answered {code} as leader of t-0 before registering\n{text[-3000:]}")
        assert "leading t-0" not in text, text[-3000:]
        # Metadata waits for the registration: never the image of before the kill (at first no brokers at all),
        # which would make a client forget every broker it knew
        md = roles.metadata(ports[leader], timeout=SESSION_MS / 1000 + 15)
        answered_at = time.time()
        # the broker's image can hold its registration (fetched from the controller's log) a moment before the
        # controller's answer to it is logged; the line's own time says whether Metadata waited for it
        roles.wait_until(lambda: "registered with controller" in _log(victim), "the registration (Metadata answered without it?)",
                         cluster, timeout=5)
        registered_at = _logged_at(_log(victim), "registered with controller")
        assert registered_at <= answered_at + 1.0, (
            f"Metadata answered {registered_at - answered_at:.1f} s before the registration")
        assert other in [b.node_id for b in md.brokers], md.brokers  # (itself, still fenced, may be left out)
        # registered: the controller moved the leadership first; the restarted broker follows and rejoins the ISR
        roles.wait_until(lambda: _partition(ports[other]) == (other, [2, 3]),
                         f"broker {other} leading t-0 with broker {leader} back in sync", cluster)
        text = _log(victim)
        registered = text.index("registered with controller")
        assert "leading t-0" not in text[:registered], text[-3000:]
        assert os.path.isdir(os.path.join(victim.log_dir, "t-0"))
    finally:
        cluster.close()
