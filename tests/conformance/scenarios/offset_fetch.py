"""OffsetFetch at every version both serve: committed offsets with their metadata, partitions and topics never
committed, every committed partition (no topics, v2+), an unknown group, an empty group id, several groups at once
(v8+), a classic group's member id and epoch (v9), and read_committed (require_stable, v7+) over a transaction's
pending offsets (UNSTABLE_OFFSET_COMMIT). The cases whose answer does not change with the version run at the key
versions only (every_and_key_versions)."""

from __future__ import annotations

from conformance.data_steps import (A, COMMIT_VERSION, add_offsets, commit, coordinated, every_and_key_versions, member,
                                    offset_fetch, transactional, txn_offset_commit)
from conformance.runner import ZERO_UUID, Step, TopicId
from conformance.steps import created

from kraftwire.protocol import messages as w

R = w.OffsetFetchRequest


def _committed():
    """Topic A (two partitions) with group g's offsets 5 and 7, group h's 9 on partition 0."""
    return [*created(A, partitions=2), commit(COMMIT_VERSION, (A, 0, 5), (A, 1, 7)),
            commit(COMMIT_VERSION, (A, 0, 9), group="{ns}.h")]


def _several(v):
    if v < 8:
        return None
    return [*_committed(), Step(R(groups=[
        R.OffsetFetchRequestGroup(group_id="{ns}.g",
                                  topics=[R.OffsetFetchRequestTopics(  # by id from v10
                                      name="" if v >= 10 else A, topic_id=TopicId(A) if v >= 10 else ZERO_UUID,
                                      partition_indexes=[0])]),
        R.OffsetFetchRequestGroup(group_id="{ns}.h", topics=None),
        R.OffsetFetchRequestGroup(group_id="{ns}.unknown", topics=None)]), v)]


def _member_epoch(v, member_id, epoch):
    if v < 9:
        return None
    return [*member(), Step(R(groups=[R.OffsetFetchRequestGroup(group_id="{ns}.g", member_id=member_id,
                                                                member_epoch=epoch, topics=None)]), v)]


EVERY = {
    "committed": lambda v: [*_committed(), offset_fetch(v, (A, [0, 1, 2]), ("{ns}.missing", [0]))],
    "unknown-group": lambda v: [*created(A), offset_fetch(v, (A, [0]), group="{ns}.unknown")],
}

SOME = {
    "all-partitions": lambda v: [*_committed(), offset_fetch(v, None)] if v >= 2 else None,
    "unknown-group-all": lambda v: [offset_fetch(v, None, group="{ns}.unknown")] if v >= 2 else None,
    "empty-group-id": lambda v: [offset_fetch(v, (A, [0]), group="")],
    "several-groups": _several,
    "classic-member-epoch": lambda v: _member_epoch(v, "{ns}-nobody", 3),
    "stable-pending-transaction": lambda v: [
        *created(A), *transactional(), add_offsets(3), txn_offset_commit(3, (A, 0, 4)),
        offset_fetch(v, (A, [0]), require_stable=True), offset_fetch(v, (A, [0]))] if v >= 7 else None,
}

SCENARIOS = every_and_key_versions("OffsetFetch", coordinated(EVERY), coordinated(SOME), 2, 7, 8, config="coordinators")
