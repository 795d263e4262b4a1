"""``kraftwire acls (--bootstrap-server | --bootstrap-controller) HOST:PORT (--add | --remove | --list) ...``: Kafka's
``kafka-acls.sh`` (``AclCommand``), with its flags, checks and output, on kraftwire's own protocol client.

Resources: ``--topic T``, ``--group G``, ``--transactional-id X``, ``--delegation-token D``, ``--user-principal U``
(each repeatable) and ``--cluster``. ``--resource-pattern-type`` is ANY, MATCH, LITERAL or PREFIXED, in any case, and
defaults to LITERAL for every action, listing included. ``--cluster`` counts only with a LITERAL pattern type.
Entries: ``--allow-principal P`` and ``--deny-principal P`` (``Type:name``), ``--allow-host`` and ``--deny-host``
(default ``*`` once a principal of that kind is given), and ``--operation`` (repeatable, default All; Kafka's names in
any case: All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs,
IdempotentWrite, CreateTokens, DescribeTokens). The ACLs are every principal × operation × host.

Shortcuts: ``--producer`` grants Write, Describe and Create on the topics, plus Write and Describe on the
transactional ids; with ``--idempotent`` it also grants IdempotentWrite on the cluster. ``--consumer`` grants Read
and Describe on the topics and Read on the groups.

* ``--add`` prints, for each resource, ``Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t,
  patternType=LITERAL)`: `` followed by the ACLs, one per line, each tab-indented as
  ``(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)``, then sends CreateAcls.
* ``--remove`` asks ``Are you sure you want to delete all ACLs for resource filter `...`? (y/n)`` when no ACL is
  named, or ``Are you sure you want to remove ACLs: ... from resource filter `...`? (y/n)`` when some are, and goes
  on only on ``y``. ``--force`` skips the question. It then sends DeleteAcls.
* ``--list`` prints ``Current ACLs for resource `...`: `` blocks (all ACLs without a resource option). With
  ``--principal P`` the blocks come under ``ACLs for principal `P` `` and keep only that principal's ACLs.

Since Kafka 3.9 (KAFKA-15713) the tool no longer lists the ACLs after ``--add`` or ``--remove``, so neither does
this one. Kafka prints resources and ACLs in hash-set order. Here resources come in option order (topics, cluster,
groups, transactional ids, tokens, users), or sorted when listed, and ACLs in the order they were built, or sorted
when listed.

Exit codes as Kafka's: 0 on success. A misused option prints Kafka's message and the usage on stderr and exits 1.
A failure of the operation prints ``Error while executing ACL command: <Java exception>: <message>`` on stdout and
exits 1, with no stack trace here. ``--command-config F`` reaches a secured listener.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass

from kraftwire.error_codes import (
    CLUSTER_AUTHORIZATION_FAILED,
    INVALID_REQUEST,
    NOT_CONTROLLER,
    POLICY_VIOLATION,
    REQUEST_TIMED_OUT,
    SECURITY_DISABLED,
    UNKNOWN_SERVER_ERROR,
    UNSUPPORTED_VERSION,
    name_of,
)
from kraftwire.security.authorizer import CLUSTER_NAME, AclOperation, AclPermissionType, PatternType, ResourceType

ANY = 1
WILDCARD_HOST = "*"
#: the request versions Kafka's admin client sends to a current broker
CREATE_VERSION = DELETE_VERSION = DESCRIBE_VERSION = 3

#: AclEntry.supportedOperations, in Kafka's listing order
SUPPORTED_OPERATIONS: dict[int, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
                         AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                           AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                           AclOperation.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}

#: the Java exception and default message Kafka's admin client reports for the codes these requests can meet
_EXCEPTIONS: dict[int, tuple[str, str]] = {
    UNKNOWN_SERVER_ERROR: ("UnknownServerException",
                           "The server experienced an unexpected error when processing the request."),
    REQUEST_TIMED_OUT: ("TimeoutException", "The request timed out."),
    CLUSTER_AUTHORIZATION_FAILED: ("ClusterAuthorizationException", "Cluster authorization failed."),
    UNSUPPORTED_VERSION: ("UnsupportedVersionException", "The version of API is not supported."),
    NOT_CONTROLLER: ("NotControllerException", "This is not the correct controller for this cluster."),
    INVALID_REQUEST: ("InvalidRequestException",
                      "This most likely occurs because of a request being malformed by the client library or the "
                      "message was sent to an incompatible broker. See the broker logs for more details."),
    POLICY_VIOLATION: ("PolicyViolationException", "Request parameters do not satisfy the configured policy."),
    SECURITY_DISABLED: ("SecurityDisabledException", "Security features are disabled."),
}


class UsageError(Exception):
    """Kafka's ``CommandLineUtils.printUsageAndExit``: the message and the usage on stderr, exit 1."""


