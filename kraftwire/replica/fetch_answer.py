"""How Kafka 4.4 shapes a consumer's Fetch answer around the reads (``KafkaApis.handleFetchRequest``,
``FetchRequest.getErrorResponse``, ``FetchSession``), found by the conformance run (issue #36).

* **Order.** The partitions read come first, in request order; then those refused before any read — an unknown
  topic id (v13+), a topic the principal may not read, a topic or partition the metadata does not know — each
  answered with every offset -1 and an empty (not null) list of aborted transactions; each topic where its first
  partition lands.
* **A refused read** (an offset out of range, a fenced epoch, a storage error) carries no offsets either: high
  watermark, last stable offset and log start offset -1.
* **Sessions** (KIP-227, ``kraftwire.replica.fetch_sessions``) decide which partitions are read and listed; a
  request whose session metadata cannot be used (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
  FETCH_SESSION_TOPIC_ID_ERROR) is answered with that error, session id 0 and no partitions, in every version.
* **Where the leader is** (KIP-951, v16+, consumers only: a follower's refused fetch lists no endpoints): a consumer
  asking a broker that holds no replica of a partition gets
  NOT_LEADER_OR_FOLLOWER with the partition's current leader and epoch from the metadata, and the answer lists
  those leaders' endpoints (``node_endpoints``) so the client need not refresh its metadata first.
* **The debugging consumer** (replica id -2, ``FetchRequest.DEBUGGING_CONSUMER_ID``; kafka-replica-verification
  fetches as it) is not a consumer to Kafka: it may read any replica, leader or follower, up to the log end
  (``reads_any_replica``).
* **A request Kafka cannot handle** (an isolation level it does not know: the error of the exception it raises is
  UNKNOWN_SERVER_ERROR): from v13 the error at the top and no partitions; before, the error at the top and in every
  partition asked, again with offsets -1.
"""

from __future__ import annotations

from kraftwire.error_codes import (FENCED_LEADER_EPOCH, FETCH_SESSION_ID_NOT_FOUND, FETCH_SESSION_TOPIC_ID_ERROR,
                                   INVALID_FETCH_SESSION_EPOCH, NOT_LEADER_OR_FOLLOWER, UNKNOWN_SERVER_ERROR)
from kraftwire.protocol import messages as w

__all__ = ["READ", "REFUSED", "ISOLATION_LEVELS", "request_error", "error_answer", "refused", "in_answer_order",
           "by_topic",
           "LEADER_HINTS_SINCE", "hinted_leaders", "fetching_replica", "DEBUGGING_REPLICA", "reads_any_replica"]

#: the groups a partition's answer falls in, in the order Kafka answers them
READ, REFUSED = 0, 1
ISOLATION_LEVELS = (0, 1)
#: the errors of a request's session metadata: answered without partitions and without a session
SESSION_ERRORS = (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR)
#: where the top-level error code starts (v7) and where the partitions stop going along with it (v13)
TOP_LEVEL_ERROR_SINCE, NO_PARTITIONS_SINCE = 7, 13
#: the version from which a consumer's NOT_LEADER_OR_FOLLOWER carries the leader and the answer its endpoint
LEADER_HINTS_SINCE = 16
#: Kafka's debugging consumer's replica id
DEBUGGING_REPLICA = -2


def reads_any_replica(replica: int) -> bool:
    """Whether the fetcher may read a follower replica, and up to its log end (the debugging consumer)."""
    return replica == DEBUGGING_REPLICA


def fetching_replica(body, version: int) -> tuple[int, int]:
    """(replica id, broker epoch) of the fetcher: a negative id for a consumer; the epoch -1 before v15."""
    if version >= 15:
        return body.replica_state.replica_id, body.replica_state.replica_epoch
    return body.replica_id, -1


def hinted_leaders(response) -> set[int]:
    """The leaders a Fetch answer's refused partitions point to (KIP-951): the brokers whose endpoints go along."""
    return {p.current_leader.leader_id for t in response.responses for p in t.partitions
            if p.error_code in (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH) and p.current_leader is not None
            and p.current_leader.leader_id >= 0}


def request_error(body, version: int) -> int:
    """The error for a whole consumer Fetch request once its session is settled, before any partition (0: none):
    Kafka reads the isolation level after ``FetchManager.newContext``, so a request refused here has already moved
    its session on."""
    if version >= 4 and body.isolation_level not in ISOLATION_LEVELS:
        return UNKNOWN_SERVER_ERROR
    return 0


def refused(partition: int, error: int):
    """A partition answered ``error`` without a read (``FetchResponse.partitionResponse``)."""
    return w.FetchResponse.PartitionData(partition_index=partition, error_code=error, high_watermark=-1,
                                         last_stable_offset=-1, log_start_offset=-1, aborted_transactions=[],
                                         preferred_read_replica=-1, records=b"")


def error_answer(body, version: int, error: int):
    """The answer to a request refused as a whole (``request_error``)."""
    R = w.FetchResponse
    topics = []
    if error not in SESSION_ERRORS and version < NO_PARTITIONS_SINCE:
        topics = [R.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id,
                                           partitions=[refused(p.partition, error) for p in t.partitions])
                  for t in body.topics]
    session = 0 if error in SESSION_ERRORS else body.session_id
    return R(throttle_time_ms=0, error_code=error, session_id=session, responses=topics)


def in_answer_order(answers: list[tuple[int, object, object]]) -> list[tuple[object, object]]:
    """``answers`` — (group, item, partition answer) in request order — as Kafka lists them, (item, answer): the
    partitions read first, then those refused."""
    return [(item, answer) for _, item, answer in sorted(answers, key=lambda a: a[0])]


def by_topic(pairs, key) -> list[tuple[tuple, list]]:
    """(item, partition answer) pairs grouped as (``key(item)``, partition answers), each topic where its first
    partition lands."""
    topics: dict[tuple, list] = {}
    for item, answer in pairs:
        topics.setdefault(key(item), []).append(answer)
    return list(topics.items())
