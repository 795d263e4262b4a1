"""OffsetDelete (v0): a group with offsets only, a group whose member is subscribed to the topic
(GROUP_SUBSCRIBED_TO_TOPIC), an unknown group, an unknown topic, an empty group id; each followed by OffsetFetch."""

from __future__ import annotations

from conformance.data_steps import (A, COMMIT_VERSION, GENERATION, MEMBER, OFFSET_FETCH_VERSION, commit, coordinated,
                                    member, offset_fetch)
from conformance.runner import Step, each_version
from conformance.steps import created

from kraftwire.protocol import messages as w

R = w.OffsetDeleteRequest


def delete(v, *parts, group="{ns}.g"):
    """OffsetDelete of ``parts`` — (topic, [partition, ...])."""
    return Step(R(group_id=group, topics=[R.OffsetDeleteRequestTopic(name=n, partitions=[
        R.OffsetDeleteRequestPartition(partition_index=p) for p in ps]) for n, ps in parts]), v)


def _look():
    return offset_fetch(OFFSET_FETCH_VERSION, (A, [0, 1]))


CASES = {
    "offsets-only": lambda v: [*created(A, partitions=2), commit(COMMIT_VERSION, (A, 0, 5), (A, 1, 6)),
                               delete(v, (A, [0])), _look()],
    "subscribed": lambda v: [*member(), commit(COMMIT_VERSION, (A, 0, 5), generation=GENERATION, member_id=MEMBER),
                             delete(v, (A, [0])), _look()],
    "unknown-group": lambda v: [*created(A), delete(v, (A, [0]))],
    "unknown-topic": lambda v: [*created(A), commit(COMMIT_VERSION, (A, 0, 5)),
                                delete(v, ("{ns}.missing", [0]), (A, [3])), _look()],
    "empty-group-id": lambda v: [delete(v, (A, [0]), group="")],
}

SCENARIOS = each_version("OffsetDelete", coordinated(CASES), config="coordinators")
