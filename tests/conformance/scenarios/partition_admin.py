"""DeleteRecords, DescribeLogDirs and DescribeProducers at every version both serve: records deleted before an
offset, up to the high watermark (-1), past it, on a compacted topic, on unknown topics and partitions; a topic's log
directory and partition sizes, an unknown topic; an idempotent producer's state on a partition, unknown topics and
partitions."""

from __future__ import annotations

from conformance.data_steps import (A, INIT_VERSION, PRODUCE_VERSION, idempotent, init_producer_id, produce, records,
                                    topic_with, written)
from conformance.runner import Step, each_version
from conformance.steps import created

from kraftwire.protocol import messages as w

DR, DL, DP = w.DeleteRecordsRequest, w.DescribeLogDirsRequest, w.DescribeProducersRequest


def delete(v, *parts):
    """DeleteRecords of ``parts`` — (topic, partition, offset)."""
    by_topic: dict[str, list] = {}
    for name, partition, offset in parts:
        by_topic.setdefault(name, []).append(DR.DeleteRecordsPartition(partition_index=partition, offset=offset))
    return Step(DR(topics=[DR.DeleteRecordsTopic(name=n, partitions=ps) for n, ps in by_topic.items()],
                   timeout_ms=10000), v)


def _filled():
    """Topic A (two partitions): five records in partition 0 (two batches), none in 1."""
    return [*created(A, partitions=2), *written(A, (0, records(3)), (0, records(2, first=3)))]


def log_dirs(v, *topics):
    """DescribeLogDirs of ``topics`` — (topic, [partition, ...])."""
    return Step(DL(topics=[DL.DescribableLogDirTopic(topic=n, partitions=list(ps)) for n, ps in topics]), v)


def producers(v, *topics):
    return Step(DP(topics=[DP.TopicRequest(name=n, partition_indexes=list(ps)) for n, ps in topics]), 0)


DELETE_RECORDS = {
    "before-offset": lambda v: [*_filled(), delete(v, (A, 0, 2), (A, 1, 0))],
    "to-high-watermark": lambda v: [*_filled(), delete(v, (A, 0, -1))],
    "past-high-watermark": lambda v: [*_filled(), delete(v, (A, 0, 9))],
    "negative-offset": lambda v: [*_filled(), delete(v, (A, 0, -3))],
    "unknown-partition": lambda v: [*_filled(), delete(v, (A, 7, 0), (A, 0, 1))],
    "unknown-topic": lambda v: [delete(v, ("{ns}.missing", 0, 0))],
    "compacted-topic": lambda v: [*topic_with(A, ("cleanup.policy", "compact")), *written(A, (0, records(2))),
                                  delete(v, (A, 0, 1))],
}

LOG_DIRS = {
    "topic": lambda v: [*_filled(), log_dirs(v, (A, [0, 1]))],
    "unknown-topic": lambda v: [log_dirs(v, ("{ns}.missing", [0]))],
    "unknown-partition": lambda v: [*_filled(), log_dirs(v, (A, [0, 5]))],
}

DESCRIBE_PRODUCERS = {
    "idempotent-producer": lambda v: [*created(A, partitions=2), init_producer_id(INIT_VERSION),
                                      produce(PRODUCE_VERSION, (A, 0, idempotent(3, 0))),
                                      producers(v, (A, [0, 1]))],
    "unknown-partition": lambda v: [*created(A), producers(v, (A, [0, 4]))],
    "unknown-topic": lambda v: [producers(v, ("{ns}.missing", [0]))],
}

SCENARIOS = [*each_version("DeleteRecords", DELETE_RECORDS), *each_version("DescribeLogDirs", LOG_DIRS),
             *each_version("DescribeProducers", DESCRIBE_PRODUCERS)]
