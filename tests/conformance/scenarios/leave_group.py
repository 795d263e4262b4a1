"""LeaveGroup at every version both serve: a Stable group's only member leaves (the group then Empty), unknown
members and groups, an empty group id, and from v3 a batch of members, some unknown."""

from __future__ import annotations

from conformance.data_steps import MEMBER, coordinated, describe_groups, leave, member
from conformance.runner import each_version

CASES = {
    "only-member": lambda v: [*member(), leave(v), describe_groups()],
    "unknown-member": lambda v: [*member(), leave(v, "{ns}.g", "{ns}-nobody"), describe_groups()],
    "unknown-group": lambda v: [leave(v, "{ns}.g", "{ns}-nobody")],
    "empty-group-id": lambda v: [leave(v, "", "{ns}-nobody")],
    "batch-with-unknown": lambda v: [*member(), leave(v, "{ns}.g", "{ns}-nobody", MEMBER),
                                     describe_groups()] if v >= 3 else None,
    "empty-member-list": lambda v: [*member(), leave(v, "{ns}.g", *[])] if v >= 3 else None,
}

SCENARIOS = each_version("LeaveGroup", coordinated(CASES), config="coordinators")
