"""Where a broker keeps the partitions it hosts, pure (Kafka's ``LogManager`` placement and the broker side of
KIP-858); the replica manager's log directories (``kraftwire.server.runtime.log_dirs``) ask and execute.

* **Placement.** A new partition goes to the online log directory holding the fewest partitions, the first listed
  on a tie (Kafka's ``nextLogDirs`` by partition count).
* **Fetching.** A partition whose registration changed is fetched from its leader when this broker follows it and
  a new leader epoch began or no fetcher has it (it just became a follower, or its fetcher dropped it after
  FENCED_LEADER_EPOCH); a partition this broker leads, or no longer hosts, is fetched by none (Kafka's
  ``makeLeaders`` / ``makeFollowers``).
* **Directory assignment.** With metadata version 3.7-IV2 or later the controller records each replica's log
  directory (AssignReplicasToDirs): a hosted partition whose registration names another directory for this broker
  than the one it lives in is told, unless a request for it is already on its way.
"""

from __future__ import annotations

from typing import Collection, Iterable, Mapping

from kraftwire.metadata.controller.topics import replica_dir
from kraftwire.replica.partition import FOLLOWER

__all__ = ["FOLLOW", "KEEP", "UNFOLLOW", "dirs_to_assign", "fetcher_action", "least_loaded"]

FOLLOW, KEEP, UNFOLLOW = "follow", "keep", "unfollow"


def fetcher_action(role: str, new_leader_epoch: bool, followed: bool) -> str:
    """What the replica fetchers do with a partition after its registration changed (``ReplicaState.apply``):
    FOLLOW (from its leader, again), KEEP as it is fetched, or UNFOLLOW. ``followed``: a fetcher of its leader has
    it now."""
    if role != FOLLOWER:
        return UNFOLLOW
    return FOLLOW if new_leader_epoch or not followed else KEEP


def least_loaded(roots: Iterable[str], offline: Collection[str], placed: Iterable[str]) -> str | None:
    """The directory of ``roots`` (in their order) for a new partition: online, holding the fewest of the partitions
    ``placed`` (each hosted partition's directory); None when every directory is offline."""
    order = [root for root in roots if root not in offline]
    counts = dict.fromkeys(order, 0)
    for root in placed:
        if root in counts:
            counts[root] += 1
    return min(order, key=lambda r: (counts[r], order.index(r))) if order else None


def dirs_to_assign(image, broker_id: int, placed: Mapping[tuple, object | None], assigning: Collection[tuple],
                   topics: Collection | None = None) -> dict:
    """{directory id: {topic id: [partition]}} to send in one AssignReplicasToDirs: the hosted partitions
    (``placed``: (topic id, partition) -> the id of the directory it lives in, None when unknown) whose
    registration in ``image`` names another directory for ``broker_id``, leaving out those in ``assigning`` (a
    request on its way) and, when ``topics`` is given, those of other topics."""
    wanted: dict = {}
    for (topic_id, index), mine in placed.items():
        if topics is not None and topic_id not in topics:
            continue
        topic = image.topics.get(topic_id)
        reg = topic.partitions.get(index) if topic is not None else None
        if reg is None or mine is None or (topic_id, index) in assigning:
            continue
        if replica_dir(reg, broker_id) != mine:
            wanted.setdefault(mine, {}).setdefault(topic_id, []).append(index)
    return wanted
