"""``kraftwire configs --bootstrap-server HOST:PORT --entity-type topics|brokers|groups|users|clients|ips
(--entity-name N | --entity-default) (--describe [--all] | --alter [--add-config K=V,...] [--delete-config K,...])``:
Kafka's ``kafka-configs.sh`` for topics, brokers, groups (KIP-848's group configs), client quotas and users' SCRAM
credentials, its flags and its output, on kraftwire's own protocol client. ``users`` and ``clients`` may be given
together, each followed by its name or ``--entity-default`` (a user's quota for one client id).

* ``--describe`` prints ``Dynamic configs for topic T are:`` (``All configs`` with ``--all``; ``Default configs for
  brokers in the cluster are:`` for ``--entity-default``), then one line per entry, sorted by name:
  ``  name=value sensitive=false synonyms={SOURCE:name=value, ...}``. Without ``--entity-name`` every topic (or
  every broker and the cluster default; every group the brokers list) is described. A group without dynamic configs
  that no broker lists prints ``The group 'G' doesn't exist and doesn't have dynamic config.`` (not with ``--all``);
  groups have no ``--entity-default``.
* ``--alter`` sends IncrementalAlterConfigs (SET for ``--add-config``, DELETE for ``--delete-config``; deleting a
  key the entity does not set is ``Invalid config(s): K``, as Kafka's tool refuses it) and prints ``Completed
  updating config for topic T.`` or ``Completed updating default config for brokers in the cluster.``.
  ``--add-config`` takes Kafka's syntax: ``k1=v1,k2=[a,b],k3=v3`` (brackets hold a list value).

Users, clients and ips: client quotas (``config_quotas``), and users' SCRAM credentials:

* ``--alter --entity-name U --add-config 'SCRAM-SHA-256=[iterations=8192,password=pw]'`` and/or ``--delete-config
  SCRAM-SHA-512`` send one AlterUserScramCredentials, as Kafka's admin client does: each upsertion salted here (the
  salt is the UTF-8 of 130 random bits in base 36, the salted password PBKDF2 over it; iterations default to 4096)
  so the password never leaves the tool. The controller alters one credential per user and request, so two
  mechanisms of one user in one command are refused with DuplicateResourceException, as Kafka's are (run the tool
  once per mechanism). Success prints ``Completed updating config for user U.``.
* ``--describe [--entity-name U]`` prints the quotas (``Quota configs for user-principal 'U' are ...``), then sends
  DescribeUserScramCredentials and prints, per user holding credentials, ``SCRAM credential configs for
  user-principal 'U' are SCRAM-SHA-256=iterations=8192, ...``; a user without any prints nothing.
* Quota keys (``producer_byte_rate=1024``...) go to AlterClientQuotas, never in one command with SCRAM keys.

A failure prints ``Error while executing config command with args '...'`` and the reason on stderr and exits 1, as
Kafka's tool does (a refusal of the server as Java's ``ExecutionException`` line names it); for users, a bad argument
prints only its message, as Kafka's IllegalArgumentException does. ``--command-config F`` reaches a secured listener.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import secrets
import sys
from typing import Callable

from kraftwire import error_codes as ec
from kraftwire.error_codes import name_of
from kraftwire.java_order import hashmap_order, string_hash
from kraftwire.tools import config_quotas
from kraftwire.tools.admin import add_bootstrap_arguments, connect, until_decided

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
RESOURCE_TYPES = {"topics": TOPIC, "brokers": BROKER, "groups": GROUP, "broker-loggers": BROKER_LOGGER,
                  "client-metrics": CLIENT_METRICS}
ENTITY_TYPES = ("topics", "brokers", "groups", "users", "clients", "ips", "client-metrics", "broker-loggers")
#: Kafka's shorthands: ``--topic T`` is ``--entity-type topics --entity-name T``,
#: ``--broker-defaults`` is ``--entity-type brokers --entity-default``; both in Kafka's order of the flags (the order
#: a command naming two of them lists their types in: ``--user U --client C`` names the client first)
NAMED = {"topic": "topics", "client": "clients", "user": "users", "broker": "brokers", "broker_logger": "broker-loggers",
         "ip": "ips", "client_metrics": "client-metrics", "group": "groups"}
DEFAULTS = {"client_defaults": "clients", "user_defaults": "users", "broker_defaults": "brokers",
            "ip_defaults": "ips"}
#: the API each entity type needs beyond DescribeConfigs, by Kafka's name for it: Kafka's tool fails with
#: UnsupportedVersionException on a node that does not serve it
NEEDED_API = {"client-metrics": (74, "LIST_CONFIG_RESOURCES")}
#: the entity types whose configs are client quotas (users also have SCRAM credentials)
QUOTA_TYPES = ("users", "clients", "ips")
SET, DELETE = 0, 1
SOURCE_NAMES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
                4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
                7: "DYNAMIC_CLIENT_METRICS_CONFIG", 8: "DYNAMIC_GROUP_CONFIG"}
#: the source of the values a plain --describe shows (Kafka's tool filters on it)
DYNAMIC_SOURCE = {("topics", False): 1, ("brokers", False): 2, ("brokers", True): 3, ("groups", False): 8,
                  ("broker-loggers", False): 6, ("client-metrics", False): 7}


#: user configs that are client quotas (Kafka's QuotaConfig.isClientOrUserQuotaConfig)
USER_QUOTA_KEYS = frozenset(("producer_byte_rate", "consumer_byte_rate", "request_percentage",
                             "controller_mutation_rate"))
SCRAM_TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
SCRAM_NAMES = {0: "UNKNOWN", 1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
SCRAM_MIN_ITERATIONS = 4096
DEFAULT_SCRAM_ITERATIONS = 4096
_SCRAM_CREDENTIAL = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)", re.DOTALL)
#: what Kafka's Java client names the errors a user alteration or description can meet, and its default message
JAVA_ERRORS = {
    ec.RESOURCE_NOT_FOUND: ("ResourceNotFoundException",
                            "A request illegally referred to a resource that does not exist."),
    ec.DUPLICATE_RESOURCE: ("DuplicateResourceException", "A request illegally referred to the same resource twice."),
    ec.UNACCEPTABLE_CREDENTIAL: ("UnacceptableCredentialException",
                                 "Requested credential would not meet criteria for acceptability."),
    ec.UNSUPPORTED_SASL_MECHANISM: ("UnsupportedSaslMechanismException",
                                    "The broker does not support the requested SASL mechanism."),
    ec.UNSUPPORTED_VERSION: ("UnsupportedVersionException", "The version of API is not supported."),
    ec.INVALID_REQUEST: ("InvalidRequestException", "This most likely occurs because of a request being malformed by "
                                                    "the client library or the message was sent to an incompatible "
                                                    "broker. See the broker logs for more details."),
    ec.CLUSTER_AUTHORIZATION_FAILED: ("ClusterAuthorizationException", "Cluster authorization failed."),
    ec.NOT_CONTROLLER: ("NotControllerException", "This is not the correct controller for this cluster."),
    ec.REQUEST_TIMED_OUT: ("TimeoutException", "The request timed out."),
    ec.UNKNOWN_SERVER_ERROR: ("UnknownServerException",
                              "The server experienced an unexpected error when processing the request."),
}


class ConfigCommandError(Exception):
    pass


class ConfigArgumentError(ConfigCommandError):
    """A bad argument (Kafka's IllegalArgumentException): the message alone on stderr."""


def java_error(code: int, message: str | None) -> str:
    """``org.apache.kafka.common.errors.<Name>: <message>``, the exception Kafka's admin client makes of an error."""
    name, default = JAVA_ERRORS.get(code, (None, None))
    if name is None:
        return f"{name_of(code)}: {message}" if message else name_of(code)
    return f"org.apache.kafka.common.errors.{name}: {default if message is None else message}"


class ServerRefusal(ConfigCommandError):
    """An error the server answered, as the ExecutionException of the admin client's future prints."""

    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(f"java.util.concurrent.ExecutionException: {java_error(code, message)}")
        self.code = code


class _Named(argparse.Action):
    """``--entity-name N`` and ``--entity-default`` ("") in one list, in command-line order (Kafka pairs them with
    the entity types in that order)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        names = list(getattr(namespace, self.dest, None) or [])
        names.append(values if isinstance(values, str) else "")
        setattr(namespace, self.dest, names)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser, controller=True)
    parser.add_argument("--entity-type", dest="entity_types", action="append", choices=ENTITY_TYPES,
                        help="the entity type (users and clients may be given together, each with its name)")
    parser.add_argument("--entity-name", dest="entity_names", action=_Named, metavar="NAME",
                        help="the topic name, broker id, group id, user principal, client id or ip")
    parser.add_argument("--entity-default", dest="entity_names", action=_Named, nargs=0,
                        help="the cluster-wide default (brokers, users, clients, ips)")
    for dest, kind in NAMED.items():
        parser.add_argument(f"--{dest.replace('_', '-')}", dest=dest, metavar="NAME",
                            help=f"as --entity-type {kind} --entity-name NAME")
    for dest, kind in DEFAULTS.items():
        parser.add_argument(f"--{dest.replace('_', '-')}", dest=dest, action="store_true",
                            help=f"as --entity-type {kind} --entity-default")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--describe", action="store_true", help="list the configs of the entity")
    action.add_argument("--alter", action="store_true", help="alter the configs of the entity")
    parser.add_argument("--all", action="store_true", help="with --describe: every config, not only dynamic ones")
    parser.add_argument("--add-config", metavar="K=V,...", help="configs to set: k1=v1,k2=[a,b],k3=v3")
    parser.add_argument("--delete-config", metavar="K,...", help="configs to remove")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    args.bootstrap_server = args.bootstrap_server or args.bootstrap_controller
    try:
        resolve_entity(args)
        if args.entity_type in QUOTA_TYPES:
            check_user_arguments(args)
        if args.entity_type == "broker-loggers" and args.entity_name is None:
            raise ConfigArgumentError(f"An entity name must be specified with --{'describe' if args.describe else 'alter'}"
                                      " of broker-loggers")
        if args.entity_type == "groups" and args.entity_default:  # Kafka's words
            raise ConfigCommandError("--entity-default must not be specified with --describe of groups"
                                     if args.describe else "An entity name must be specified with --alter of groups")
        if args.entity_default and args.entity_type not in ("brokers", "users", "clients", "ips"):
            raise ConfigCommandError("--entity-default is only valid with --entity-type brokers, users, clients or "
                                     "ips")
        if args.alter and not (args.entity_name or args.entity_default):
            raise ConfigCommandError("an entity name must be specified with --alter")
        if args.alter and not (args.add_config or args.delete_config):
            raise ConfigCommandError("At least one of --add-config or --delete-config must be specified with --alter")
        if args.entity_type == "brokers" and args.entity_name is not None and not args.entity_name.isdigit():
            # Kafka's option check: the line alone, without the command's error heading
            raise ConfigArgumentError("The entity name for brokers must be a valid integer broker id, but it is: "
                                      f"{args.entity_name}")
        tls, login = client_security(args.command_config)
        asyncio.run(_run(args, tls, login))
    except ConfigArgumentError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except (ConfigCommandError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(f"Error while executing config command with args '{' '.join(_command_args())}'", file=sys.stderr)
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1
    return 0


def _command_args() -> list[str]:
    """The tool's own arguments, as Kafka's tool quotes them (without ``kraftwire configs``)."""
    argv = sys.argv[1:]
    return argv[1:] if argv[:1] == ["configs"] else argv


def resolve_entity(args) -> None:
    """``args.entity_types``/``entity_names`` as Kafka's ConfigCommandOptions makes them (``--entity-type`` and
    ``--entity-name``/``--entity-default`` in command-line order, then Kafka's shorthands, ``--topic T`` or
    ``--broker-defaults``, in its fixed order), checked as Kafka checks them; ``entity_type``, ``entity_name`` and
    ``entity_default`` are the first of each."""
    shorthand_types = [kind for dest, kind in NAMED.items() if getattr(args, dest) is not None]
    shorthand_types += [kind for dest, kind in DEFAULTS.items() if getattr(args, dest)]
    types = list(args.entity_types or []) + shorthand_types
    names = list(args.entity_names or []) + [getattr(args, dest) for dest in NAMED if getattr(args, dest) is not None]
    names += ["" for dest in DEFAULTS if getattr(args, dest)]
    duplicates = [t for i, t in enumerate(types) if t in types[:i]]
    if duplicates:
        raise ConfigArgumentError(f"Duplicate entity type(s) specified: {','.join(duplicates)}")
    if not types:
        raise ConfigArgumentError("At least one entity type must be specified")
    if len(types) > 1 and set(types) != {"users", "clients"}:
        raise ConfigArgumentError("Only 'users' and 'clients' entity types may be specified together")
    if (args.entity_types or args.entity_names) and shorthand_types:
        raise ConfigArgumentError("--entity-{type,name,default} should not be used in conjunction with specific "
                                  "entity flags")
    if "ips" in types:
        for name in names:
            if name and not config_quotas.valid_ip_entity(name):
                raise ConfigArgumentError(f"The entity name for {types[0]} must be a valid IP or resolvable host, "
                                          f"but it is: {name}")
    args.entity_types, args.entity_names = types, names
    args.entity_type = types[0]
    args.entity_name = names[0] if names and names[0] else None
    args.entity_default = bool(names) and names[0] == ""


async def _needed_api(conn, args) -> None:
    """Kafka's tool's failure on a node that does not serve the API the entity type needs (``NEEDED_API``)."""
    from kraftwire.protocol import messages as w

    key, name = NEEDED_API[args.entity_type]
    answer = await conn.request(w.ApiVersionsRequest(client_software_name="kraftwire-admin",
                                                     client_software_version="0"), 3, timeout=args.timeout)
    if all(a.api_key != key for a in answer.api_keys):
        raise ServerRefusal(ec.UNSUPPORTED_VERSION, f"The node does not support {name}")
    raise ConfigCommandError(f"--entity-type {args.entity_type} is not implemented by kraftwire's tool yet")


def parse_add_config(text: str) -> list[tuple[str, str]]:
    """Kafka's ``--add-config`` syntax: comma-separated ``k=v``; a value in brackets may hold commas."""
    out, item, depth = [], "", 0
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(item)
            item = ""
        else:
            item += ch
    if item:
        out.append(item)
    pairs = []
    for entry in out:
        name, sep, value = entry.partition("=")
        if not sep or not name.strip():
            raise ConfigCommandError(f"Invalid entity config: all configs to be added must be in the format "
                                     f"\"key=val\" ({entry!r})")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = value[1:-1]
        pairs.append((name.strip(), value))
    return pairs


