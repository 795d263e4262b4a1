"""``kraftwire configs --bootstrap-server HOST:PORT --entity-type topics|brokers (--entity-name N | --entity-default)
(--describe [--all] | --alter [--add-config K=V,...] [--delete-config K,...])``: Kafka's ``kafka-configs.sh`` for
topics and brokers, its flags and its output, on kraftwire's own protocol client.

* ``--describe`` prints ``Dynamic configs for topic T are:`` (``All configs`` with ``--all``; ``Default configs for
  brokers in the cluster are:`` for ``--entity-default``), then one line per entry, sorted by name:
  ``  name=value sensitive=false synonyms={SOURCE:name=value, ...}``. Without ``--entity-name`` every topic (or
  every broker and the cluster default) is described.
* ``--alter`` sends IncrementalAlterConfigs (SET for ``--add-config``, DELETE for ``--delete-config``; deleting a
  key the entity does not set is ``Invalid config(s): K``, as Kafka's tool refuses it) and prints ``Completed
  updating config for topic T.`` or ``Completed updating default config for brokers in the cluster.``.
  ``--add-config`` takes Kafka's syntax: ``k1=v1,k2=[a,b],k3=v3`` (brackets hold a list value).

A failure prints ``Error while executing config command with args '...'`` and the reason on stderr and exits 1, as
Kafka's tool does. ``--command-config F`` reaches a secured listener.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from kraftwire.error_codes import name_of
from kraftwire.tools.admin import add_bootstrap_arguments, connect, until_decided

TOPIC, BROKER = 2, 4
SET, DELETE = 0, 1
SOURCE_NAMES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
                4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG"}
#: the source of the values a plain --describe shows (Kafka's tool filters on it)
DYNAMIC_SOURCE = {("topics", False): 1, ("brokers", False): 2, ("brokers", True): 3}


class ConfigCommandError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    parser.add_argument("--entity-type", required=True, choices=("topics", "brokers"), help="the entity type")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--entity-name", help="the topic name or broker id")
    who.add_argument("--entity-default", action="store_true", help="the cluster-wide default (brokers)")
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

    try:
        if args.entity_default and args.entity_type != "brokers":
            raise ConfigCommandError("--entity-default is only valid with --entity-type brokers")
        if args.alter and not (args.entity_name or args.entity_default):
            raise ConfigCommandError("an entity name must be specified with --alter")
        if args.alter and not (args.add_config or args.delete_config):
            raise ConfigCommandError("At least one of --add-config or --delete-config must be specified with --alter")
        if args.entity_type == "brokers" and args.entity_name is not None and not args.entity_name.isdigit():
            raise ConfigCommandError("The entity name for brokers must be a valid integer broker id, found: "
                                     f"{args.entity_name}")
        tls, login = client_security(args.command_config)
        asyncio.run(_run(args, tls, login))
    except (ConfigCommandError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(f"Error while executing config command with args '{' '.join(sys.argv[1:])}'", file=sys.stderr)
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1
    return 0


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
        if args.describe:
            await _describe(conn, args)
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


async def _describe(conn, args) -> None:
    from kraftwire.protocol import messages as w

    rtype = TOPIC if args.entity_type == "topics" else BROKER
    if args.entity_default:
        names = [""]
    elif args.entity_name is not None:
        names = [args.entity_name]
    elif rtype == TOPIC:
        md = await conn.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12,
                                timeout=args.timeout)
        names = sorted(t.name for t in md.topics if t.error_code == 0)
    else:
        cluster = await conn.request(w.DescribeClusterRequest(include_cluster_authorized_operations=False), 1,
                                     timeout=args.timeout)
        names = [str(b.broker_id) for b in sorted(cluster.brokers, key=lambda b: b.broker_id)] + [""]
    for name in names:
        if name == "":
            print(f"Default configs for {args.entity_type} in the cluster are:")
        else:
            print(f"{'All' if args.all else 'Dynamic'} configs for {args.entity_type[:-1]} {name} are:")
        wanted = None if args.all else DYNAMIC_SOURCE[(args.entity_type, name == "")]
        for c in sorted(await _describe_one(conn, args, rtype, name), key=lambda c: c.name):
            if wanted is not None and c.config_source != wanted:
                continue
            synonyms = ", ".join(f"{SOURCE_NAMES.get(s.source, 'UNKNOWN')}:{s.name}={_text(s.value)}"
                                 for s in c.synonyms)
            print(f"  {c.name}={_text(c.value)} sensitive={'true' if c.is_sensitive else 'false'} synonyms={{{synonyms}}}")


def _text(value) -> str:
    return "null" if value is None else value


async def _alter(conn, args) -> None:
    from kraftwire.protocol import messages as w

    rtype = TOPIC if args.entity_type == "topics" else BROKER
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
