"""ACLs: the active controller's AclControlManager, pure, with the checks Kafka makes in front of it.

In Kafka a CreateAcls or DeleteAcls reaches the controller through three layers, and each one can refuse it. This module
applies all three, in Kafka's order, so the answers match what a Kafka controller sends:

1. **Parsing the request.** An UNKNOWN (0) resource type, pattern type, operation or permission fails the parse, and
   Kafka closes the connection (version 0, whose filters knew LITERAL only, went in Kafka 4.0, KIP-896). ``request_error`` gives the reason so the edge can do the same. The functions below
   answer such a request with INVALID_REQUEST on every entry and write nothing.
2. **AclApis.** Turning a creation into an AclBinding throws when the resource type is ANY, the pattern type is ANY
   or MATCH, or the operation or permission is ANY. One such creation fails the whole request: every creation gets
   UNKNOWN_SERVER_ERROR with no message. Next, each creation on its own: a CLUSTER resource not named
   ``kafka-cluster`` gets INVALID_REQUEST "The only valid name for the CLUSTER resource is kafka-cluster", and an empty
   name gets INVALID_REQUEST "Invalid empty resource name".
3. **AclControlManager.** ``validate_new_acl`` checks the type, pattern, operation, permission, name (a code
   Kafka does not know counts as UNKNOWN) and host: an empty host is INVALID_REQUEST, a CIDR host (KIP-1276) is
   UNSUPPORTED_VERSION below ``metadata.version`` 4.4-IV1 and INVALID_REQUEST when malformed. An ACL equal to one
   in the image, or to an earlier one in the same request, succeeds without a new record. Each new ACL is one AccessControlEntryRecord with an id from ``new_uuid()`` that no
   ACL has yet. More than ``MAX_RECORDS_PER_USER_OP`` new ACLs fail the whole operation: every creation that got
   this far answers POLICY_VIOLATION "Unable to perform excessively large batch operation.".

DeleteAcls runs per filter. A filter with an unknown resource type or pattern type gets INVALID_REQUEST "Unknown
patternFilter.", and one with an unknown operation or permission gets "Unknown entryFilter.". Otherwise the filter
lists every ACL it matches (``kraftwire.security.authorizer.filter_matches``, Kafka's ``AclBindingFilter.matches``),
and the request writes one RemoveAccessControlEntryRecord per ACL. An ACL that several filters match is listed under
each of them and removed once. If the removals come to more than ``MAX_RECORDS_PER_USER_OP``, Kafka's controller
fails the batch: every filter answers UNKNOWN_SERVER_ERROR and nothing is removed.

DescribeAcls is answered from the image, grouped by resource pattern: one DescribeAclsResource for each
(type, name, pattern type), listing each ACL entry once. Resources are sorted by type, name and pattern, and entries
by principal, host, operation and permission; Kafka's order is a hash map's. When no authorizer is configured
(``enabled=False``) the answer is SECURITY_DISABLED "No Authorizer is configured on the broker".

Kafka's controller also answers CreateAcls and DeleteAcls with SECURITY_DISABLED "No Authorizer is configured." when
it has no authorizer. Pass ``enabled=False`` to get that answer, or refuse the request at the edge with
``refusals.refusal(api, request, version, SECURITY_DISABLED, NO_AUTHORIZER)``; both give the same response.

Error messages follow Kafka's ``ApiError.fromThrowable``. UNKNOWN_SERVER_ERROR carries no message (null). A success
carries Kafka's defaults: an empty message in a creation result, and null in a delete filter result and its
matching ACLs.
"""

from __future__ import annotations

from typing import Callable

from kraftwire.error_codes import (
    INVALID_REQUEST,
    NONE,
    POLICY_VIOLATION,
    SECURITY_DISABLED,
    UNKNOWN_SERVER_ERROR,
    UNSUPPORTED_VERSION,
)
from kraftwire.ids import UUID
from kraftwire.metadata.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from kraftwire.metadata.image import AclEntry, MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m
from kraftwire.security.authorizer import (
    CLUSTER_NAME,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    WILDCARD,
    filter_matches,
)
from kraftwire.security import cidr