async def _run(args, tls, login) -> None:
    conn = await connect(args, tls, login)
    try:
        if args.entity_type in NEEDED_API and args.describe:
            await _needed_api(conn, args)
        if args.entity_type in QUOTA_TYPES:
            await (_describe_users(conn, args) if args.describe else _alter_users(conn, args))
        elif args.describe:
            await _describe(conn, args, tls, login)
        else:
            await _alter(conn, args)
    finally:
        await conn.close()


async def _describe_one(conn, args, rtype: int, name: str):
    from kraftwire.protocol import messages as w

    DC = w.DescribeConfigsRequest
    answer = await conn.request(DC(resources=[DC.DescribeConfigsResource(resource_type=rtype, resource_name=name,
                                                                         configuration_keys=None)],
                                   include_synonyms=True, include_documentation=False), 4, timeout=args.timeout)
    [result] = answer.results
    if result.error_code:
        raise ConfigCommandError(result.error_message or f"{name_of(result.error_code)} ({result.error_code})")
    return result.configs


async def _listed_groups(conn, args, tls, login) -> set[str]:
    """The groups the brokers list (ListGroups on each)."""
    from kraftwire.tools.consumer_groups import Admin

    admin = Admin(conn, tls, login, args.timeout)
    try:
        return {g[0] for g in await admin.list_groups()}
    finally:
        await admin.close_brokers()


