"""What a partition leader may answer to ListOffsets while its high watermark lags its epoch start (Kafka's
``Partition.fetchOffsetForTimestamp`` and ``ReplicaManager.fetchOffset``; our words). Pure: the ListOffsets
handlers look the offset up and ask here what may go out.

* **Who is a client.** A request whose replica id is -1 (a consumer or admin client). A follower broker (replica
  id ≥ 0, recovering from OFFSET_OUT_OF_RANGE) or the debugging id -2 is not: it reads up to the log end and is
  never refused for a lagging high watermark.
* **Last fetchable offset.** For a client the high watermark (READ_UNCOMMITTED) or the last stable offset
  (READ_COMMITTED); for anyone else the log end offset. A record found by timestamp (or max timestamp) at or past
  it is not answered (offset -1).
* **Lagging high watermark.** A new leader's high watermark below the start offset of its epoch may be behind the
  old leader's: a client's "latest", and a client's timestamp lookup that finds nothing below the last fetchable
  offset, get OFFSET_NOT_AVAILABLE (ListOffsets v5+; LEADER_NOT_AVAILABLE before), so the client retries instead
  of seeing an offset go back. Earliest (-2, -4), latest-tiered (-5) and earliest-pending-upload (-6) never are.
* **Nothing tiered.** kraftwire has no remote log: latest-tiered (-5) and earliest-pending-upload (-6, KIP-1023)
  find nothing (offset -1, epoch -1), as Kafka answers without tiered storage. -6 is ListOffsets v11's: asked at a
  lower version it is UNSUPPORTED_VERSION, as Kafka 4.4 answers (``timestamp_supported``).
* **Malformed requests** (as Kafka 4.4 answers them): a partition named twice is answered once, INVALID_REQUEST
  (``duplicate_partitions``); an isolation level other than 0 and 1 fails every partition with UNKNOWN_SERVER_ERROR
  (Kafka's IsolationLevel.forId throws; ``known_isolation``).
* **Order** (``in_kafka_order``). Kafka collects the partitions it may describe in a Scala mutable map keyed by
  topic partition and groups them by topic: the topics come in the order of a Scala immutable ``HashMap`` of their
  names (a topic named twice is answered once, all its partitions together), each topic's partitions in the order
  of a Scala mutable ``HashMap`` of them; the topics the principal may not describe follow, as the request lists
  them.
"""

from __future__ import annotations

from typing import Callable

from kraftwire.error_codes import LEADER_NOT_AVAILABLE, NONE, OFFSET_NOT_AVAILABLE
from kraftwire.java_order import scala_hash_order, scala_mutable_order, string_hash, topic_partition_hash

__all__ = ["CONSUMER_REPLICA_ID", "EARLIEST", "LATEST", "MAX_TIMESTAMP", "EARLIEST_LOCAL", "LATEST_TIERED",
           "EARLIEST_PENDING_UPLOAD", "NOTHING_TIERED", "is_client", "last_fetchable_offset", "lagging_error",
           "timestamp_supported", "duplicate_partitions", "known_isolation", "in_kafka_order"]

CONSUMER_REPLICA_ID = -1
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -1, -2, -3, -4, -5, -6
#: the special timestamps that look at the remote log, which kraftwire does not have
NOTHING_TIERED = (LATEST_TIERED, EARLIEST_PENDING_UPLOAD)
READ_COMMITTED = 1


def duplicate_partitions(topics) -> set[tuple[str, int]]:
    """The (topic, partition) pairs a ListOffsets request's ``topics`` name more than once."""
    seen, twice = set(), set()
    for t in topics:
        for p in t.partitions:
            key = (t.name, p.partition_index)
            (twice if key in seen else seen).add(key)
    return twice


def known_isolation(level: int) -> bool:
    """READ_UNCOMMITTED (0) or READ_COMMITTED (1)."""
    return level in (0, READ_COMMITTED)


def is_client(replica_id: int) -> bool:
    """Whether the request comes from a client (a consumer or admin), not from a broker replica."""
    return replica_id == CONSUMER_REPLICA_ID


def last_fetchable_offset(replica_id: int, isolation: int, high_watermark: int, last_stable, log_end: int) -> int:
    """The offset below which an answer may point; ``last_stable`` is called only for a READ_COMMITTED client."""
    if not is_client(replica_id):
        return log_end
    return last_stable() if isolation == READ_COMMITTED else high_watermark


def lagging_error(timestamp: int, replica_id: int, version: int, epoch_start_offset: int, high_watermark: int,
                  found_offset: int = -1, last_fetchable: int = 0) -> int:
    """NONE, or the error for a leader whose high watermark is below ``epoch_start_offset`` (-1: not leading an
    epoch). ``found_offset``: what a timestamp lookup found (-1: nothing)."""
    if not is_client(replica_id) or epoch_start_offset <= high_watermark:
        return NONE
    if timestamp in (EARLIEST, EARLIEST_LOCAL, *NOTHING_TIERED):
        return NONE
    if timestamp != LATEST and 0 <= found_offset < last_fetchable:
        return NONE
    return OFFSET_NOT_AVAILABLE if version >= 5 else LEADER_NOT_AVAILABLE


def timestamp_supported(timestamp: int, version: int) -> bool:
    """Whether ListOffsets at ``version`` may ask for ``timestamp``: earliest-pending-upload needs v11."""
    return timestamp != EARLIEST_PENDING_UPLOAD or version >= 11


def in_kafka_order(topics: list[tuple[str, list[int]]], refused: Callable[[str], bool]) -> list[tuple[str, list[int]]]:
    """The answer's ``(topic, partition indexes)`` in Kafka's order (see the module's account), from the request's
    ``topics`` (each partition once); ``refused(name)`` says the principal may not describe the topic."""
    merged: dict[str, list[int]] = {}
    for name, partitions in topics:
        if not refused(name):
            merged.setdefault(name, []).extend(partitions)
    answered = [(name, scala_mutable_order(merged[name], lambda p, name=name: topic_partition_hash(name, p)))
                for name in scala_hash_order(merged, string_hash)]
    return answered + [(name, partitions) for name, partitions in topics if refused(name)]