#: what Kafka answers CreateAcls/DeleteAcls with when no authorizer is configured (SECURITY_DISABLED)
NO_AUTHORIZER = "No Authorizer is configured."
#: ... and DescribeAcls
NO_AUTHORIZER_DESCRIBE = "No Authorizer is configured on the broker"
#: a CIDR host below metadata.version 4.4-IV1 (UNSUPPORTED_VERSION)
CIDR_NEEDS_LEVEL = "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher."
#: when more than MAX_RECORDS_PER_USER_OP ACLs would be created (POLICY_VIOLATION)
TOO_LARGE = "Unable to perform excessively large batch operation."

_UNKNOWN = 0
_ANY = 1
_LITERAL = int(PatternType.LITERAL)
_PREFIXED = int(PatternType.PREFIXED)
_CLUSTER = int(ResourceType.CLUSTER)
_MATCH = int(PatternType.MATCH)


def _known(code: int, enum) -> int:
    """Kafka's ``fromCode``: a code the enum does not have is UNKNOWN (0)."""
    try:
        return int(enum(code))
    except ValueError:
        return _UNKNOWN


def _name(code: int, enum) -> str:
    return enum(_known(code, enum)).name


# ================================================================================================================
# request-level refusals (Kafka: the request does not parse; the connection is closed)
# ================================================================================================================
def request_error(api: str, req, version: int) -> str | None:
    """Why Kafka's request parser refuses this CreateAcls/DeleteAcls/DescribeAcls, which makes Kafka close the
    connection, or None."""
    if api == "CreateAcls":
        creations = req.creations or []
        if any(_UNKNOWN in (c.resource_pattern_type, c.resource_type, c.permission_type, c.operation)
               for c in creations):
            return "CreatableAcls contain unknown elements"
        return None
    if api == "DeleteAcls":
        if any(_UNKNOWN in (f.pattern_type_filter, f.resource_type_filter, f.operation, f.permission_type)
               for f in req.filters or []):
            return "Filters contain UNKNOWN elements"
        return None
    if api == "DescribeAcls":
        if _UNKNOWN in (req.pattern_type_filter, req.resource_type_filter, req.permission_type, req.operation):
            return "DescribeAclsRequest contains UNKNOWN elements"
        return None
    raise KeyError(api)


# ================================================================================================================
# CreateAcls
# ================================================================================================================
def validate_new_acl(acl: AclEntry, cidr_supported: bool = True) -> tuple[int, str] | None:
    """Kafka's ``AclControlManager.validateNewAcl``: why a new ACL is refused (error code and message), or None.

    *cidr_supported* is whether the cluster's ``metadata.version`` is at least 4.4-IV1 (KIP-1276): below it a CIDR
    host (one containing ``/``) is UNSUPPORTED_VERSION; from it a malformed one is INVALID_REQUEST with the parser's
    reason. Every other refusal is INVALID_REQUEST."""
    reason = _invalid_acl(acl)
    if reason is not None:
        return INVALID_REQUEST, reason
    host = acl.host
    if not host:
        return INVALID_REQUEST, "Host pattern cannot be null or empty"
    if host != WILDCARD and cidr.is_cidr(host):
        if not cidr_supported:
            return UNSUPPORTED_VERSION, CIDR_NEEDS_LEVEL
        reason = cidr.validate(host)
        if reason is not None:
            return INVALID_REQUEST, f"Invalid CIDR notation '{host}': {reason}"
    return None