async def _describe(conn, args, tls=None, login=None) -> None:
    from kraftwire.protocol import messages as w

    rtype = RESOURCE_TYPES[args.entity_type]
    if args.bootstrap_controller is not None and rtype in (TOPIC, GROUP):
        # Kafka's tool lists the topics (Metadata) or groups (ListGroups) first, which controllers do not serve
        raise ConfigCommandError("java.util.concurrent.ExecutionException: " + (
            "org.apache.kafka.common.errors.UnsupportedEndpointTypeException: This Admin API is not yet supported "
            "when communicating directly with the controller quorum." if rtype == TOPIC else
            "org.apache.kafka.common.KafkaException: Failed to find brokers to send ListGroups"))
    listed = None
    if rtype == TOPIC and not args.entity_default:
        md = await conn.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12,
                                timeout=args.timeout)
        listed = {t.name for t in md.topics if t.error_code == 0}
    if args.entity_default:
        names = [""]
    elif args.entity_name is not None:
        names = [args.entity_name]
        if rtype == TOPIC and args.entity_name not in listed:  # Kafka's tool: a line, not a failure (exit 0)
            print(f"The topic '{args.entity_name}' doesn't exist and doesn't have dynamic config.")
            return
    elif rtype == GROUP:
        listed = await _listed_groups(conn, args, tls, login)
        names = sorted(listed)
    elif rtype == TOPIC:
        names = sorted(listed)
    else:
        cluster = await conn.request(w.DescribeClusterRequest(include_cluster_authorized_operations=False), 1,
                                     timeout=args.timeout)
        names = [str(b.broker_id) for b in sorted(cluster.brokers, key=lambda b: b.broker_id)] + [""]
    for name in names:
        wanted = None if args.all else DYNAMIC_SOURCE[(args.entity_type, name == "")]
        configs = sorted(await _describe_one(conn, args, rtype, name), key=lambda c: c.name)
        shown = [c for c in configs if wanted is None or c.config_source == wanted]
        if rtype == GROUP and not shown and not args.all:
            if listed is None:
                listed = await _listed_groups(conn, args, tls, login)
            if name not in listed:
                print(f"The group '{name}' doesn't exist and doesn't have dynamic config.")
                continue
        if name == "":
            print(f"Default configs for {args.entity_type} in the cluster are:")
        else:
            print(f"{'All' if args.all else 'Dynamic'} configs for {args.entity_type[:-1]} {name} are:")
        for c in shown:
            synonyms = ", ".join(f"{SOURCE_NAMES.get(s.source, 'UNKNOWN')}:{s.name}={_text(s.value)}"
                                 for s in c.synonyms)
            print(f"  {c.name}={_text(c.value)} sensitive={'true' if c.is_sensitive else 'false'} synonyms={{{synonyms}}}")


