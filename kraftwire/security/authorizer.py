"""ACL decisions as Kafka's StandardAuthorizer (KRaft) makes them, and the ACL filters of DescribeAcls/DeleteAcls.

Rules of ``Authorizer.authorize(principal, host, resource_type, resource_name, operation)``:

1. a principal listed in ``super.users`` is always allowed;
2. an ACL *applies* to the resource when its resource type is the same and its pattern is LITERAL with the same
   name, LITERAL ``*`` (any name), or PREFIXED with a name the resource's name starts with;
3. an applying ACL *matches* the request when its principal is the caller's or ``User:*``, its host is the
   caller's address, ``*`` or a CIDR block holding the address (``kraftwire.security.cidr``; such ACLs exist only
   from ``metadata.version`` 4.4-IV1, which CreateAcls enforces, so matching them needs no level check), and its operation is the requested one or ALL. An ALLOW (never a DENY) of READ, WRITE,
   DELETE or ALTER also matches DESCRIBE, and an ALLOW of ALTER_CONFIGS also matches DESCRIBE_CONFIGS; a DENY ALL
   denies every operation;
4. any matching DENY denies (DENY wins), else any matching ALLOW allows;
5. else, when no ACL applies to the resource at all (whatever its principal, host, operation or permission), the
   answer is ``allow.everyone.if.no.acl.found``; otherwise it is denied.

``authorize_by_resource_type`` ("may the caller do *op* on at least one resource of this type?", as InitProducerId
without a transactional id and CreateTopics ask) follows Kafka's default ``Authorizer.authorizeByResourceType``:
first ``authorize`` on the literal name ``hardcode`` (so super users, and ``allow.everyone.if.no.acl.found`` when no
ACL applies to that name, are allowed); then, over the type's ACLs whose principal, host and operation (exact or
ALL, no implications) match: a LITERAL ``*`` DENY denies; a LITERAL ``*`` ALLOW allows; a LITERAL ALLOW *n* allows
unless there is a LITERAL DENY *n* or a PREFIXED DENY on a non-empty prefix of *n*; a PREFIXED ALLOW *p* allows
unless there is a PREFIXED DENY on a non-empty prefix of *p*; anything else denies.

Data structure: built once per ACL mapping, one ``_TypeIndex`` per resource type holding the LITERAL ACLs in a dict
by name, the LITERAL ``*`` ACLs apart, the PREFIXED ACLs in a dict by prefix plus the sorted distinct prefix lengths
(so finding the prefixes of a name costs one dict lookup per distinct length, not a scan). Each ACL is kept as a
small tuple (principal, host, operation, is_allow). Decisions are memoized in a dict keyed by the call's arguments,
cleared when it reaches ``MEMO_LIMIT`` entries. An ``Authorizer`` is immutable in its rules: build a new one when the
image's ``acls`` mapping is a different object (``authorizer.acls is not image.acls``).

``filter_matches`` is Kafka's ``AclBindingFilter.matches``; ``validate_filter`` says why DescribeAcls/DeleteAcls
refuse a filter (Kafka turns an unknown code into UNKNOWN and refuses UNKNOWN), or None.

Pure: no I/O, no clock. ACL entries are read by attribute (``kraftwire.metadata.image.AclEntry`` has them); this
module lives in ``security`` (layer 1) and so cannot import ``metadata`` (layer 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import Any, Protocol

from kraftwire.security.cidr import in_range


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"

#: decisions kept before the memo is emptied
MEMO_LIMIT = 4096

#: the literal resource name Kafka's authorizeByResourceType asks about first
_PROBE_NAME = "hardcode"

_ALL = int(AclOperation.ALL)
_DESCRIBE = int(AclOperation.DESCRIBE)
_DESCRIBE_CONFIGS = int(AclOperation.DESCRIBE_CONFIGS)
_LITERAL = int(PatternType.LITERAL)
_PREFIXED = int(PatternType.PREFIXED)
_ALLOW = int(AclPermissionType.ALLOW)
_DENY = int(AclPermissionType.DENY)

#: operations whose ALLOW also allows DESCRIBE / DESCRIBE_CONFIGS (each implies itself too)
_IMPLY_DESCRIBE = frozenset(int(o) for o in (AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                                             AclOperation.DELETE, AclOperation.ALTER))
_IMPLY_DESCRIBE_CONFIGS = frozenset(int(o) for o in (AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS))


class AclLike(Protocol):
    """What is read from an ACL: the fields of ``kraftwire.metadata.image.AclEntry``."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


