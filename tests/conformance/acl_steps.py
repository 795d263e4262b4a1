"""Step builders for the "sasl-acl" scenarios: ACL bindings and filters in Kafka's numbering, ACLs granted by the
super user, and any step sent as another login (:func:`as_user`). Principals and names may hold ``{ns}``."""

from __future__ import annotations

import dataclasses

from conformance.runner import Step

from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op, AclPermissionType as Perm, PatternType as Pat
from kraftwire.security.authorizer import ResourceType as Res

#: the ordinary users of the "sasl-acl" configuration (conformance.pair.SCRAM_USERS), as principals and logins
ALICE, BOB = "alice", "bob"
#: the version set-up steps use for CreateAcls and DescribeAcls when the API under test is another one
ACLS_VERSION = 3
CLUSTER = "kafka-cluster"
CA, DA, DLA = w.CreateAclsRequest, w.DescribeAclsRequest, w.DeleteAclsRequest


def as_user(login: str | None, *steps: Step) -> list[Step]:
    """``steps`` sent logged in as ``login`` (None: on a connection that never logs in)."""
    return [dataclasses.replace(step, login=login) for step in steps]


def binding(rtype: int, name: str, op: int, *, perm: int = Perm.ALLOW, principal: str = f"User:{ALICE}",
            pattern: int = Pat.LITERAL, host: str = "*") -> CA.AclCreation:
    return CA.AclCreation(resource_type=int(rtype), resource_name=name, resource_pattern_type=int(pattern),
                          principal=principal, host=host, operation=int(op), permission_type=int(perm))


def create_acls(version: int, *bindings: CA.AclCreation) -> Step:
    return Step(CA(creations=list(bindings)), version)


def grant(*bindings: CA.AclCreation) -> list[Step]:
    """Set-up: the super user creates ``bindings`` and waits until the node it asks describes them all (a broker
    applies new ACLs a moment after the controller answered)."""
    wanted = len(bindings)
    principals = {b.principal for b in bindings}
    return [create_acls(ACLS_VERSION, *bindings),
            *(describe_acls(ACLS_VERSION, principal=p, until=lambda answer, p=p: _count(answer) >= sum(
                1 for b in bindings if b.principal == p) and wanted > 0) for p in sorted(principals))]


def _count(answer) -> int:
    return sum(len(r.acls) for r in getattr(answer, "resources", []) or [])


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
