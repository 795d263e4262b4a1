"""Follower fetching (KIP-392): which replica a leader tells a consumer to read from (Kafka's
``ReplicaManager.findPreferredReadReplica`` with its ``RackAwareReplicaSelector``). Pure: the Fetch handler
(``server/apis/fetch_apis.py``) gives the partition's replica state, the client's rack and the replicas' racks on the
client's listener, and answers ``preferred_read_replica`` as told.

The rules, as Kafka 4.4 applies them:

* **Who asks.** Only a consumer's Fetch from v11 (the version that carries ``RackId``; Kafka builds no client
  metadata below it, and a replica broker's fetch, replica id >= 0, never gets one), only on the partition's
  leader. Without ``replica.selector.class`` nothing is selected. Such a fetch may also be sent to a follower,
  which serves it up to its own high watermark (Kafka's ``FetchParams.fetchOnlyLeader``); an older one gets
  NOT_LEADER_OR_FOLLOWER there.
* **Candidates.** The leader itself, and each follower in the ISR whose log, as the leader last heard of it, covers
  the fetch offset (log start <= offset <= log end). A follower that has not fetched in this leader epoch has an
  unknown log end (Kafka's -1) and is never one: a lagging follower would keep the consumer behind.
* **Endpoints.** A replica's rack is its registration's, on the client's listener, for registered unfenced brokers
  only (``getPartitionReplicaEndpoints``); a replica without such an endpoint matches no rack and is never answered.
* **The rack-aware choice.** A client without a rack reads from the leader. Otherwise, among the candidates in its
  rack: the leader when it is one of them, else the most caught-up one — the largest log end, then the least time
  since it was last caught up, then the largest broker id (``ReplicaView.comparator``); no candidate in its rack:
  the leader.
* **The answer.** The leader chosen is no preferred replica (-1: read here). A follower chosen is answered in
  ``preferred_read_replica`` with no records, the leader's offsets, and at once (never parked for MinBytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from kraftwire.config import RACK_AWARE_SELECTOR
from kraftwire.metadata.answers import broker_endpoint
from kraftwire.replica.partition import LEADER, NEVER_MS, ReplicaState

__all__ = ["RACK_AWARE_SELECTOR", "CLIENT_METADATA_SINCE", "NO_PREFERENCE", "ReplicaView",
           "select_rack_aware", "has_client_metadata", "preferred_read_replica", "replica_racks"]

#: the Fetch version from which a consumer sends its rack and may read from a follower (KIP-392)
CLIENT_METADATA_SINCE = 11
#: ``preferred_read_replica`` when the consumer should keep reading where it is
NO_PREFERENCE = -1


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """One candidate replica: its ``rack`` (None: none configured; ``has_endpoint`` False: none on the client's
    listener), its log end as the leader knows it and the milliseconds since it was last caught up (0 for the
    leader)."""

    broker_id: int
    rack: str | None
    log_end: int
    since_caught_up_ms: int
    has_endpoint: bool = True

    def caught_up_key(self) -> tuple[int, int, int]:
        """Kafka's ``ReplicaView.comparator``: the larger is the more caught-up."""
        return self.log_end, -self.since_caught_up_ms, self.broker_id


def select_rack_aware(client_rack: str | None, replicas: list[ReplicaView], leader: ReplicaView) -> ReplicaView:
    """Kafka's ``RackAwareReplicaSelector.select``: ``replicas`` holds every candidate, the ``leader`` among them."""
    if not client_rack:
        return leader
    same_rack = [r for r in replicas if r.has_endpoint and r.rack == client_rack]
    if not same_rack:
        return leader
    if leader in same_rack:
        return leader
    return max(same_rack, key=ReplicaView.caught_up_key)


def has_client_metadata(version: int, replica_id: int) -> bool:
    """Whether a Fetch carries what KIP-392 needs (Kafka's ``ClientMetadata``): a consumer's (any negative replica
    id, the debugging consumer's too), from v11. Such a fetch may read a follower and may be sent to one."""
    return version >= CLIENT_METADATA_SINCE and replica_id < 0


def preferred_read_replica(state: ReplicaState, *, selector: str, client_rack: str | None, fetch_offset: int,
                           log_end: int, racks: Mapping[int, str | None], now_ms: int) -> int:
    """The replica a consumer whose fetch ``has_client_metadata`` should read ``state``'s partition from at
    ``fetch_offset`` (``NO_PREFERENCE``: here). ``selector``: ``replica.selector.class`` ("": none); ``log_end``:
    this leader's log end; ``racks``: broker id -> rack of each replica with an endpoint on the client's listener
    (registered and unfenced)."""
    if not selector or state.role != LEADER:
        return NO_PREFERENCE
    leader = ReplicaView(state.broker_id, racks.get(state.broker_id), log_end, 0, state.broker_id in racks)
    candidates = [leader]
    for broker, f in state.followers.items():
        known_end = f.end_offset if f.last_fetch_ms != NEVER_MS else -1
        if broker in state.isr and f.start_offset <= fetch_offset <= known_end:
            candidates.append(ReplicaView(broker, racks.get(broker), known_end, now_ms - f.caught_up_ms,
                                          broker in racks))
    chosen = select_rack_aware(client_rack, candidates, leader)
    return chosen.broker_id if chosen is not leader and chosen.has_endpoint else NO_PREFERENCE


def replica_racks(image, replicas, listener: str) -> dict[int, str | None]:
    """Broker id -> rack of each of ``replicas`` with an endpoint on ``listener`` in ``image``: registered and
    unfenced (Kafka's ``getPartitionReplicaEndpoints``)."""
    return {b: image.brokers[b].rack for b in replicas if broker_endpoint(image, b, listener) is not None}