def parse_super_users(text: str) -> frozenset[str]:
    """Kafka's ``super.users``: principals separated by ``;``, each trimmed, blanks ignored.

    Each must read ``<type>:<name>`` (Kafka refuses the configuration otherwise): ValueError.
    """
    users = set()
    for part in (text or "").split(";"):
        principal = part.strip()
        if not principal:
            continue
        if ":" not in principal:
            raise ValueError(f"super.users: {principal!r} is not a principal of the form <type>:<name>")
        users.add(principal)
    return frozenset(users)


# (principal, host, operation, is_allow)
_Rule = tuple[str, str, int, bool]


def _rule(acl: AclLike) -> _Rule:
    return (acl.principal, acl.host, int(acl.operation), int(acl.permission_type) == _ALLOW)


def _decide(rules: tuple[_Rule, ...], principal: str, host: str, operation: int) -> int:
    """0: no rule matches; 1: an ALLOW matches (and no DENY); 2: a DENY matches."""
    allowed = False
    for acl_principal, acl_host, acl_op, is_allow in rules:
        if acl_principal != principal and acl_principal != WILDCARD_PRINCIPAL:
            continue
        if acl_host != host and acl_host != WILDCARD and not in_range(host, acl_host):
            continue
        if acl_op != operation and acl_op != _ALL:
            if not is_allow:
                continue
            if operation == _DESCRIBE:
                if acl_op not in _IMPLY_DESCRIBE:
                    continue
            elif operation == _DESCRIBE_CONFIGS:
                if acl_op not in _IMPLY_DESCRIBE_CONFIGS:
                    continue
            else:
                continue
        if not is_allow:
            return 2
        allowed = True
    return 1 if allowed else 0


class _TypeIndex:
    """The ACLs of one resource type, indexed for ``authorize``; ``entries`` (all of them) for the by-type scan."""

    __slots__ = ("literal", "wildcard", "prefixed", "prefix_lengths", "entries")

    def __init__(self, acls: list[AclLike]) -> None:
        literal: dict[str, list[_Rule]] = {}
        wildcard: list[_Rule] = []
        prefixed: dict[str, list[_Rule]] = {}
        for acl in acls:
            pattern = int(acl.pattern_type)
            if pattern == _LITERAL:
                if acl.resource_name == WILDCARD:
                    wildcard.append(_rule(acl))
                else:
                    literal.setdefault(acl.resource_name, []).append(_rule(acl))
            elif pattern == _PREFIXED:
                prefixed.setdefault(acl.resource_name, []).append(_rule(acl))
            # other pattern types never apply to a resource (Kafka stores only LITERAL and PREFIXED)
        self.literal = {name: tuple(rules) for name, rules in literal.items()}
        self.wildcard = tuple(wildcard)
        self.prefixed = {name: tuple(rules) for name, rules in prefixed.items()}
        self.prefix_lengths = tuple(sorted({len(name) for name in prefixed}))
        self.entries = tuple(acls)

    def applying(self, name: str) -> list[tuple[_Rule, ...]]:
        """The groups of ACLs that apply to the literal resource *name* (possibly empty groups left out)."""
        groups = []
        rules = self.literal.get(name)
        if rules:
            groups.append(rules)
        if self.wildcard:
            groups.append(self.wildcard)
        if self.prefix_lengths:
            prefixed = self.prefixed
            size = len(name)
            for length in self.prefix_lengths:
                if length > size:
                    break
                rules = prefixed.get(name[:length])
                if rules:
                    groups.append(rules)
        return groups


