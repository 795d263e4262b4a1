"""CreateAcls, DescribeAcls and DeleteAcls on the "sasl-acl" pair (StandardAuthorizer, SASL logins), at every
version both serve: bindings of every resource and pattern type, every filter kind (ANY, MATCH, LITERAL, PREFIXED;
by principal, host, operation, permission), refused bindings and filters (UNKNOWN or ANY where a concrete value is
needed, an invalid principal, a cluster resource not named kafka-cluster), and a non-super user refused
(CLUSTER_AUTHORIZATION_FAILED). Each scenario's bindings name principals of its own (``User:{ns}-...``) or
resources of its own, so the scenarios sharing the pair do not see each other's ACLs; a wildcard binding is deleted
before its scenario ends."""

from __future__ import annotations

from conformance.acl_steps import (ALICE, CLUSTER, as_user, binding, create_acls, delete_acls, delete_filter,
                                   describe_acls)
from conformance.runner import each_version

from kraftwire.security.authorizer import AclOperation as Op, AclPermissionType as Perm, PatternType as Pat
from kraftwire.security.authorizer import ResourceType as Res

P, Q = "User:{ns}-p", "User:{ns}-q"
A, PREFIX = "{ns}.a", "{ns}."


def _valid(principal: str = P):
    """One binding of each resource type and pattern type, allow and deny, a host of its own."""
    return [binding(Res.TOPIC, A, Op.READ, principal=principal),
            binding(Res.TOPIC, PREFIX, Op.WRITE, principal=principal, pattern=Pat.PREFIXED, perm=Perm.DENY),
            binding(Res.GROUP, "{ns}.g", Op.DESCRIBE, principal=principal, host="127.0.0.1"),
            binding(Res.CLUSTER, CLUSTER, Op.ALTER_CONFIGS, principal=principal),
            binding(Res.TRANSACTIONAL_ID, "{ns}.t", Op.WRITE, principal=principal),
            binding(Res.DELEGATION_TOKEN, "{ns}.d", Op.DESCRIBE, principal=principal),
            binding(Res.USER, "{ns}-u", Op.CREATE_TOKENS, principal=principal)]


def _refused():
    """Bindings Kafka refuses one by one (each its own result): the request's other bindings are created."""
    return [binding(Res.UNKNOWN, A, Op.READ, principal=P), binding(Res.ANY, A, Op.READ, principal=P),
            binding(Res.TOPIC, A, Op.READ, principal=P, pattern=Pat.UNKNOWN),
            binding(Res.TOPIC, A, Op.READ, principal=P, pattern=Pat.ANY),
            binding(Res.TOPIC, A, Op.READ, principal=P, pattern=Pat.MATCH),
            binding(Res.TOPIC, A, Op.UNKNOWN, principal=P), binding(Res.TOPIC, A, Op.ANY, principal=P),
            binding(Res.TOPIC, A, Op.READ, principal=P, perm=Perm.UNKNOWN),
            binding(Res.TOPIC, A, Op.READ, principal=P, perm=Perm.ANY),
            binding(Res.CLUSTER, "{ns}-cluster", Op.ALTER, principal=P),
            binding(Res.TOPIC, A, Op.READ, principal="{ns}-no-type"),
            binding(Res.TOPIC, A, Op.READ, principal=""),
            binding(Res.TOPIC, "", Op.READ, principal=P),
            binding(Res.TOPIC, A, Op.CLUSTER_ACTION, principal=P),
            binding(Res.TOPIC, A, Op.WRITE, principal=P)]


_CIDR = ["10.0.0.0/8", "2001:db8::/32", "192.168.1.7/24", "10.0.0.0/33", "bad/cidr", "::ffff:10.0.0.0/104",
         "2001:db8::/129", ""]


def _listed(answer) -> bool:
    """``until`` for DescribeAcls after a creation: the broker lists the new bindings (Kafka's authorizer takes them
    in a moment after its controller answered: a describe right after the first creation of a run listed none)."""
    return bool(answer.resources)


def _bindings(n: int):
    """``until`` for DescribeAcls after a change: the broker lists ``n`` bindings (Kafka's authorizer takes in a
    creation or deletion a moment after its controller answered; under load a describe right after it listed the
    bindings as they were, seen in CI)."""
    return lambda answer: sum(len(r.acls) for r in answer.resources) == n


