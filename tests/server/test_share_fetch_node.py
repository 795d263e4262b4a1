"""Share groups end to end on a real node (KIP-932): a kraftwire node formatted with ``--feature share.version=1``
and Kafka 4.4's Java ``KafkaShareConsumer`` — two share consumers of one group read one topic through ShareFetch
and acknowledge every record explicitly (``tests/kafka/ShareConsumers.java``): some REJECT, some RELEASE on their
first delivery. Every record ends accepted or rejected, none is held by two consumers at once, and the delivery
counts are Kafka's: 1 for a record accepted or rejected at once, 2 for a released one when it comes back."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from harness import processes, roles
from harness.kafka import run_java

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once
from server.test_kraft_node import _create

RECORDS = 30
PROPS = ("offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
         "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
         "share.coordinator.state.topic.num.partitions=1\n")


def expected(v: int) -> list[tuple[int, str]]:
    """The deliveries of value ``v``: (delivery count, acknowledgement), in order."""
    if v % 7 == 3:
        return [(1, "REJECT")]
    if v % 5 == 1:
        return [(1, "RELEASE"), (2, "ACCEPT")]
    return [(1, "ACCEPT")]


def test_two_java_share_consumers_acknowledge_every_record(tmp_path):
    with processes.CombinedNode(tmp_path, PROPS, format_args=("--feature", "share.version=1")) as node:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
        created = asyncio.run(request_once("127.0.0.1", node.port, _create("q", partitions=1), 7, timeout=15.0))
        assert created.topics[0].error_code == 0
        out = run_java("ShareConsumers.java", f"localhost:{node.port}", "q", "sg", str(RECORDS), "20000",
                       timeout=90)
        deliveries = defaultdict(list)
        for line in out.splitlines():
            if line.startswith("DELIVERY "):
                _tag, consumer, value, count, ack = line.split()
                deliveries[int(value)].append((int(count), ack.upper(), int(consumer)))
        assert out.splitlines()[-1] == f"DONE {RECORDS}", out + node.stderr()[-3000:]
        for v in range(RECORDS):
            assert [(c, a) for c, a, _who in deliveries[v]] == expected(v), (v, deliveries[v])
        assert {who for ds in deliveries.values() for _c, _a, who in ds} <= {0, 1}
        assert "Traceback" not in node.stderr()
        described = asyncio.run(request_once("127.0.0.1", node.port, w.ShareGroupDescribeRequest(
            group_ids=["sg"], include_authorized_operations=False), 1, timeout=15.0))
        assert described.groups[0].error_code == 0