class Authorizer:
    """Kafka's StandardAuthorizer decisions over one ACL mapping (see the module's docstring)."""

    __slots__ = ("acls", "super_users", "allow_everyone_if_no_acl_found", "_types", "_memo", "_type_memo")

    def __init__(self, acls: Mapping[Any, AclLike], super_users: frozenset[str] = frozenset(),
                 allow_everyone_if_no_acl_found: bool = False) -> None:
        self.acls = acls
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = bool(allow_everyone_if_no_acl_found)
        by_type: dict[int, list[AclLike]] = {}
        for acl in acls.values():
            by_type.setdefault(int(acl.resource_type), []).append(acl)
        self._types: dict[int, _TypeIndex] = {t: _TypeIndex(entries) for t, entries in by_type.items()}
        self._memo: dict[tuple[str, str, int, str, int], bool] = {}
        self._type_memo: dict[tuple[str, str, int, int], bool] = {}

    def authorize(self, principal: str, host: str, resource_type: int, resource_name: str, operation: int) -> bool:
        """May *principal*, connected from *host* (its address as a string), do *operation* on the literal
        resource (*resource_type*, *resource_name*)?"""
        key = (principal, host, resource_type, resource_name, operation)
        memo = self._memo
        answer = memo.get(key)
        if answer is None:
            answer = self._authorize(principal, host, resource_type, resource_name, operation)
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[key] = answer
        return answer

    def _authorize(self, principal: str, host: str, resource_type: int, resource_name: str, operation: int) -> bool:
        if principal in self.super_users:
            return True
        index = self._types.get(int(resource_type))
        groups = index.applying(resource_name) if index is not None else []
        if not groups:
            return self.allow_everyone_if_no_acl_found
        allowed = False
        for rules in groups:
            verdict = _decide(rules, principal, host, int(operation))
            if verdict == 2:
                return False
            if verdict == 1:
                allowed = True
        return allowed

    def authorize_by_resource_type(self, principal: str, host: str, resource_type: int, operation: int) -> bool:
        """May *principal* do *operation* on at least one resource of *resource_type*? (Kafka's default
        ``Authorizer.authorizeByResourceType``; ValueError for the filter values ANY and UNKNOWN, as Kafka.)"""
        key = (principal, host, resource_type, operation)
        memo = self._type_memo
        answer = memo.get(key)
        if answer is None:
            answer = self._authorize_by_resource_type(principal, host, resource_type, operation)
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[key] = answer
        return answer

    def _authorize_by_resource_type(self, principal: str, host: str, resource_type: int, operation: int) -> bool:
        resource_type = int(resource_type)
        operation = int(operation)
        if resource_type in (ResourceType.ANY, ResourceType.UNKNOWN) or resource_type not in _RESOURCE_TYPES:
            raise ValueError(f"authorize_by_resource_type needs a concrete resource type, not {resource_type}")
        if operation in (AclOperation.ANY, AclOperation.UNKNOWN) or operation not in _OPERATIONS:
            raise ValueError(f"authorize_by_resource_type needs a concrete operation, not {operation}")
        # Super users (and the no-ACL default, when no ACL applies to this name) are decided by an ordinary check.
        if self.authorize(principal, host, resource_type, _PROBE_NAME, operation):
            return True
        index = self._types.get(resource_type)
        if index is None:
            return False
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allow_literal: set[str] = set()
        allow_prefixed: set[str] = set()
        wildcard_allow = False
        for acl in index.entries:
            if acl.host != host and acl.host != WILDCARD and not in_range(host, acl.host):
                continue
            if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
                continue
            if int(acl.operation) != operation and int(acl.operation) != _ALL:
                continue
            pattern = int(acl.pattern_type)
            permission = int(acl.permission_type)
            if permission == _DENY:
                if pattern == _LITERAL:
                    if acl.resource_name == WILDCARD:
                        return False
                    deny_literal.add(acl.resource_name)
                elif pattern == _PREFIXED:
                    deny_prefixed.add(acl.resource_name)
            elif permission == _ALLOW:
                if pattern == _LITERAL:
                    if acl.resource_name == WILDCARD:
                        wildcard_allow = True
                    else:
                        allow_literal.add(acl.resource_name)
                elif pattern == _PREFIXED:
                    allow_prefixed.add(acl.resource_name)
        if wildcard_allow:
            return True

        def under_prefix_deny(name: str) -> bool:
            # only non-empty prefixes count, as in Kafka
            return any(name[:i] in deny_prefixed for i in range(1, len(name) + 1))

        for name in allow_literal:
            if name not in deny_literal and not under_prefix_deny(name):
                return True
        for name in allow_prefixed:
            if not under_prefix_deny(name):
                return True
        return False