def _text(value) -> str:
    return "null" if value is None else value


async def _alter(conn, args) -> None:
    from kraftwire.protocol import messages as w

    rtype = RESOURCE_TYPES[args.entity_type]
    name = "" if args.entity_default else args.entity_name
    deletes = [k.strip() for k in (args.delete_config or "").split(",") if k.strip()]
    adds = parse_add_config(args.add_config) if args.add_config else []
    if deletes:
        dynamic = DYNAMIC_SOURCE[(args.entity_type, name == "")]
        present = {c.name for c in await _describe_one(conn, args, rtype, name) if c.config_source == dynamic}
        missing = [k for k in deletes if k not in present]
        if missing:
            raise ConfigCommandError(f"Invalid config(s): {','.join(missing)}")
    IAC = w.IncrementalAlterConfigsRequest
    ops = ([IAC.AlterableConfig(name=k, config_operation=SET, value=v) for k, v in adds]
           + [IAC.AlterableConfig(name=k, config_operation=DELETE, value=None) for k in deletes])
    body = IAC(resources=[IAC.AlterConfigsResource(resource_type=rtype, resource_name=name, configs=ops)],
               validate_only=False)
    answer = await until_decided(conn, body, 1, args.timeout, lambda a: [r.error_code for r in a.responses])
    [result] = answer.responses
    if result.error_code:
        raise ConfigCommandError(result.error_message or f"{name_of(result.error_code)} ({result.error_code})")
    if name:
        print(f"Completed updating config for {args.entity_type[:-1]} {name}.")
    else:
        print(f"Completed updating default config for {args.entity_type} in the cluster.")


