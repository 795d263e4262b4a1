"""OffsetCommit at every version both serve: a standalone commit (generation -1, no member) read back, a member's commit
with its generation, a stale generation, an unknown member, a generation for a group that does not exist, an empty
group id, an unknown topic and partition, metadata above offset.metadata.max.bytes, and a commit while a second
member's join holds the group in a rebalance (REBALANCE_IN_PROGRESS). The cases whose answer does not change with the
version run at the key versions only (every_and_key_versions)."""

from __future__ import annotations

from conformance.data_steps import (A, GENERATION, JOIN_VERSION, MEMBER, OFFSET_FETCH_VERSION, commit, coordinated,
                                    describe_groups, every_and_key_versions, in_state, join, member, offset_fetch)
from conformance.runner import Learned, Step
from conformance.steps import created

from kraftwire.protocol import messages as w


def _look(*parts):
    return offset_fetch(OFFSET_FETCH_VERSION, *(parts or ((A, [0, 1]),)))


def _during_rebalance(v):
    first = Learned("member_id", at="JoinGroup#2")
    return [*member(), join(JOIN_VERSION), join(JOIN_VERSION, member_id=Learned("member_id"), background=True),
            describe_groups(until=in_state("PreparingRebalance")),
            commit(v, (A, 0, 3), generation=1, member_id=first), join(JOIN_VERSION, member_id=first)]


EVERY = {
    "standalone": lambda v: [*created(A, partitions=2), commit(v, (A, 0, 5), (A, 1, 7)), _look()],
    "member": lambda v: [*member(), commit(v, (A, 0, 3), generation=GENERATION, member_id=MEMBER), _look()],
    "stale-generation": lambda v: [*member(), commit(v, (A, 0, 3), generation=7, member_id=MEMBER), _look()],
}

SOME = {
    "unknown-member": lambda v: [*member(), commit(v, (A, 0, 3), generation=1, member_id="{ns}-nobody"), _look()],
    "member-without-generation": lambda v: [*member(), commit(v, (A, 0, 3), member_id=MEMBER), _look()],
    "generation-without-group": lambda v: [*created(A), commit(v, (A, 0, 3), generation=1, member_id="{ns}-m"),
                                           _look()],
    # Kafka takes it: the group "" is every scenario's, so it goes again at once
    "empty-group-id": lambda v: [*created(A), commit(v, (A, 0, 3), group=""),
                                 Step(w.DeleteGroupsRequest(groups_names=[""]), 2)],
    "unknown-topic": lambda v: [*created(A), commit(v, ("{ns}.missing", 0, 3), (A, 0, 3)), _look()],
    "unknown-partition": lambda v: [*created(A), commit(v, (A, 4, 3), (A, 0, 2)), _look((A, [0, 4]))],
    "metadata-too-large": lambda v: [*created(A), commit(v, (A, 0, 3), metadata="x" * 4097), _look()],
    "negative-offset": lambda v: [*created(A), commit(v, (A, 0, -5)), _look()],
    "during-rebalance": _during_rebalance,
}

SCENARIOS = every_and_key_versions("OffsetCommit", coordinated(EVERY), coordinated(SOME), 6, 8, config="coordinators")
