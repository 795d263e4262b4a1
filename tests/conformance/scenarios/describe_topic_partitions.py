"""DescribeTopicPartitions (KIP-966): named topics, unknown and illegal names, the partition limit and the cursor
(valid, outside the named topics, negative), every topic."""

from __future__ import annotations

from conformance.runner import Step, each_version
from conformance.steps import created

from kraftwire.protocol import messages as w

DTP = w.DescribeTopicPartitionsRequest
A, B = "{ns}.a", "{ns}.b"


def describe(version: int, *names: str, limit: int = 2000, cursor=None, scope: bool = False) -> Step:
    return Step(DTP(topics=[DTP.TopicRequest(name=n) for n in names], response_partition_limit=limit,
                    cursor=None if cursor is None else DTP.Cursor(topic_name=cursor[0], partition_index=cursor[1])),
                version, scope=scope)


CASES = {
    "named": lambda v: [*created(A, B, partitions=3), describe(v, B, A)],
    "unknown": lambda v: [describe(v, A)],
    "invalid-name": lambda v: [describe(v, "{ns}/a", "")],
    "limit": lambda v: [*created(A, B, partitions=3), describe(v, A, B, limit=4)],
    "cursor": lambda v: [*created(A, B, partitions=3), describe(v, A, B, cursor=(A, 2), limit=2)],
    "cursor-outside": lambda v: [*created(A, partitions=3), describe(v, A, cursor=(B, 0))],
    "cursor-negative": lambda v: [*created(A, partitions=3), describe(v, A, cursor=(A, -1))],
    "zero-limit": lambda v: [*created(A, partitions=3), describe(v, A, limit=0)],
    # every topic from this scenario's first on, three partitions' worth: the cursor keeps other scenarios out
    "every-topic": lambda v: [*created(A, B, partitions=2), describe(v, cursor=(A, 0), limit=3, scope=True)],
}

SCENARIOS = each_version("DescribeTopicPartitions", CASES)
