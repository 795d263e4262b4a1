"""LeaveGroup of static members (KIP-345, v3+) on the "coordinators" pair: a member with a group instance id
leaves by its instance id and member id; the same instance id with another member id is a fenced instance
(FENCED_INSTANCE_ID: the member stays, DescribeGroups after shows it), and an instance id the group never saw is
an unknown member. Mirrors Kafka's LeaveGroupRequestTest and GroupMetadataManagerTest's static member leave
cases."""

from __future__ import annotations

from conformance.data_steps import JOIN_VERSION, MEMBER, SYNC_VERSION, coordinated, describe_groups, join, sync
from conformance.runner import Step, each_version
from conformance.steps import created

from kraftwire.protocol import messages as w

A, G, INSTANCE = "{ns}.a", "{ns}.g", "{ns}.i"
LG = w.LeaveGroupRequest


def static_member() -> list[Step]:
    """Topic A and one static member (instance ``INSTANCE``) through its first rebalance: Stable."""
    return [*created(A), join(JOIN_VERSION, instance_id=INSTANCE), sync(SYNC_VERSION)]


def leave_as(v, member_id, instance_id=INSTANCE) -> Step:
    return Step(LG(group_id=G, members=[LG.MemberIdentity(member_id=member_id, group_instance_id=instance_id)]), v)


CASES = {
    "static-member": lambda v: [*static_member(), leave_as(v, MEMBER), describe_groups()] if v >= 3 else None,
    "fenced-instance": lambda v: [*static_member(), leave_as(v, "{ns}-impostor"), describe_groups()]
    if v >= 3 else None,
    "unknown-instance": lambda v: [*static_member(), leave_as(v, "{ns}-nobody", "{ns}.other"), describe_groups()]
    if v >= 3 else None,
}

SCENARIOS = each_version("LeaveGroup", coordinated(CASES), config="coordinators")
