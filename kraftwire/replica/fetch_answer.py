"""How Kafka 4.4 shapes a consumer's Fetch answer around the reads (``KafkaApis.handleFetchRequest``,
``FetchRequest.getErrorResponse``, ``FetchSession``), found by the conformance run (issue #36).

* **Order.** The partitions read come first, in request order; then those refused before any read — an unknown
  topic id (v13+), a topic the principal may not read, a topic or partition the metadata does not know — each
  answered with every offset -1 and an empty (not null) list of aborted transactions; each topic where its first
  partition lands.
* **A refused read** (an offset out of range, a fenced epoch, a storage error) carries no offsets either: high
  watermark, last stable offset and log start offset -1.
* **Sessions** (KIP-227): kraftwire keeps none — a full request gets session id 0, which tells the client to keep
  sending full requests — so an incremental one (an epoch other than 0 and -1) names a session this node does not
  have: FETCH_SESSION_ID_NOT_FOUND, no partitions.
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

from kraftwire.error_codes import FENCED_LEADER_EPOCH, FETCH_SESSION_ID_NOT_FOUND, NOT_LEADER_OR_FOLLOWER, UNKNOWN_SERVER_ERROR
from kraftwire.protocol import messages as w

__all__ = ["READ", "REFUSED", "ISOLATION_LEVELS", "request_error", "error_answer", "refused", "ordered",
           "LEADER_HINTS_SINCE", "hinted_leaders", "fetching_replica", "DEBUGGING_REPLICA", "reads_any_replica"]

#: the groups a partition's answer falls in, in the order Kafka answers them
READ, REFUSED = 0, 1
ISOLATION_LEVELS = (0, 1)
#: the session epochs of a full request (0: create a session, -1: none)
FULL_EPOCHS = (0, -1)
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
    """The error for a whole consumer Fetch request, before any partition (0: none)."""
    if version >= TOP_LEVEL_ERROR_SINCE and body.session_epoch not in FULL_EPOCHS:
        return FETCH_SESSION_ID_NOT_FOUND
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
    if error != FETCH_SESSION_ID_NOT_FOUND and version < NO_PARTITIONS_SINCE:
        topics = [R.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id,
                                           partitions=[refused(p.partition, error) for p in t.partitions])
                  for t in body.topics]
    session = 0 if error == FETCH_SESSION_ID_NOT_FOUND else body.session_id
    return R(throttle_time_ms=0, error_code=error, session_id=session, responses=topics)


def ordered(answers: list[tuple[int, tuple, object]]) -> list[tuple[tuple, list]]:
    """``answers`` — (group, topic key, partition answer) in request order — as Kafka lists them: (topic key,
    partition answers) pairs, the partitions read first, each topic where its first partition lands."""
    topics: dict[tuple, list] = {}
    for _, key, answer in sorted(answers, key=lambda a: a[0]):
        topics.setdefault(key, []).append(answer)
    return list(topics.items())