# ------------------------------------------------------------------------------------------------ users
def check_user_arguments(args) -> None:
    """Kafka's checks of a users, clients or ips command that need no server, in its order and words."""
    if args.alter and not (args.entity_name or args.entity_default):
        raise ConfigArgumentError("An entity-name or default entity must be specified with --alter of users, "
                                  "clients, brokers or ips")
    if args.alter and not (args.add_config or args.delete_config):
        raise ConfigArgumentError("At least one of --add-config, --add-config-file, or --delete-config must be "
                                  "specified with --alter")
    if args.describe and (args.add_config or args.delete_config):
        used = "add-config" if args.add_config else "delete-config"
        raise ConfigArgumentError(f'Option "[describe]" can\'t be used with option "[{used}]"')
    if args.alter and len(args.entity_names) != len(args.entity_types):
        raise ConfigArgumentError("An entity name must be specified for every entity type")
    if args.alter:
        adds, _ = user_alterations(args)  # the configs themselves
        for mechanism, text in adds.items():
            if mechanism in SCRAM_TYPES:
                parse_scram_credential(mechanism, text)


def user_alterations(args) -> tuple[dict[str, str], list[str]]:
    """(configs to add {key: value}, keys to delete), checked as Kafka's tool checks a users, clients or ips
    --alter before it reaches the server: SCRAM credentials ({mechanism: "[iterations=N,]password=P"}) for one
    user, or client quotas."""
    adds = dict(parse_add_config(args.add_config)) if args.add_config else {}
    for key in adds:
        if not re.fullmatch(r"[a-zA-Z0-9._-]*", key):
            raise ConfigArgumentError(f"Invalid character found for config key: {key}")
    deletes = [k.strip() for k in (args.delete_config or "").split(",") if k.strip()]
    if args.entity_types != ["users"]:
        config_quotas.check_keys(args.entity_types, _java_set(adds), _java_set(deletes))
        return adds, deletes
    unknown_adds = _java_set(k for k in adds if k not in SCRAM_TYPES and k not in USER_QUOTA_KEYS)
    if unknown_adds:
        raise ConfigArgumentError("Only quota and SCRAM credential configs can be added for 'users' using "
                                  f"--bootstrap-server. Unexpected config names: {','.join(unknown_adds)}")
    unknown_deletes = _java_set(k for k in deletes if k not in SCRAM_TYPES and k not in USER_QUOTA_KEYS)
    if unknown_deletes:
        raise ConfigArgumentError("Only quota and SCRAM credential configs can be deleted for 'users' using "
                                  f"--bootstrap-server. Unexpected config names: {','.join(unknown_deletes)}")
    quotas = any(k in USER_QUOTA_KEYS for k in [*adds, *deletes])
    if any(k in SCRAM_TYPES for k in [*adds, *deletes]):
        if args.entity_default:
            raise ConfigArgumentError("The use of --entity-default or --user-defaults is not allowed with User "
                                      "SCRAM Credentials using --bootstrap-server.")
        if quotas:
            raise ConfigArgumentError("Cannot alter both quota and SCRAM credential configs simultaneously for "
                                      "'users' using --bootstrap-server.")
    return adds, deletes