CREATE = {
    "valid": lambda v: [create_acls(v, *_valid()), describe_acls(3, until=_listed, principal=P)],
    "refused": lambda v: [create_acls(v, *_refused()), describe_acls(3, principal=P)],
    "twice": lambda v: [create_acls(v, *_valid()[:2]), create_acls(v, *_valid()[:2]),
                        describe_acls(3, until=_listed, principal=P)],
    "wildcards": lambda v: [create_acls(v, binding(Res.TOPIC, "*", Op.READ, principal=P, host="*"),
                                        binding(Res.GROUP, "*", Op.READ, principal="User:*")),
                            describe_acls(3, until=_listed, principal=P),
                            describe_acls(3, until=_listed, name="*", rtype=Res.GROUP, principal="User:*"),
                            delete_acls(3, delete_filter(name="*", principal=P),
                                        delete_filter(name="*", rtype=Res.GROUP, principal="User:*"))],
    "not-super-user": lambda v: [*as_user(ALICE, create_acls(v, binding(Res.TOPIC, A, Op.READ, principal=P))),
                                 describe_acls(3, principal=P)],
    # KIP-1276 (metadata.version 4.4-IV1, which the default level includes): CIDR hosts taken, malformed ones refused with
    # the parser's reason, an empty host refused at every level
    "cidr-hosts": lambda v: [create_acls(v, *[binding(Res.TOPIC, A, Op.READ, principal=P, host=h) for h in _CIDR]),
                             describe_acls(3, until=_listed, principal=P)],
}

DESCRIBE = {
    # the bindings come in one metadata batch: a node that lists any of them lists them all (a broker applies them
    # a moment after the controller answered CreateAcls)
    "filters": lambda v: [create_acls(3, *_valid()),
                          describe_acls(v, principal=P, until=lambda answer: bool(answer.resources)),
                          describe_acls(v, principal=P, rtype=Res.TOPIC),
                          describe_acls(v, name=A, pattern=Pat.LITERAL, principal=P),
                          describe_acls(v, name=PREFIX, pattern=Pat.PREFIXED),
                          describe_acls(v, name="{ns}.a.b", pattern=Pat.MATCH, rtype=Res.TOPIC, principal=P),
                          describe_acls(v, name=A, pattern=Pat.MATCH),
                          describe_acls(v, name=A, rtype=Res.TOPIC),
                          describe_acls(v, principal=P, host="127.0.0.1"),
                          describe_acls(v, principal=P, op=Op.WRITE),
                          describe_acls(v, principal=P, perm=Perm.DENY),
                          describe_acls(v, principal=Q)],
    "refused-filters": lambda v: [describe_acls(v, principal=P, rtype=Res.UNKNOWN),
                                  describe_acls(v, principal=P, pattern=Pat.UNKNOWN),
                                  describe_acls(v, principal=P, op=Op.UNKNOWN),
                                  describe_acls(v, principal=P, perm=Perm.UNKNOWN),
                                  describe_acls(v, name=A, pattern=Pat.PREFIXED, rtype=Res.CLUSTER)],
    "not-super-user": lambda v: as_user(ALICE, describe_acls(v, principal=P)),
}

DELETE = {
    "filters": lambda v: [create_acls(3, *_valid()),
                          delete_acls(v, delete_filter(rtype=Res.TOPIC, name=A, pattern=Pat.LITERAL, principal=P),
                                      delete_filter(rtype=Res.GROUP, principal=Q)),
                          describe_acls(3, until=_bindings(6), principal=P),
                          delete_acls(v, delete_filter(name="{ns}.a.b", pattern=Pat.MATCH, principal=P),
                                      delete_filter(principal=P, op=Op.DESCRIBE, host="127.0.0.1")),
                          describe_acls(3, until=_bindings(4), principal=P),
                          delete_acls(v, delete_filter(principal=P)),
                          describe_acls(3, until=_bindings(0), principal=P)],
    "refused-filters": lambda v: [create_acls(3, *_valid()[:1]),
                                  delete_acls(v, delete_filter(principal=P, rtype=Res.UNKNOWN),
                                              delete_filter(principal=P, pattern=Pat.UNKNOWN),
                                              delete_filter(principal=P, op=Op.UNKNOWN),
                                              delete_filter(principal=P, perm=Perm.UNKNOWN)),
                                  describe_acls(3, until=_bindings(1), principal=P)],
    "nothing-matches": lambda v: [delete_acls(v, delete_filter(principal=Q)), delete_acls(v)],
    "not-super-user": lambda v: [create_acls(3, *_valid()[:1]),
                                 *as_user(ALICE, delete_acls(v, delete_filter(principal=P))),
                                 describe_acls(3, until=_bindings(1), principal=P)],
}

SCENARIOS = [*each_version("CreateAcls", CREATE, config="sasl-acl"),
             *each_version("DescribeAcls", DESCRIBE, config="sasl-acl"),
             *each_version("DeleteAcls", DELETE, config="sasl-acl")]