def _invalid_acl(acl: AclEntry) -> str | None:
    rtype = _known(acl.resource_type, ResourceType)
    if rtype in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {ResourceType(rtype).name}"
    pattern = _known(acl.pattern_type, PatternType)
    if pattern not in (_LITERAL, _PREFIXED):
        return f"Invalid patternType {PatternType(pattern).name}"
    op = _known(acl.operation, AclOperation)
    if op in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {AclOperation(op).name}"
    permission = _known(acl.permission_type, AclPermissionType)
    if permission not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        return f"Invalid permissionType {AclPermissionType(permission).name}"
    if not acl.resource_name:
        return "Resource name should not be empty"
    return None


def _binding_fails(c) -> bool:
    """Kafka's ResourcePattern/AccessControlEntry constructors refuse these (IllegalArgumentException)."""
    return (c.resource_type == ResourceType.ANY or c.resource_pattern_type in (_ANY, _MATCH)
            or c.operation == AclOperation.ANY or c.permission_type == AclPermissionType.ANY)


def _entry(c) -> AclEntry:
    return AclEntry(resource_type=c.resource_type, resource_name=c.resource_name,
                    pattern_type=c.resource_pattern_type, principal=c.principal, host=c.host, operation=c.operation,
                    permission_type=c.permission_type)


def create_acls(image: MetadataImage, req, version: int, new_uuid: Callable[[], UUID], *,
                enabled: bool = True) -> ControllerResult:
    R = m.CreateAclsResponse
    creations = list(req.creations or [])

    def every(code: int, message: str | None, event: str) -> ControllerResult:
        return ControllerResult((), R(throttle_time_ms=0, results=[
            R.AclCreationResult(error_code=code, error_message=message) for _ in creations]), event)

    problem = request_error("CreateAcls", req, version)
    if problem is not None:
        return every(INVALID_REQUEST, problem, "malformed CreateAcls")
    if not enabled:
        return every(SECURITY_DISABLED, NO_AUTHORIZER, "no authorizer")
    if any(_binding_fails(c) for c in creations):
        return every(UNKNOWN_SERVER_ERROR, None, "an ACL creation with an ANY field")

    mv = image.metadata_version
    cidr_supported = mv is not None and mv.supports_cidr_acls
    existing = set(image.acls.values())
    taken = set(image.acls)
    records: list[ApiMessageAndVersion] = []
    answers: list[tuple[int, str | None, bool]] = []  # (code, message, reached the controller)
    for c in creations:
        if c.resource_type == _CLUSTER and c.resource_name != CLUSTER_NAME:
            answers.append((INVALID_REQUEST, f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}", False))
            continue
        if c.resource_name == "":
            answers.append((INVALID_REQUEST, "Invalid empty resource name", False))
            continue
        acl = _entry(c)
        refused = validate_new_acl(acl, cidr_supported)
        if refused is not None:
            answers.append((*refused, True))
            continue
        if acl not in existing:
            existing.add(acl)
            acl_id = new_uuid()
            while acl_id in taken:
                acl_id = new_uuid()
            taken.add(acl_id)
            records.append(ApiMessageAndVersion(m.AccessControlEntryRecord(
                id=acl_id, resource_type=acl.resource_type, resource_name=acl.resource_name,
                pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host, operation=acl.operation,
                permission_type=acl.permission_type), 0))
        answers.append((NONE, "", True))
    if len(records) > MAX_RECORDS_PER_USER_OP:
        return ControllerResult((), R(throttle_time_ms=0, results=[
            R.AclCreationResult(error_code=POLICY_VIOLATION, error_message=TOO_LARGE) if reached
            else R.AclCreationResult(error_code=code, error_message=message)
            for code, message, reached in answers]), f"{len(records)} new ACLs: too many")
    return ControllerResult(tuple(records), R(throttle_time_ms=0, results=[
        R.AclCreationResult(error_code=code, error_message=message) for code, message, _ in answers]),
        f"{len(records)} ACL(s) created" if records else "")


# ================================================================================================================
# DeleteAcls
# ================================================================================================================
def _filter_error(f) -> str | None:
    """Kafka's ``AclControlManager.validateFilter``."""
    if (_known(f.resource_type_filter, ResourceType) == _UNKNOWN
            or _known(f.pattern_type_filter, PatternType) == _UNKNOWN):
        return "Unknown patternFilter."
    if _known(f.operation, AclOperation) == _UNKNOWN or _known(f.permission_type, AclPermissionType) == _UNKNOWN:
        return "Unknown entryFilter."
    return None


def delete_acls(image: MetadataImage, req, version: int, *, enabled: bool = True) -> ControllerResult:
    R = m.DeleteAclsResponse
    filters = list(req.filters or [])

    def every(code: int, message: str | None, event: str) -> ControllerResult:
        return ControllerResult((), R(throttle_time_ms=0, filter_results=[
            R.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[]) for _ in filters]),
            event)

    problem = request_error("DeleteAcls", req, version)
    if problem is not None:
        return every(INVALID_REQUEST, problem, "malformed DeleteAcls")
    if not enabled:
        return every(SECURITY_DISABLED, NO_AUTHORIZER, "no authorizer")

    removed: dict[UUID, None] = {}  # ordered set of ids
    results = []
    for f in filters:
        reason = _filter_error(f)
        if reason is not None:
            results.append(R.DeleteAclsFilterResult(error_code=INVALID_REQUEST, error_message=reason,
                                                    matching_acls=[]))
            continue
        pattern = f.pattern_type_filter
        matching = []
        for acl_id, acl in image.acls.items():
            if not filter_matches(acl, f.resource_type_filter, f.resource_name_filter, pattern, f.principal_filter,
                                  f.host_filter, f.operation, f.permission_type):
                continue
            removed[acl_id] = None
            matching.append(R.DeleteAclsMatchingAcl(
                error_code=NONE, error_message=None, resource_type=acl.resource_type,
                resource_name=acl.resource_name, pattern_type=acl.pattern_type, principal=acl.principal,
                host=acl.host, operation=acl.operation, permission_type=acl.permission_type))
        results.append(R.DeleteAclsFilterResult(error_code=NONE, error_message=None, matching_acls=matching))
    if len(removed) > MAX_RECORDS_PER_USER_OP:
        return every(UNKNOWN_SERVER_ERROR, None, f"{len(removed)} ACLs to remove: too many")
    records = tuple(ApiMessageAndVersion(m.RemoveAccessControlEntryRecord(id=acl_id), 0) for acl_id in removed)
    return ControllerResult(records, R(throttle_time_ms=0, filter_results=results),
                            f"{len(records)} ACL(s) removed" if records else "")


