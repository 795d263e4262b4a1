"""DeleteGroups at every version both serve: a group with offsets only (Empty), a group with a member
(NON_EMPTY_GROUP), an unknown group, an empty group id, several at once; each followed by DescribeGroups."""

from __future__ import annotations

from conformance.data_steps import A, COMMIT_VERSION, commit, coordinated, describe_groups, member
from conformance.runner import Step, each_version
from conformance.steps import created

from kraftwire.protocol import messages as w


def delete(v, *groups):
    return Step(w.DeleteGroupsRequest(groups_names=list(groups)), v)


CASES = {
    "empty-group": lambda v: [*created(A), commit(COMMIT_VERSION, (A, 0, 5)), delete(v, "{ns}.g"),
                              describe_groups()],
    "non-empty-group": lambda v: [*member(), delete(v, "{ns}.g"), describe_groups()],
    "unknown-group": lambda v: [delete(v, "{ns}.g")],
    "empty-group-id": lambda v: [delete(v, "")],
    "several": lambda v: [*member(), commit(COMMIT_VERSION, (A, 0, 5), group="{ns}.h"),
                          delete(v, "{ns}.h", "{ns}.g", "{ns}.unknown"), describe_groups(5, "{ns}.g", "{ns}.h")],
}

SCENARIOS = each_version("DeleteGroups", coordinated(CASES), config="coordinators")
