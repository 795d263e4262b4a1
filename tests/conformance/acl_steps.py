"""Step builders for the "sasl-acl" scenarios: ACL bindings and filters in Kafka's numbering, ACLs granted by the
super user, and any step sent as another login (:func:`as_user`). Principals and names may hold ``{ns}``."""

from __future__ import annotations

import dataclasses
import re

from conformance.runner import Step

from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op, AclPermissionType as Perm, PatternType as Pat
from kraftwire.security.authorizer import ResourceType as Res

#: the ordinary users of the "sasl-acl" configuration (conformance.pair.SCRAM_USERS), as logins and principals
ALICE, BOB = "alice", "bob"
USER_ALICE, USER_BOB = f"User:{ALICE}", f"User:{BOB}"
#: the version set-up steps use for CreateAcls and DescribeAcls when the API under test is another one
ACLS_VERSION = 3
CLUSTER = "kafka-cluster"
CA, DA, DLA = w.CreateAclsRequest, w.DescribeAclsRequest, w.DeleteAclsRequest


def as_user(login: str | None, *steps: Step) -> list[Step]:
    """``steps`` sent logged in as ``login`` (None: on a connection that never logs in)."""
    return [dataclasses.replace(step, login=login) for step in steps]


def binding(rtype: int, name: str, op: int, *, perm: int = Perm.ALLOW, principal: str = USER_ALICE,
            pattern: int = Pat.LITERAL, host: str = "*") -> CA.AclCreation:
    return CA.AclCreation(resource_type=int(rtype), resource_name=name, resource_pattern_type=int(pattern),
                          principal=principal, host=host, operation=int(op), permission_type=int(perm))


def create_acls(version: int, *bindings: CA.AclCreation) -> Step:
    return Step(CA(creations=list(bindings)), version)


def grant(*bindings: CA.AclCreation) -> list[Step]:
    """Set-up: the super user creates ``bindings`` and waits until the node describes each of them (a broker applies
    new ACLs a moment after the controller answered)."""
    wanted = {(b.resource_type, _template(b.resource_name), b.resource_pattern_type, b.principal, b.operation,
               b.permission_type) for b in bindings}

    def described(answer) -> bool:
        have = [(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.operation, a.permission_type)
                for r in answer.resources for a in r.acls]
        return all(any(h[0] == w_[0] and w_[1].fullmatch(h[1]) and h[2:] == w_[2:] for h in have) for w_ in wanted)

    return [create_acls(ACLS_VERSION, *bindings), describe_acls(ACLS_VERSION, until=described)]


def revoke(*principals: str) -> list[Step]:
    """Clean-up: every ACL of ``principals`` (ordinary users shared by the scenarios) deleted, and the node seen
    without them, so the next scenario starts from no ACL at all."""
    return [delete_acls(ACLS_VERSION, *(delete_filter(principal=p) for p in principals)),
            *(describe_acls(ACLS_VERSION, principal=p, until=lambda answer: not answer.resources)
              for p in principals)]


def _template(name: str) -> re.Pattern:
    """A resource name holding ``{ns}`` as a pattern matching it with any namespace."""
    return re.compile(".*".join(re.escape(part) for part in name.split("{ns}")))


def acl_filter(cls, *, rtype: int = Res.ANY, name: str | None = None, pattern: int = Pat.ANY,
               principal: str | None = None, host: str | None = None, op: int = Op.ANY, perm: int = Perm.ANY):
    return cls(resource_type_filter=int(rtype), resource_name_filter=name, pattern_type_filter=int(pattern),
               principal_filter=principal, host_filter=host, operation=int(op), permission_type=int(perm))


def describe_acls(version: int, until=None, **criteria) -> Step:
    """DescribeAcls with the filter of :func:`acl_filter` (everything unless narrowed)."""
    return Step(acl_filter(DA, **criteria), version, until=until)


def delete_acls(version: int, *filters: DLA.DeleteAclsFilter) -> Step:
    return Step(DLA(filters=list(filters)), version)


def delete_filter(**criteria) -> DLA.DeleteAclsFilter:
    return acl_filter(DLA.DeleteAclsFilter, **criteria)