class AclCommandError(Exception):
    """A failure while executing: ``Error while executing ACL command: <message>`` on stdout, exit 1."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """A resource pattern, or a pattern filter (``pattern_type`` ANY or MATCH)."""

    resource_type: int
    name: str
    pattern_type: int

    def __str__(self) -> str:  # ResourcePattern.toString (ResourcePatternFilter's reads the same)
        return (f"ResourcePattern(resourceType={_enum_name(ResourceType, self.resource_type)}, name={self.name}, "
                f"patternType={_enum_name(PatternType, self.pattern_type)})")


@dataclass(frozen=True, slots=True)
class Entry:
    principal: str
    host: str
    operation: int
    permission_type: int

    def __str__(self) -> str:  # AccessControlEntry.toString
        return (f"(principal={self.principal}, host={self.host}, "
                f"operation={_enum_name(AclOperation, self.operation)}, "
                f"permissionType={_enum_name(AclPermissionType, self.permission_type)})")


CLUSTER_FILTER = Pattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)


def _enum_name(enum, code: int) -> str:
    try:
        return enum(code).name
    except ValueError:
        return "UNKNOWN"


# ================================================================================================================
# arguments
# ================================================================================================================
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT...]", help="brokers to connect to")
    parser.add_argument("--bootstrap-controller", metavar="HOST:PORT[,HOST:PORT...]", help="controllers to connect to")
    parser.add_argument("--command-config", metavar="FILE", help="client properties for a secured listener")
    parser.add_argument("--add", action="store_true", help="add ACLs")
    parser.add_argument("--remove", action="store_true", help="remove ACLs")
    parser.add_argument("--list", action="store_true", help="list ACLs (of the resources named, else all)")
    parser.add_argument("--topic", action="append", help="a topic ('*': all topics)")
    parser.add_argument("--cluster", action="store_true", help="the cluster resource")
    parser.add_argument("--group", action="append", help="a consumer group ('*': all groups)")
    parser.add_argument("--transactional-id", action="append", help="a transactional id ('*': all)")
    parser.add_argument("--delegation-token", action="append", help="a delegation token id ('*': all)")
    parser.add_argument("--user-principal", action="append", help="a user principal as a resource (tokens)")
    parser.add_argument("--resource-pattern-type", metavar="ANY|MATCH|LITERAL|PREFIXED",
                        help="the pattern type of the resources (default LITERAL); ANY and MATCH filter "
                             "--list and --remove")
    parser.add_argument("--allow-principal", action="append", help="a principal to allow, Type:name (User:'*': all)")
    parser.add_argument("--deny-principal", action="append", help="a principal to deny, Type:name")
    parser.add_argument("--principal", action="append", nargs="?", help="with --list: only this principal's ACLs")
    parser.add_argument("--allow-host", action="append", help="a host the allowed principals may connect from "
                                                              "(default *)")
    parser.add_argument("--deny-host", action="append", help="a host the denied principals are denied from (default *)")
    parser.add_argument("--operation", action="append",
                        help="an operation (default All): " + ", ".join(operation_name(o) for o in _ACL_OPERATIONS))
    parser.add_argument("--producer", action="store_true", help="Write, Describe, Create on the topics")
    parser.add_argument("--consumer", action="store_true", help="Read, Describe on the topics, Read on the groups")
    parser.add_argument("--idempotent", action="store_true", help="with --producer: IdempotentWrite on the cluster")
    parser.add_argument("--force", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    parser.set_defaults(_acls_usage=parser.format_usage())


_ACL_OPERATIONS = tuple(o for o in AclOperation if o not in (AclOperation.UNKNOWN, AclOperation.ANY))


def operation_name(op: AclOperation) -> str:
    """SecurityUtils.operationName: IDEMPOTENT_WRITE -> IdempotentWrite."""
    return "".join(part.capitalize() for part in op.name.split("_"))


def parse_operation(text: str) -> int:
    """SecurityUtils.operation: the PascalCase name or its upper case, else the text upper-cased; UNKNOWN if none."""
    names = {}
    for op in AclOperation:
        names[operation_name(op)] = op
        names[operation_name(op).upper()] = op
    found = names.get(text)
    if found is None:
        found = names.get(text.upper(), AclOperation.UNKNOWN)
    return int(found)


def parse_pattern_type(text: str | None) -> int:
    """``--resource-pattern-type``: a PatternType name in any case, not UNKNOWN (default LITERAL)."""
    if text is None:
        return int(PatternType.LITERAL)
    for p in PatternType:
        if p.name.lower() == text.lower():
            if p == PatternType.UNKNOWN:
                raise UsageError(f"Unknown resource-pattern-type: {text}")
            return int(p)
    raise UsageError(f"Cannot parse argument '{text}' of option resource-pattern-type: Value [{text}] is not one of "
                     "[ANY|MATCH|LITERAL|PREFIXED]")


def parse_principal(text: str) -> str:
    """SecurityUtils.parseKafkaPrincipal (after a trim), as ``Type:name``."""
    text = text.strip()
    kind, sep, name = text.partition(":")
    if not text or not sep:
        raise AclCommandError(f"expected a string in format principalType:principalName but got {text}")
    return f"{kind}:{name}"


def check_args(args) -> None:
    """AclCommandOptions.checkArgs, in Kafka's order."""
    if args.bootstrap_server and args.bootstrap_controller:
        raise UsageError("Only one of --bootstrap-server or --bootstrap-controller must be specified")
    if not args.bootstrap_server and not args.bootstrap_controller:
        raise UsageError("One of --bootstrap-server or --bootstrap-controller must be specified")
    if sum((args.add, args.remove, args.list)) != 1:
        raise UsageError("Command must include exactly one action: --list, --add, --remove. ")
    given = _given(args)
    for used, invalid in (("list", ("producer", "consumer", "allow-host", "allow-principal", "deny-host",
                                    "deny-principal")),
                          ("producer", ("operation", "deny-principal", "deny-host")),
                          ("consumer", ("operation", "deny-principal", "deny-host"))):
        if used in given:
            for other in invalid:
                if other in given:
                    raise UsageError(f'Option "[{used}]" can\'t be used with option "[{other}]"')
    if "principal" in given and not args.list:
        raise UsageError("The --principal option is only available if --list is set")
    if args.producer and not args.topic:
        raise UsageError("With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        raise UsageError("The --idempotent option is only available if --producer is set")
    if args.consumer and (not args.topic or not args.group
                          or (not args.producer and (args.cluster or args.transactional_id))):
        raise UsageError("With --consumer you must specify a --topic and a --group and no --cluster or "
                         "--transactional-id option should be specified.")


def _given(args) -> set[str]:
    flags = ("list", "producer", "consumer", "cluster", "idempotent")
    values = ("allow-host", "allow-principal", "deny-host", "deny-principal", "operation", "principal")
    out = {f for f in flags if getattr(args, f)}
    out |= {v for v in values if getattr(args, v.replace("-", "_")) is not None}
    return out


# ================================================================================================================
# resources and ACLs (AclCommand's getResourceFilter, getAcl, getResourceFilterToAcls, getResourceToAcls)
# ================================================================================================================
def resource_filters(args, pattern_type: int, *, die_if_none: bool = True) -> list[Pattern]:
    out: dict[Pattern, None] = {}
    for name in args.topic or ():
        out[Pattern(ResourceType.TOPIC, name.strip(), pattern_type)] = None
    if pattern_type == PatternType.LITERAL and (args.cluster or args.idempotent):
        out[CLUSTER_FILTER] = None
    for name in args.group or ():
        out[Pattern(ResourceType.GROUP, name.strip(), pattern_type)] = None
    for name in args.transactional_id or ():
        out[Pattern(ResourceType.TRANSACTIONAL_ID, name, pattern_type)] = None  # Kafka does not trim these
    for name in args.delegation_token or ():
        out[Pattern(ResourceType.DELEGATION_TOKEN, name.strip(), pattern_type)] = None
    for name in args.user_principal or ():
        out[Pattern(ResourceType.USER, name.strip(), pattern_type)] = None
    if not out and die_if_none:
        raise UsageError("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or "
                         "--delegation-token <Delegation Token ID>")
    return list(out)


def _principals(values) -> list[str]:
    return list(dict.fromkeys(parse_principal(v) for v in values or ()))


def _hosts(hosts, principals) -> list[str]:
    if hosts is not None:
        return list(dict.fromkeys(h.strip() for h in hosts))
    return [WILDCARD_HOST] if principals is not None else []


def entries(args, operations) -> list[Entry]:
    """Every allowed principal × operation × allowed host, then the same for the denied ones."""
    out: dict[Entry, None] = {}
    for principals, hosts, permission in (
            (args.allow_principal, args.allow_host, AclPermissionType.ALLOW),
            (args.deny_principal, args.deny_host, AclPermissionType.DENY)):
        who, where = _principals(principals), _hosts(hosts, principals)
        if who and where:
            for principal in who:
                for op in operations:
                    for host in where:
                        out[Entry(principal, host, int(op), int(permission))] = None
    return list(out)


def filter_to_acls(args, pattern_type: int) -> dict[Pattern, list[Entry]]:
    """The ACLs of each resource filter (AclCommand.getResourceFilterToAcls), checked by validateOperation."""
    out: dict[Pattern, list[Entry]] = {}
    if not args.producer and not args.consumer:
        operations = list(dict.fromkeys(parse_operation(o.strip()) for o in (args.operation or ["All"])))
        acls = entries(args, operations)
        for f in resource_filters(args, pattern_type):
            out[f] = acls
    if args.producer:
        filters = resource_filters(args, pattern_type)
        topic_acls = entries(args, (AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE))
        txn_acls = entries(args, (AclOperation.WRITE, AclOperation.DESCRIBE))
        for f in filters:
            if f.resource_type == ResourceType.TOPIC:
                out[f] = topic_acls
        for f in filters:
            if f.resource_type == ResourceType.TRANSACTIONAL_ID:
                out[f] = txn_acls
        if args.idempotent:
            out[CLUSTER_FILTER] = entries(args, (AclOperation.IDEMPOTENT_WRITE,))
    if args.consumer:
        filters = resource_filters(args, pattern_type)
        read_describe = entries(args, (AclOperation.READ, AclOperation.DESCRIBE))
        read = entries(args, (AclOperation.READ,))
        for f in filters:
            if f.resource_type == ResourceType.TOPIC:
                out[f] = list(dict.fromkeys([*read_describe, *out.get(f, [])]))
        for f in filters:
            if f.resource_type == ResourceType.GROUP:
                out[f] = list(dict.fromkeys([*read, *out.get(f, [])]))
    for f, acls in out.items():
        valid = (*SUPPORTED_OPERATIONS[f.resource_type], AclOperation.ALL)
        if any(a.operation not in valid for a in acls):
            raise UsageError(f"ResourceType {_enum_name(ResourceType, f.resource_type)} only supports operations "
                             + ", ".join(operation_name(o) for o in valid))
    return out


def resource_to_acls(args, pattern_type: int) -> dict[Pattern, list[Entry]]:
    """What ``--add`` creates (AclCommand.getResourceToAcls)."""
    if pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise UsageError(f"A '--resource-pattern-type' value of '{_enum_name(PatternType, pattern_type)}' is not "
                         "valid when adding acls.")
    out = filter_to_acls(args, pattern_type)
    if any(not acls for acls in out.values()):
        raise UsageError("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    return out


# ================================================================================================================
# output
# ================================================================================================================
def block(title: str, acls) -> str:
    """Kafka's ``s"$title: $Newline ${acls.map("\\t" + _).mkString(Newline)} $Newline"`` (println adds one more)."""
    return f"{title}: \n " + "\n".join(f"\t{a}" for a in acls) + " \n"


def adding(resource: Pattern, acls) -> str:
    return block(f"Adding ACLs for resource `{resource}`", acls)


def current(resource: Pattern, acls) -> str:
    return block(f"Current ACLs for resource `{resource}`", acls)


def remove_question(resource_filter: Pattern, acls) -> str:
    if not acls:
        return f"Are you sure you want to delete all ACLs for resource filter `{resource_filter}`? (y/n)"
    return ("Are you sure you want to remove ACLs: \n " + "\n".join(f"\t{a}" for a in acls)
            + f" \n from resource filter `{resource_filter}`? (y/n)")


def group(resources) -> dict[Pattern, list[Entry]]:
    """DescribeAcls resources as pattern -> its entries (each once), both sorted."""
    out: dict[Pattern, set[Entry]] = {}
    for r in resources:
        key = Pattern(r.resource_type, r.resource_name, r.pattern_type)
        out.setdefault(key, set()).update(Entry(a.principal, a.host, a.operation, a.permission_type) for a in r.acls)
    return {k: sorted(out[k], key=_entry_key) for k in sorted(out, key=lambda p: (p.resource_type, p.name,
                                                                                  p.pattern_type))}


def _entry_key(e: Entry):
    return (e.principal, e.host, e.operation, e.permission_type)


def listing(resource_to_acls: dict[Pattern, list[Entry]], principals: list[str]) -> str:
    """What ``--list`` prints (AclCommand.listAcls)."""
    lines = []
    if not principals:
        lines += [current(r, acls) for r, acls in resource_to_acls.items()]
    else:
        for principal in principals:
            lines.append(f"ACLs for principal `{principal}`")
            for r, acls in resource_to_acls.items():
                mine = [a for a in acls if a.principal == principal]
                if mine:
                    lines.append(current(r, mine))
    return "".join(line + "\n" for line in lines)


def java_error(code: int, message: str | None) -> str:
    """How Kafka's admin client reports an error code: ``org.apache.kafka.common.errors.<Class>: <message>``."""
    known = _EXCEPTIONS.get(code)
    if known is None:
        return f"{name_of(code)}: {message}" if message else name_of(code)
    return f"org.apache.kafka.common.errors.{known[0]}: {known[1] if message is None else message}"


# ================================================================================================================
# requests
# ================================================================================================================
def create_request(resource: Pattern, acls):
    from kraftwire.protocol import messages as w

    CA = w.CreateAclsRequest
    return CA(creations=[CA.AclCreation(resource_type=resource.resource_type, resource_name=resource.name,
                                        resource_pattern_type=resource.pattern_type, principal=a.principal,
                                        host=a.host, operation=a.operation, permission_type=a.permission_type)
                         for a in acls])


def delete_request(resource_filter: Pattern, acls):
    """One filter per ACL named, else one filter with an ANY entry (AclCommand.removeAcls)."""
    from kraftwire.protocol import messages as w

    DA = w.DeleteAclsRequest
    f = resource_filter

    def one(principal, host, op, perm):
        return DA.DeleteAclsFilter(resource_type_filter=f.resource_type, resource_name_filter=f.name,
                                   pattern_type_filter=f.pattern_type, principal_filter=principal, host_filter=host,
                                   operation=op, permission_type=perm)

    if not acls:
        return DA(filters=[one(None, None, ANY, ANY)])
    return DA(filters=[one(a.principal, a.host, a.operation, a.permission_type) for a in acls])


def describe_request(resource_filter: Pattern | None):
    from kraftwire.protocol import messages as w

    f = resource_filter
    return w.DescribeAclsRequest(resource_type_filter=f.resource_type if f else ANY,
                                 resource_name_filter=f.name if f else None,
                                 pattern_type_filter=f.pattern_type if f else ANY, principal_filter=None,
                                 host_filter=None, operation=ANY, permission_type=ANY)


# ================================================================================================================
# running
# ================================================================================================================
def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        pattern_type = parse_pattern_type(args.resource_pattern_type)
        check_args(args)
    except UsageError as exc:
        _usage(args, exc)
        return 1
    args.bootstrap_server = args.bootstrap_server or args.bootstrap_controller
    try:
        plan = _plan(args, pattern_type)
        tls, login = client_security(args.command_config)
        asyncio.run(_run(args, plan, tls, login))
    except UsageError as exc:
        _usage(args, exc)
        return 1
    except (AclCommandError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(f"Error while executing ACL command: {str(exc) or type(exc).__name__}")
        return 1
    return 0


def _plan(args, pattern_type: int):
    """What the action will do, worked out (and checked) before connecting, as Kafka's tool does."""
    if args.add:
        return resource_to_acls(args, pattern_type)
    if args.remove:
        return filter_to_acls(args, pattern_type)
    principals = [parse_principal(p) for p in (args.principal or ()) if p is not None]
    return resource_filters(args, pattern_type, die_if_none=False), principals


def _usage(args, exc) -> None:
    print(str(exc), file=sys.stderr)
    usage = getattr(args, "_acls_usage", None)
    if usage:
        print(usage, end="", file=sys.stderr)


def _confirm(args, question: str) -> bool:
    if args.force:
        return True
    print(question, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() == "y"


async def _run(args, plan, tls, login) -> None:
    from kraftwire.tools.admin import connect

    conn = await connect(args, tls, login)
    try:
        if args.add:
            for resource, acls in plan.items():
                print(adding(resource, acls))
                await _create(conn, args, resource, acls)
        elif args.remove:
            for resource_filter, acls in plan.items():
                if _confirm(args, remove_question(resource_filter, acls)):
                    await _delete(conn, args, resource_filter, acls)
        else:
            filters, principals = plan
            resources = []
            for f in filters or [None]:
                answer = await conn.request(describe_request(f), DESCRIBE_VERSION, timeout=args.timeout)
                if answer.error_code:
                    raise AclCommandError(java_error(answer.error_code, answer.error_message))
                resources += answer.resources
            print(listing(group(resources), principals), end="")
    finally:
        await conn.close()


async def _create(conn, args, resource: Pattern, acls) -> None:
    from kraftwire.tools.admin import until_decided

    answer = await until_decided(conn, create_request(resource, acls), CREATE_VERSION, args.timeout,
                                 lambda a: [r.error_code for r in a.results])
    for r in answer.results:
        if r.error_code:
            raise AclCommandError(java_error(r.error_code, r.error_message))


async def _delete(conn, args, resource_filter: Pattern, acls) -> None:
    from kraftwire.tools.admin import until_decided

    answer = await until_decided(conn, delete_request(resource_filter, acls), DELETE_VERSION, args.timeout,
                                 lambda a: [r.error_code for r in a.filter_results])
    for r in answer.filter_results:
        if r.error_code:
            raise AclCommandError(java_error(r.error_code, r.error_message))
        for matching in r.matching_acls:
            if matching.error_code:
                raise AclCommandError(java_error(matching.error_code, matching.error_message))
