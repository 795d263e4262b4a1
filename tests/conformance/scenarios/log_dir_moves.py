"""AlterReplicaLogDirs at every version both serve, on the single-directory pair (each side's directory learned from
its DescribeLogDirs answer): a path that is not a log directory (absolute or relative), a partition moved to the
directory it is already in (nothing to do, no future replica in DescribeLogDirs afterwards), an unknown topic and
an unknown partition, one partition named under two paths (the last one counts). Kafka's
``AlterReplicaLogDirsRequestTest`` cases a second directory needs run against kraftwire alone
(``tests/server/test_log_dir_moves.py``, ``tests/kafka_software/test_log_dir_moves_tools.py``)."""

from __future__ import annotations

from conformance.data_steps import A
from conformance.runner import Learned, Step, each_version
from conformance.steps import created

from kraftwire.protocol import messages as w

AR, DL = w.AlterReplicaLogDirsRequest, w.DescribeLogDirsRequest
HERE = Learned("log_dir")  # the side's own log directory, from its DescribeLogDirs answer


def learn_dir():
    """DescribeLogDirs of a topic that does not exist: each side's directory, and no other scenario's topics."""
    return Step(DL(topics=[DL.DescribableLogDirTopic(topic="{ns}.none", partitions=[0])]), 4)


def alter(v, *moves):
    """AlterReplicaLogDirs of ``moves`` — (path, topic, [partition, ...])."""
    return Step(AR(dirs=[AR.AlterReplicaLogDir(path=path, topics=[AR.AlterReplicaLogDirTopic(
        name=topic, partitions=list(parts))]) for path, topic, parts in moves]), v)


def described(*parts):
    return Step(DL(topics=[DL.DescribableLogDirTopic(topic=A, partitions=list(parts))]), 4)


CASES = {
    "unknown-dir": lambda v: [*created(A), alter(v, ("/no/such/dir/{ns}", A, [0]))],
    "relative-dir": lambda v: [*created(A), alter(v, ("{ns}-logs", A, [0]))],
    "current-dir": lambda v: [*created(A), learn_dir(), alter(v, (HERE, A, [0])), described(0)],
    "unknown-topic": lambda v: [learn_dir(), alter(v, (HERE, "{ns}.missing", [0, 1]))],
    "unknown-topics": lambda v: [learn_dir(), alter(v, *((HERE, "{ns}.m" + c, [0, 3, 1]) for c in "abcdefg"))],
    "unknown-partition": lambda v: [*created(A), learn_dir(), alter(v, (HERE, A, [0, 7]))],
    "two-paths": lambda v: [*created(A), learn_dir(), alter(v, (HERE, A, [0]), ("/no/such/dir/{ns}", A, [0]))],
}

SCENARIOS = each_version("AlterReplicaLogDirs", CASES)