def _java_set(keys) -> list[str]:
    """Keys in the order Kafka 4.4's tool lists them (a ``HashSet`` of the names)."""
    return hashmap_order(dict.fromkeys(keys), string_hash)


def parse_scram_credential(mechanism: str, text: str) -> tuple[int, str]:
    """``[iterations=N,]password=P`` (Kafka's tool: -1 or none is 4096; fewer than the mechanism's minimum is
    refused here, too many by the controller) -> (iterations, password)."""
    found = _SCRAM_CREDENTIAL.fullmatch(text)
    if found is None:
        raise ConfigArgumentError(f"Invalid credential property {mechanism.replace('-', '_')}={text}")
    raw, password = found.groups()
    if raw is None or raw == "-1":
        iterations = DEFAULT_SCRAM_ITERATIONS
    else:
        try:
            iterations = int(raw)
            if not -2**31 <= iterations < 2**31:
                raise ValueError(raw)
        except ValueError:
            raise ConfigArgumentError(f'For input string: "{raw}"') from None
    if iterations < SCRAM_MIN_ITERATIONS:
        raise ConfigArgumentError(f"Iterations {iterations} is less than the minimum {SCRAM_MIN_ITERATIONS} "
                                  f"required for {mechanism}")
    return iterations, password


def random_salt() -> bytes:
    """Kafka's admin client salt: the UTF-8 of 130 random bits written in base 36 (ScramFormatter)."""
    from kraftwire.security.sasl import scram

    return scram.server_nonce(secrets.randbits(130)).encode()


