"""SyncGroup at every version both serve: the leader's assignment of a one-member group, a member that is not one, a
stale generation, a sync before the join completed, the protocol type and name v5 requires (missing, or not the
group's), a follower's sync (no assignments), and a sync while a second member's join holds the group in a rebalance
(REBALANCE_IN_PROGRESS). The cases whose answer does not change with the version run at the key versions only
(every_and_key_versions)."""

from __future__ import annotations

from conformance.data_steps import (A, JOIN_VERSION, coordinated, describe_groups, every_and_key_versions, in_state,
                                    join, joined, member, sync)
from conformance.runner import Learned
from conformance.steps import created


def _during_rebalance(v):
    """A is Stable alone; B's join (v7, in the background) starts a rebalance; A's sync of generation 1 is refused
    until A rejoins."""
    first = Learned("member_id", at="JoinGroup#2")
    return [*member(), join(JOIN_VERSION), join(JOIN_VERSION, member_id=Learned("member_id"), background=True),
            describe_groups(until=in_state("PreparingRebalance")), sync(v, member_id=first, generation=1),
            join(JOIN_VERSION, member_id=first)]


EVERY = {
    "leader-assigns": lambda v: [*created(A), *joined(), sync(v), describe_groups()],
    "unknown-member": lambda v: [*member(), sync(v, member_id="{ns}-nobody", generation=1)],
    "stale-generation": lambda v: [*member(), sync(v, generation=7)],
}

SOME = {
    "follower-without-assignments": lambda v: [*created(A), *joined(), sync(v, assign=False), describe_groups()],
    "unknown-group": lambda v: [sync(v, member_id="{ns}-nobody", generation=1)],
    "empty-group-id": lambda v: [sync(v, group="", member_id="{ns}-nobody", generation=1)],
    "missing-protocol": lambda v: [*created(A), *joined(), sync(v, protocol_type=None, protocol_name=None),
                                   describe_groups()] if v >= 5 else None,
    "other-protocol-type": lambda v: [*created(A), *joined(), sync(v, protocol_type="connect")] if v >= 5 else None,
    "other-protocol-name": lambda v: [*created(A), *joined(), sync(v, protocol_name="roundrobin")] if v >= 5 else None,
    "during-rebalance": _during_rebalance,
}

SCENARIOS = every_and_key_versions("SyncGroup", coordinated(EVERY), coordinated(SOME), 3, config="coordinators")
