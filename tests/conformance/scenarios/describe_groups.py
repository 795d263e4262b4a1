"""DescribeGroups at every version both serve: a Stable group, one with committed offsets and no members, an unknown
group, several at once, the authorized operations (v3+), an empty group id. The cases whose answer does not change
with the version run at the key versions only (every_and_key_versions)."""

from __future__ import annotations

from conformance.data_steps import A, COMMIT_VERSION, commit, coordinated, every_and_key_versions, member
from conformance.runner import Step
from conformance.steps import created

from kraftwire.protocol import messages as w


def describe(v, *groups, operations=False):
    return Step(w.DescribeGroupsRequest(groups=list(groups), include_authorized_operations=operations), v)


EVERY = {
    "stable": lambda v: [*member(), describe(v, "{ns}.g")],
    "unknown": lambda v: [describe(v, "{ns}.g")],
}

SOME = {
    "offsets-only": lambda v: [*created(A), commit(COMMIT_VERSION, (A, 0, 5)), describe(v, "{ns}.g")],
    "several": lambda v: [*member(), describe(v, "{ns}.g", "{ns}.unknown", "")],
    "authorized-operations": lambda v: [*member(), describe(v, "{ns}.g", "{ns}.unknown", operations=True)]
    if v >= 3 else None,
    "empty-group-id": lambda v: [describe(v, "")],
}

SCENARIOS = every_and_key_versions("DescribeGroups", coordinated(EVERY), coordinated(SOME), 3, config="coordinators")
