"""KIP-848's consumer group protocol at every version both serve — ConsumerGroupHeartbeat and ConsumerGroupDescribe:
a member joins (epoch 0), an unknown group, an unknown member of a group, a fenced member epoch, an invalid regex
(v1); the group described, an unknown group."""

from __future__ import annotations

from conformance.data_steps import A, coordinated
from conformance.runner import Learned, Step, each_version
from conformance.steps import created

from kraftwire.protocol import messages as w

CH, CD = w.ConsumerGroupHeartbeatRequest, w.ConsumerGroupDescribeRequest
G = "{ns}.g"
#: a member id this side was told (v0: the coordinator's) or sent itself (v1: the client picks it, KIP-1082)
MEMBER = Learned("member_id", default="")
OWN_ID = "{ns}-member-one"


def heartbeat(v, member_id=MEMBER, epoch=0, topics=(A,), regex=None, group=G):
    return Step(CH(group_id=group, member_id=member_id, member_epoch=epoch, rebalance_timeout_ms=3000,
                   subscribed_topic_names=list(topics) if topics is not None else None,
                   subscribed_topic_regex=regex, server_assignor=None, topic_partitions=[] if epoch == 0 else None),
                v)


def join(v):
    """The first heartbeat: member epoch 0, a member id the client picked at v1 (none at v0)."""
    return heartbeat(v, member_id=OWN_ID if v >= 1 else "")


def assignable(topic: str = A) -> Step:
    """A wait (``probe``) until each side's group coordinator assigns ``topic``: a member of a group of its own
    joins, and joins again, until its assignment names it. Kafka's coordinator takes in a new topic a moment after
    its broker lists it (a join in between is assigned nothing, then rebalanced), kraftwire's at once."""
    return Step(CH(group_id="{ns}.probe", member_id="{ns}-probe", member_epoch=0, rebalance_timeout_ms=3000,
                   subscribed_topic_names=[topic], subscribed_topic_regex=None, server_assignor=None,
                   topic_partitions=[]), 1,
                until=lambda a: a.error_code != 0 or bool(a.assignment and a.assignment.topic_partitions), probe=True)


def ready(*names: str) -> list[Step]:
    """Set-up: topics ``names`` created, and each side's group coordinator assigning them."""
    return [*created(*names), *(assignable(n) for n in names)]


def describe(v, *groups):
    return Step(CD(group_ids=list(groups or (G,)), include_authorized_operations=False), v)


HEARTBEAT = {
    "join": lambda v: [*ready(A), join(v), describe(0)],
    "fenced-epoch": lambda v: [*ready(A), join(v), heartbeat(v, epoch=7)],
    "unknown-group": lambda v: [*created(A), heartbeat(v, member_id="{ns}-nobody", epoch=1)],
    # the group exists (a member joined), the member asking does not
    "unknown-member": lambda v: [*ready(A), join(v), heartbeat(v, member_id="{ns}-nobody", epoch=1)],
    "invalid-regex": lambda v: [heartbeat(v, member_id=OWN_ID, topics=None, regex="[unclosed")] if v >= 1 else None,
}

DESCRIBE = {
    "group": lambda v: [*ready(A), join(1), describe(v)],
    "unknown-group": lambda v: [describe(v, "{ns}.unknown")],
}

SCENARIOS = [*each_version("ConsumerGroupHeartbeat", coordinated(HEARTBEAT), config="coordinators"),
             *each_version("ConsumerGroupDescribe", coordinated(DESCRIBE), config="coordinators")]