def scram_request(user: str, adds: dict[str, str], deletes: list[str],
                  new_salt: Callable[[], bytes] = random_salt):
    """The AlterUserScramCredentials request for one user's alterations: every deletion and every upsertion in one
    request, each upsertion salted here, as Kafka's admin client builds it. An empty password is refused before
    anything is sent (UnacceptableCredentialException, as the admin client fails that user)."""
    from kraftwire.protocol import messages as w
    from kraftwire.security.sasl import scram

    A = w.AlterUserScramCredentialsRequest
    deletions = [A.ScramCredentialDeletion(name=user, mechanism=SCRAM_TYPES[k]) for k in deletes]
    upsertions = []
    for mechanism, text in adds.items():
        iterations, password = parse_scram_credential(mechanism, text)
        if not password:
            raise ServerRefusal(ec.UNACCEPTABLE_CREDENTIAL, "Password must not be empty")
        salt = new_salt()
        upsertions.append(A.ScramCredentialUpsertion(
            name=user, mechanism=SCRAM_TYPES[mechanism], iterations=iterations, salt=salt,
            salted_password=scram.salted_password(mechanism, password, salt, iterations)))
    return A(deletions=deletions, upsertions=upsertions)


def alter_outcome(user: str, answer) -> None:
    """Raise the server's refusal of ``user`` (the one user a users --alter names), if any."""
    for r in answer.results:
        if r.user == user and r.error_code:
            raise ServerRefusal(r.error_code, r.error_message)
    if not any(r.user == user for r in answer.results):
        raise ServerRefusal(ec.UNKNOWN_SERVER_ERROR, f"The broker response did not contain a result for user {user}")


def describe_lines(answer) -> list[str]:
    """Kafka's tool's lines for a DescribeUserScramCredentials answer: users without credentials are left out."""
    if answer.error_code:
        raise ServerRefusal(answer.error_code, answer.error_message)
    lines = []
    for r in answer.results:
        if r.error_code == ec.RESOURCE_NOT_FOUND:
            continue
        if r.error_code:
            lines.append(f"Error retrieving SCRAM credential configs for user-principal '{r.user}': "
                         f"ExecutionException: {java_error(r.error_code, r.error_message)}")
            continue
        text = ", ".join(f"{SCRAM_NAMES.get(c.mechanism, 'UNKNOWN')}=iterations={c.iterations}"
                         for c in r.credential_infos)
        lines.append(f"SCRAM credential configs for user-principal '{r.user}' are {text}")
    return lines


async def _alter_users(conn, args) -> None:
    """A users, clients or ips --alter: client quotas (AlterClientQuotas) or one user's SCRAM credentials."""
    adds, deletes = user_alterations(args)
    if args.entity_types != ["users"] or any(k in USER_QUOTA_KEYS for k in [*adds, *deletes]):
        await config_quotas.alter(conn, args.entity_types, args.entity_names, adds, deletes, args.timeout,
                                  until_decided)
        _completed(args)
        return
    body = scram_request(args.entity_name, adds, deletes)
    answer = await until_decided(conn, body, 0, args.timeout, lambda a: [r.error_code for r in a.results])
    alter_outcome(args.entity_name, answer)
    _completed(args)


def _completed(args) -> None:
    if args.entity_name:
        print(f"Completed updating config for {args.entity_type[:-1]} {args.entity_name}.")
    else:
        print(f"Completed updating default config for {args.entity_type} in the cluster.")


async def _describe_users(conn, args) -> None:
    """The quotas of the entities named (users, clients, ips), then — for users alone, not their default — the
    users' SCRAM credentials, as Kafka's tool prints them."""
    from kraftwire.protocol import messages as w

    for line in await config_quotas.describe(conn, args.entity_types, args.entity_names, args.timeout):
        print(line)
    if args.entity_types != ["users"] or "" in args.entity_names:
        return
    D = w.DescribeUserScramCredentialsRequest
    body = D(users=[D.UserName(name=n) for n in args.entity_names] or None)
    for line in describe_lines(await conn.request(body, 0, timeout=args.timeout)):
        print(line)
