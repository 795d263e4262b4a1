"""Share groups' APIs under ACLs, on the "sasl-acl" pair (StandardAuthorizer, allow.everyone.if.no.acl.found false,
share.version 2): what the ordinary user alice is answered with no ACL, with the group's ACL but not the topic's,
and (where the answer needs no share-partition state) with both — ShareGroupHeartbeat (READ on the group, DESCRIBE on
each subscribed topic), ShareGroupDescribe (DESCRIBE on the group), ShareFetch and ShareAcknowledge (READ on the
group, READ on each topic), DescribeShareGroupOffsets (DESCRIBE, DESCRIBE), AlterShareGroupOffsets (READ, READ),
DeleteShareGroupOffsets (DELETE, READ), DeleteGroups of a share group (DELETE) and ListGroups of the share type
(the groups alice may DESCRIBE).

The super user (admin) sets up the topic and the group's member. Each scenario ends by deleting alice's ACLs
(``revoke``). Kafka 4.4's share-state persister does not answer on this pair (its InitializeShareGroupState,
ReadShareGroupState and ReadShareGroupStateSummary time out or fail to find the share coordinator: a share-partition
is never initialized, an offsets alteration answers "Error in find coordinator", a described group's offsets and a
share group's deletion get no answer within 30 s), so the allowed offsets requests, fetches of records and
deletions are compared on the "share" pair (share_groups.py) and not here."""

from __future__ import annotations

from conformance.acl_steps import ALICE, USER_ALICE, as_user, binding, grant, revoke
from conformance.runner import Scenario, Step
from conformance.scenarios.share_groups import (SD, SH, A, G, M, alter_offsets, delete_offsets, describe_offsets,
                                                heartbeat, share_ack, share_fetch)
from conformance.steps import created

from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op, ResourceType as Res

FC, LG, DG = w.FindCoordinatorRequest, w.ListGroupsRequest, w.DeleteGroupsRequest
H = "{ns}.h"


def alice(*steps: Step) -> list[Step]:
    return as_user(ALICE, *steps)


def group_acl(op: int, name: str = G):
    return binding(Res.GROUP, name, op)


def topic_acl(op: int):
    return binding(Res.TOPIC, A, op)


#: the topic made, and the group coordinator ready: a member of another group joins until Kafka answers it (it
#: answers COORDINATOR_LOAD_IN_PROGRESS a while after FindCoordinator found the coordinator), then leaves
READY = [
    *created(A),
    Step(FC(key_type=0, coordinator_keys=[G]), 6, until=lambda a: all(c.error_code == 0 for c in a.coordinators),
         probe=True),
    heartbeat(0, until=lambda a: a.error_code == 0, probe=True, group="{ns}.warm"),
    heartbeat(-1, probe=True, group="{ns}.warm"),
]
#: READY, and admin's member of G (its join answered; its assignment stays empty, see the module docstring)
MEMBER = [*READY, heartbeat(0)]


def describe(operations: bool = False) -> Step:
    return Step(SD(group_ids=[G], include_authorized_operations=operations), 1)


def list_groups() -> Step:
    return Step(LG(states_filter=[], types_filter=["share"]), 5, scope=True)


HEARTBEAT = [
    *READY,
    *alice(heartbeat(0)),
    *grant(group_acl(Op.READ)),
    *alice(heartbeat(0)),
    *grant(topic_acl(Op.DESCRIBE)),
    *alice(heartbeat(0), heartbeat(-1)),
    *revoke(USER_ALICE),
]

DESCRIBE = [
    *MEMBER,
    *alice(describe()),
    *grant(group_acl(Op.DESCRIBE)),
    *alice(describe(), describe(operations=True)),
    heartbeat(-1),
    *revoke(USER_ALICE),
]

#: alice fetches on one connection (share_fetch's "c") as admin's member: refused as a whole without READ on the
#: group; with it the session opens and the partition is refused without READ on the topic, in the fetch and in
#: the acknowledgement
FETCH = [
    *MEMBER,
    *alice(share_fetch(0)),
    *grant(group_acl(Op.READ)),
    *alice(share_fetch(0), share_ack(1, [(0, 0, 1)]), share_fetch(-1)),
    heartbeat(-1),
    *revoke(USER_ALICE),
]

#: without a session: refused as a whole without READ on the group, then the session's refusal
ACKNOWLEDGE = [
    *MEMBER,
    *alice(share_ack(1, [(0, 0, 1)])),
    *grant(group_acl(Op.READ)),
    *alice(share_ack(1, [(0, 0, 1)])),
    heartbeat(-1),
    *revoke(USER_ALICE),
]

OFFSETS_DESCRIBED = [
    *MEMBER,
    heartbeat(-1),
    *alice(describe_offsets((G, None), (G, {A: [0]}))),
    *grant(group_acl(Op.DESCRIBE)),
    *alice(describe_offsets((G, {A: [0]}))),
    *revoke(USER_ALICE),
]

OFFSETS_ALTERED = [
    *READY,
    *alice(alter_offsets(G, {A: {0: 1}})),
    *grant(group_acl(Op.READ)),
    *alice(alter_offsets(G, {A: {0: 1}})),
    *revoke(USER_ALICE),
]

OFFSETS_DELETED = [
    *MEMBER,
    heartbeat(-1),
    *alice(delete_offsets(G, A)),
    *grant(group_acl(Op.DELETE)),
    *alice(delete_offsets(G, A)),
    *revoke(USER_ALICE),
]

#: two empty share groups (their members subscribed to a topic no one has, so nothing to initialize, and left);
#: alice lists those it may DESCRIBE and may delete neither without DELETE
GROUPS = [
    *READY,
    *(step for group in (G, H) for step in (
        Step(SH(group_id=group, member_id=M, member_epoch=0, rack_id=None, subscribed_topic_names=["{ns}.none"]),
             1),
        Step(SH(group_id=group, member_id=M, member_epoch=-1, rack_id=None, subscribed_topic_names=None), 1))),
    *alice(list_groups(), Step(DG(groups_names=[G, H]), 2)),
    *grant(group_acl(Op.DESCRIBE)),
    *alice(list_groups(), Step(DG(groups_names=[G, H]), 2)),
    *revoke(USER_ALICE),
]

SCENARIOS = [Scenario(api, version, name, steps, config="sasl-acl") for api, version, name, steps in (
    ("ShareGroupHeartbeat", 1, "acls", HEARTBEAT),
    ("ShareGroupDescribe", 1, "acls", DESCRIBE),
    ("ShareFetch", 1, "acls", FETCH),
    ("ShareAcknowledge", 1, "acls", ACKNOWLEDGE),
    ("DescribeShareGroupOffsets", 1, "acls", OFFSETS_DESCRIBED),
    ("AlterShareGroupOffsets", 0, "acls", OFFSETS_ALTERED),
    ("DeleteShareGroupOffsets", 0, "acls", OFFSETS_DELETED),
    ("DeleteGroups", 2, "share-group-acls", GROUPS),
)]
