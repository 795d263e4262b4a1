"""Step builders shared by scenario files: creating topics, looking at them, producing a batch. Names may hold
``{ns}`` (the scenario's namespace, see :mod:`conformance.runner`)."""

from __future__ import annotations

from conformance.runner import Step, error_codes, no_error

from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder

CT = w.CreateTopicsRequest
MD = w.MetadataRequest
#: the version setup steps use when the API under test is another one (both sides serve it)
CREATE_VERSION = 7
METADATA_VERSION = 12


def topic(name: str, partitions: int = 1, replication: int = 1, assignments=(), configs=()) -> CT.CreatableTopic:
    """A CreateTopics entry; ``assignments`` as ``[(partition, [broker, ...]), ...]``, ``configs`` as
    ``[(key, value), ...]``."""
    return CT.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=replication,
        assignments=[CT.CreatableReplicaAssignment(partition_index=p, broker_ids=list(b)) for p, b in assignments],
        configs=[CT.CreatableTopicConfig(name=k, value=v) for k, v in configs])


def create(version: int, *topics: CT.CreatableTopic, validate_only: bool = False, timeout_ms: int = 10000) -> Step:
    return Step(CT(topics=list(topics), timeout_ms=timeout_ms, validate_only=validate_only), version)


def created(*names: str, partitions: int = 1) -> list[Step]:
    """Set-up: create ``names`` and wait until both nodes' brokers know them (every partition led)."""
    return [create(CREATE_VERSION, *(topic(n, partitions) for n in names)), metadata(*names, until=no_error)]


def led(*suffixes: str):
    """``until`` predicate for a Metadata answer: the topics whose names end with ``suffixes`` have no error (the
    others may: a step that expects some names refused waits only for the created ones)."""
    def check(answer) -> bool:
        return all(t.error_code == 0 and all(p.error_code == 0 for p in t.partitions)
                   for t in answer.topics if t.name is not None and t.name.endswith(suffixes))
    return check


def partition_counts(**counts: int):
    """``until`` predicate for a Metadata answer: each topic named ``<ns>.<key>`` has that many partitions, all led
    (a broker learns of new partitions a moment after the controller answered)."""
    def check(answer) -> bool:
        got = {t.name.rpartition(".")[2]: t for t in answer.topics if t.name is not None}
        return all(name in got and len(got[name].partitions) == n and not any(error_codes(got[name]))
                   for name, n in counts.items())
    return check


def metadata(*names: str, until=None, version: int = METADATA_VERSION) -> Step:
    """Metadata for ``names`` (never auto-creating): what exists after the steps before it."""
    return Step(MD(topics=[MD.MetadataRequestTopic(name=n) for n in names], allow_auto_topic_creation=False), version,
                until=until)


def batch(count: int, *, timestamp: int = 1_700_000_000_000) -> bytes:
    """A RecordBatch v2 of ``count`` records with fixed keys, values and timestamps (1 ms apart)."""
    b = RecordBatchBuilder(base_offset=0)
    for i in range(count):
        b.append(b"k%d" % i, b"v%d" % i, timestamp=timestamp + i)
    return b.build()


def produce(name: str, partition: int, records: bytes, version: int = 9) -> Step:
    """Produce ``records`` to one partition with acks=-1, again while it is refused: a broker may list a new
    partition's leader in Metadata a moment before its replica leads (NOT_LEADER_OR_FOLLOWER, nothing written)."""
    P = w.ProduceRequest
    return Step(P(transactional_id=None, acks=-1, timeout_ms=10000, topic_data=[P.TopicProduceData(
        name=name, partition_data=[P.PartitionProduceData(index=partition, records=records)])]), version,
        until=no_error)
