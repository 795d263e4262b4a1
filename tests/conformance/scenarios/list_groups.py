"""ListGroups at every version both serve (the scenario's own groups only: the node lists every scenario's): a
Stable group and one with offsets only, filtered by state (v4+) and type (v5), with unknown filter values."""

from __future__ import annotations

from conformance.data_steps import A, COMMIT_VERSION, commit, coordinated, member
from conformance.runner import Step, each_version

from kraftwire.protocol import messages as w


def _groups(v, states=(), types=()):
    return Step(w.ListGroupsRequest(states_filter=list(states), types_filter=list(types)), v, scope=True)


def _two_groups():
    """Group g with a Stable member, group h with committed offsets only (Empty)."""
    return [*member(), commit(COMMIT_VERSION, (A, 0, 5), group="{ns}.h")]


CASES = {
    "all": lambda v: [*_two_groups(), _groups(v)],
    "by-state": lambda v: [*_two_groups(), _groups(v, states=["Stable"]), _groups(v, states=["empty"])]
    if v >= 4 else None,
    "unknown-state": lambda v: [*_two_groups(), _groups(v, states=["Sleeping"])] if v >= 4 else None,
    "by-type": lambda v: [*_two_groups(), _groups(v, types=["classic"]), _groups(v, types=["Consumer"])]
    if v >= 5 else None,
    "unknown-type": lambda v: [*_two_groups(), _groups(v, types=["streams-ish"])] if v >= 5 else None,
}

SCENARIOS = each_version("ListGroups", coordinated(CASES), config="coordinators")