# ================================================================================================================
# DescribeAcls
# ================================================================================================================
def describe_acls(image: MetadataImage, req, version: int, *, enabled: bool):
    """The DescribeAcls answer from ``image`` (``enabled``: an authorizer is configured)."""
    R = m.DescribeAclsResponse
    problem = request_error("DescribeAcls", req, version)
    if problem is not None:
        return R(throttle_time_ms=0, error_code=INVALID_REQUEST, error_message=problem, resources=[])
    if not enabled:
        return R(throttle_time_ms=0, error_code=SECURITY_DISABLED, error_message=NO_AUTHORIZER_DESCRIBE,
                 resources=[])
    pattern = req.pattern_type_filter
    grouped: dict[tuple[int, str, int], set[tuple[str, str, int, int]]] = {}
    for acl in image.acls.values():
        if filter_matches(acl, req.resource_type_filter, req.resource_name_filter, pattern, req.principal_filter,
                          req.host_filter, req.operation, req.permission_type):
            grouped.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), set()).add(
                (acl.principal, acl.host, acl.operation, acl.permission_type))
    return R(throttle_time_ms=0, error_code=NONE, error_message="", resources=[
        R.DescribeAclsResource(resource_type=rtype, resource_name=name, pattern_type=ptype, acls=[
            R.AclDescription(principal=p, host=h, operation=op, permission_type=perm)
            for p, h, op, perm in sorted(grouped[(rtype, name, ptype)])])
        for rtype, name, ptype in sorted(grouped)])
