"""Heartbeat at every version both serve: a Stable member's, one before its first sync, unknown members and groups, a
stale generation, an empty group id, and the heartbeat that tells a member a second member's join started a rebalance
(REBALANCE_IN_PROGRESS). The cases whose answer does not change with the version run at the key versions only
(every_and_key_versions)."""

from __future__ import annotations

from conformance.data_steps import (A, JOIN_VERSION, coordinated, describe_groups, every_and_key_versions, heartbeat,
                                    in_state, join, joined, leave, member)
from conformance.runner import Learned
from conformance.steps import created


def _during_rebalance(v):
    """A is Stable alone; B's join (in the background) starts a rebalance: A's heartbeat says so; then A leaves,
    which completes the rebalance with B alone."""
    first = Learned("member_id", at="JoinGroup#2")
    return [*member(), join(JOIN_VERSION), join(JOIN_VERSION, member_id=Learned("member_id"), background=True),
            describe_groups(until=in_state("PreparingRebalance")), heartbeat(v, member_id=first, generation=1),
            leave(3, "{ns}.g", first), describe_groups(until=in_state("CompletingRebalance"))]


EVERY = {
    "stable": lambda v: [*member(), heartbeat(v)],
    "unknown-member": lambda v: [*member(), heartbeat(v, member_id="{ns}-nobody", generation=1)],
}

SOME = {
    "before-sync": lambda v: [*created(A), *joined(), heartbeat(v)],
    "unknown-group": lambda v: [heartbeat(v, member_id="{ns}-nobody", generation=1)],
    "stale-generation": lambda v: [*member(), heartbeat(v, generation=0)],
    "empty-group-id": lambda v: [heartbeat(v, group="", member_id="{ns}-nobody", generation=1)],
    "during-rebalance": _during_rebalance,
}

SCENARIOS = every_and_key_versions("Heartbeat", coordinated(EVERY), coordinated(SOME), 3, config="coordinators")