#: the operations each concrete resource type supports (Kafka's ``AclEntry.supportedOperations``): the bits KIP-430's
#: authorized-operations fields may hold
SUPPORTED_OPERATIONS: dict[int, frozenset[int]] = {
    int(ResourceType.TOPIC): frozenset(int(o) for o in (
        AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE, AclOperation.DELETE,
        AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS)),
    int(ResourceType.GROUP): frozenset(int(o) for o in (
        AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS)),
    int(ResourceType.CLUSTER): frozenset(int(o) for o in (
        AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
        AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER, AclOperation.DESCRIBE)),
    int(ResourceType.TRANSACTIONAL_ID): frozenset(int(o) for o in (AclOperation.DESCRIBE, AclOperation.WRITE)),
    int(ResourceType.DELEGATION_TOKEN): frozenset((int(AclOperation.DESCRIBE),)),
    int(ResourceType.USER): frozenset(int(o) for o in (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS)),
}


def authorized_operations(authorizer: Authorizer | None, principal: str, host: str, resource_type: int,
                          resource_name: str) -> int:
    """KIP-430's bit field (bit *n* set: operation code *n* allowed) of the operations *principal* may do on the
    literal resource, among those its type supports; without an authorizer (no ``authorizer.class.name``) every
    supported operation, as Kafka answers."""
    supported = SUPPORTED_OPERATIONS[int(resource_type)]
    bits = 0
    for op in supported:
        if authorizer is None or authorizer.authorize(principal, host, resource_type, resource_name, op):
            bits |= 1 << op
    return bits


_RESOURCE_TYPES = frozenset(int(t) for t in ResourceType)
_PATTERN_TYPES = frozenset(int(t) for t in PatternType)
_OPERATIONS = frozenset(int(o) for o in AclOperation)
_PERMISSIONS = frozenset(int(p) for p in AclPermissionType)


def filter_matches(entry: AclLike, resource_type: int, resource_name: str | None, pattern_type: int,
                   principal: str | None, host: str | None, operation: int, permission_type: int) -> bool:
    """Kafka's ``AclBindingFilter.matches``: does the ACL *entry* pass this DescribeAcls/DeleteAcls filter?

    ANY matches every resource type, operation and permission; a None name, principal or host matches all.
    Pattern filter ANY: the exact name on any pattern type; MATCH: every ACL that applies to the name (LITERAL equal,
    LITERAL ``*``, PREFIXED a prefix of the name); LITERAL or PREFIXED: that pattern type and the exact name.
    """
    if resource_type != ResourceType.ANY and resource_type != entry.resource_type:
        return False
    if pattern_type != PatternType.ANY and pattern_type != PatternType.MATCH and pattern_type != entry.pattern_type:
        return False
    if resource_name is not None:
        if pattern_type == PatternType.ANY or pattern_type == entry.pattern_type:
            if resource_name != entry.resource_name:
                return False
        elif entry.pattern_type == PatternType.LITERAL:  # pattern_type is MATCH from here
            if resource_name != entry.resource_name and entry.resource_name != WILDCARD:
                return False
        elif entry.pattern_type == PatternType.PREFIXED:
            if not resource_name.startswith(entry.resource_name):
                return False
        else:
            return False  # Kafka throws on an ACL of another pattern type; none is ever stored
    if principal is not None and principal != entry.principal:
        return False
    if host is not None and host != entry.host:
        return False
    if operation != AclOperation.ANY and operation != entry.operation:
        return False
    return permission_type == AclPermissionType.ANY or permission_type == entry.permission_type


def validate_filter(resource_type: int, resource_name: str | None, pattern_type: int, principal: str | None,
                    host: str | None, operation: int, permission_type: int) -> str | None:
    """Why Kafka refuses this DescribeAcls/DeleteAcls filter (an UNKNOWN, or unknown, code), or None.

    Takes the same filter arguments as ``filter_matches``; the name, principal and host are never refused.
    (Version 0's "LITERAL only" rule is the request layer's: ANY becomes LITERAL there, others are unsupported.)
    """
    if resource_type not in _RESOURCE_TYPES or resource_type == ResourceType.UNKNOWN:
        return f"unknown resource type {resource_type}"
    if pattern_type not in _PATTERN_TYPES or pattern_type == PatternType.UNKNOWN:
        return f"unknown pattern type {pattern_type}"
    if operation not in _OPERATIONS or operation == AclOperation.UNKNOWN:
        return f"unknown operation {operation}"
    if permission_type not in _PERMISSIONS or permission_type == AclPermissionType.UNKNOWN:
        return f"unknown permission type {permission_type}"
    return None
