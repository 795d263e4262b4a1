"""JoinGroup (classic group protocol) at every version both serve: a one-member group through two rebalances, the member
id a v4+ join must come back with (MEMBER_ID_REQUIRED), a static member (v5+) replaced by a new instance, an unknown
member id, protocols that do not match the group's (INCONSISTENT_GROUP_PROTOCOL), session timeouts out of bounds, an
empty group id, and a second member whose join puts the group into a rebalance (REBALANCE_IN_PROGRESS for the first
member until it rejoins). The cases whose answer does not change with the version run at the key versions only
(every_and_key_versions)."""

from __future__ import annotations

from conformance.data_steps import (GENERATION, HEARTBEAT_VERSION, MEMBER, SYNC_VERSION, coordinated, describe_groups,
                                    every_and_key_versions, heartbeat, in_state, join, joined, member, sync)
from conformance.runner import Learned
from conformance.steps import created

A = "{ns}.a"


def _rebalance(v):
    """One member: joined, synced, heartbeats; rejoins (generation 2), syncs; then the group as described."""
    return [*created(A), *joined(v), sync(SYNC_VERSION), heartbeat(HEARTBEAT_VERSION),
            join(v, member_id=MEMBER), sync(SYNC_VERSION), describe_groups()]


def _second_member(v):
    """A second consumer joins a Stable group: its join waits for the first member, which hears of the rebalance in
    its heartbeat and rejoins; both joins then end with generation 2, and the first member syncs."""
    first = Learned("member_id", at="JoinGroup#2" if v >= 4 else "JoinGroup")
    second_join = [join(v), join(v, member_id=Learned("member_id"), background=True)] if v >= 4 else [
        join(v, background=True)]
    return [*created(A), *joined(v), sync(SYNC_VERSION, member_id=first),
            *second_join, describe_groups(until=in_state("PreparingRebalance")),
            heartbeat(HEARTBEAT_VERSION, member_id=first, generation=1),
            join(v, member_id=first), describe_groups(until=in_state("CompletingRebalance"))]


EVERY = {
    "one-member-rebalances": _rebalance,
    "member-id-required": lambda v: [*created(A), join(v), describe_groups()] if v >= 4 else None,
    "unknown-member-id": lambda v: [join(v, member_id="{ns}-nobody")],
    "session-timeout-too-small": lambda v: [join(v, session_ms=1000)],
}

SOME = {
    "second-member": _second_member,
    "static-member-replaced": lambda v: [
        *created(A), join(v, instance_id="{ns}-i"), sync(SYNC_VERSION),
        join(v, instance_id="{ns}-i"), heartbeat(HEARTBEAT_VERSION, member_id=Learned("member_id", at="JoinGroup"),
                                                 generation=GENERATION)] if v >= 5 else None,
    "unknown-member-in-group": lambda v: [*member(), join(v, member_id="{ns}-nobody")],
    "other-protocol-type": lambda v: [*member(), join(v, protocol_type="connect")],
    "no-common-protocol": lambda v: [*member(), join(v, protocols=[("roundrobin", b"")])],
    "member-changes-protocol": lambda v: [*member(), join(v, member_id=MEMBER, protocols=[("roundrobin", b"")])],
    "no-protocols": lambda v: [join(v, protocols=[])],
    "empty-protocol-type": lambda v: [join(v, protocol_type="")],
    "session-timeout-too-large": lambda v: [join(v, session_ms=1_800_001)],
    "empty-group-id": lambda v: [join(v, group="")],
}

SCENARIOS = every_and_key_versions("JoinGroup", coordinated(EVERY), coordinated(SOME), 4, 5, config="coordinators")
