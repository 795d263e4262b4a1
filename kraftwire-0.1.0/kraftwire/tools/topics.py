"""``kraftwire topics --bootstrap-server HOST:PORT (--create | --list | --describe | --alter | --delete) ...``: Kafka's
``kafka-topics.sh``, its flags and its output, on kraftwire's own protocol client.

* ``--create --topic T [--partitions N] [--replication-factor R] [--config K=V ...] [--replica-assignment
  1:2,2:3,...] [--if-not-exists]`` prints ``Created topic T.`` (and Kafka's warning for a name with ``.`` or ``_``);
* ``--list [--topic REGEX] [--exclude-internal]``: one name per line, sorted;
* ``--describe [--topic REGEX] [--under-replicated-partitions | --unavailable-partitions] [--exclude-internal]``:
  Kafka's topic line (``Topic``, ``TopicId``, ``PartitionCount``, ``ReplicationFactor``, ``Configs`` with the values
  that are not defaults) and a tab-indented line per partition (``Leader`` — ``none`` without one —, ``Replicas``,
  ``Isr``, ``Elr`` and ``LastKnownElr`` from DescribeTopicPartitions, asked page by page of
  ``--partition-size-limit-per-response`` partitions as Kafka's admin client asks); with a partition filter only the
  matching partition lines;
* ``--alter --topic T --partitions N`` grows a topic; ``--delete --topic REGEX``. Both print nothing on success.

``--topic`` is a regular expression matched against whole names, as Kafka's tool takes it. A failure prints
``Error while executing topic command : <message>`` and exits 1. ``--command-config F`` reaches a secured listener.
"""

from __future__ import annotations

import argparse
import asyncio
import re

from kraftwire.error_codes import TOPIC_ALREADY_EXISTS, name_of
from kraftwire.tools.admin import add_bootstrap_arguments, connect, until_decided
from kraftwire.ids import uuid_to_base64

INTERNAL = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
TOPIC_RESOURCE = 2
DEFAULT_CONFIG_SOURCE = 5


class TopicCommandError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    action = parser.add_mutually_exclusive_group(required=True)
    for flag, text in (("--create", "create a new topic"), ("--list", "list all available topics"),
                       ("--describe", "list details for the given topics"),
                       ("--alter", "alter the number of partitions of a topic"), ("--delete", "delete a topic")):
        action.add_argument(flag, action="store_true", help=text)
    parser.add_argument("--topic", help="the topic (a regular expression for --list, --describe and --delete)")
    parser.add_argument("--partitions", type=int, help="the number of partitions")
    parser.add_argument("--replication-factor", type=int, help="the replication factor of each partition")
    parser.add_argument("--config", action="append", default=[], metavar="NAME=VALUE",
                        help="a topic configuration override (repeatable)")
    parser.add_argument("--replica-assignment", metavar="B1:B2,B3:B4,...",
                        help="the brokers of each partition: partitions separated by ',', replicas by ':'")
    parser.add_argument("--if-not-exists", action="store_true", help="with --create: no error if it exists")
    parser.add_argument("--if-exists", action="store_true", help="with --alter/--delete/--describe: no error if none")
    parser.add_argument("--exclude-internal", action="store_true", help="leave internal topics out")
    parser.add_argument("--under-replicated-partitions", action="store_true",
                        help="with --describe: only partitions whose ISR is smaller than their replicas")
    parser.add_argument("--unavailable-partitions", action="store_true",
                        help="with --describe: only partitions without an available leader")
    parser.add_argument("--partition-size-limit-per-response", type=int, default=2000,
                        help="the most partitions in one DescribeTopicPartitions answer")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        tls, login = client_security(args.command_config)
        asyncio.run(_run(args, tls, login))
    except (TopicCommandError, ConfigError) as exc:
        print(f"Error while executing topic command : {exc}")
        return 1
    except (OSError, asyncio.TimeoutError) as exc:
        print(f"Error while executing topic command : cannot reach {args.bootstrap_server}: {exc or type(exc).__name__}")
        return 1
    return 0


async def _run(args, tls, login) -> None:
    conn = await connect(args, tls, login)
    try:
        if args.create:
            await _create(conn, args)
        elif args.list:
            for name in _matching(await _metadata(conn, args), args):
                print(name)
        elif args.describe:
            await _describe(conn, args)
        elif args.alter:
            await _alter(conn, args)
        else:
            await _delete(conn, args)
    finally:
        await conn.close()


# ---------------------------------------------------------------------------------------------------- reading
async def _metadata(conn, args):
    from kraftwire.protocol import messages as w

    return await conn.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12,
                              timeout=args.timeout)


def _matching(md, args) -> list[str]:
    names = sorted(t.name for t in md.topics if t.error_code == 0)
    if args.exclude_internal:
        names = [n for n in names if n not in INTERNAL]
    if args.topic is not None:
        try:
            pattern = re.compile(args.topic)
        except re.error as exc:
            raise TopicCommandError(f"invalid topic pattern {args.topic!r}: {exc}") from None
        names = [n for n in names if pattern.fullmatch(n)]
    return names


def _ensure(names: list[str], args) -> None:
    if not names and args.topic is not None and not args.if_exists:
        raise TopicCommandError(f"Topic '{args.topic}' does not exist as expected")


async def _describe(conn, args) -> None:
    from kraftwire.protocol import messages as w

    md = await _metadata(conn, args)
    names = _matching(md, args)
    _ensure(names, args)
    live = {b.node_id for b in md.brokers}
    by_name = {t.name: t for t in md.topics}
    partition_filter = args.under_replicated_partitions or args.unavailable_partitions
    configs = {}
    if names and not partition_filter:
        DC = w.DescribeConfigsRequest
        answer = await conn.request(DC(resources=[DC.DescribeConfigsResource(resource_type=TOPIC_RESOURCE,
                                                                             resource_name=n, configuration_keys=None)
                                                  for n in names], include_synonyms=False,
                                       include_documentation=False), 4, timeout=args.timeout)
        # a value is a default when its source is DEFAULT_CONFIG (IsDefault is a v0 field)
        configs = {r.resource_name: ",".join(f"{c.name}={c.value}" for c in r.configs
                                             if c.config_source != DEFAULT_CONFIG_SOURCE)
                   for r in answer.results if r.error_code == 0}
    described = await _describe_partitions(conn, names, args)
    for name in names:
        t = by_name[name]
        parts = sorted(described.get(name, t.partitions), key=lambda p: p.partition_index)
        if not partition_filter:
            rf = len(parts[0].replica_nodes) if parts else 0
            print(f"Topic: {name}\tTopicId: {uuid_to_base64(t.topic_id)}\tPartitionCount: {len(parts)}\t"
                  f"ReplicationFactor: {rf}\tConfigs: {configs.get(name, '')}")
        for p in parts:
            available = p.leader_id >= 0 and p.leader_id in live
            if args.under_replicated_partitions and not len(p.isr_nodes) < len(p.replica_nodes):
                continue
            if args.unavailable_partitions and available:
                continue
            leader = p.leader_id if p.leader_id >= 0 else "none"
            elr, known = getattr(p, "eligible_leader_replicas", None), getattr(p, "last_known_elr", None)
            print(f"\tTopic: {name}\tPartition: {p.partition_index}\tLeader: {leader}\t"
                  f"Replicas: {','.join(map(str, p.replica_nodes))}\tIsr: {','.join(map(str, p.isr_nodes))}\t"
                  f"Elr: {_ids(elr)}\tLastKnownElr: {_ids(known)}")


def _ids(nodes) -> str:
    return "N/A" if nodes is None else ",".join(map(str, nodes))


async def _describe_partitions(conn, names: list[str], args) -> dict:
    """Each topic's partitions from DescribeTopicPartitions (KIP-966), page by page, as Kafka's admin client asks
    for them (a topic it does not answer is printed from the Metadata answer, with ``Elr: N/A``)."""
    from kraftwire.protocol import messages as w

    if not names:
        return {}
    D = w.DescribeTopicPartitionsRequest
    out: dict[str, list] = {}
    cursor = None
    while True:
        answer = await conn.request(D(topics=[D.TopicRequest(name=n) for n in names],
                                      response_partition_limit=args.partition_size_limit_per_response,
                                      cursor=cursor), 0, timeout=args.timeout)
        for t in answer.topics:
            if t.error_code == 0:
                out.setdefault(t.name, []).extend(t.partitions)
        if answer.next_cursor is None:
            return out
        cursor = D.Cursor(topic_name=answer.next_cursor.topic_name,
                          partition_index=answer.next_cursor.partition_index)


# ---------------------------------------------------------------------------------------------------- writing
def _configs(items: list[str]):
    from kraftwire.protocol import messages as w

    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise TopicCommandError(f"Invalid topic config: all configs to be added must be in the format "
                                    f"\"key=val\" ({item!r})")
        out.append(w.CreateTopicsRequest.CreatableTopicConfig(name=name.strip(), value=value.strip()))
    return out


def _assignment(text: str) -> list[list[int]]:
    try:
        return [[int(b) for b in part.split(":")] for part in text.split(",")]
    except ValueError:
        raise TopicCommandError(f"Invalid replica assignment {text!r}: expected broker ids as 1:2,2:3") from None


async def _create(conn, args) -> None:
    from kraftwire.protocol import messages as w

    if not args.topic:
        raise TopicCommandError("Missing required argument \"[topic]\"")
    if args.replication_factor is not None and not 1 <= args.replication_factor <= 32767:
        raise TopicCommandError("The replication factor must be between 1 and 32767 inclusive.")
    if args.partitions is not None and args.partitions < 1:
        raise TopicCommandError("The partitions must be greater than 0")
    if "." in args.topic or "_" in args.topic:
        print("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
              "collide. To avoid issues it is best to use either, but not both.")
    CT = w.CreateTopicsRequest
    assignments = []
    if args.replica_assignment:
        if args.partitions is not None or args.replication_factor is not None:
            raise TopicCommandError("Option \"[replica-assignment]\" can't be used with \"[partitions]\" or "
                                    "\"[replication-factor]\"")
        assignments = [CT.CreatableReplicaAssignment(partition_index=i, broker_ids=brokers)
                       for i, brokers in enumerate(_assignment(args.replica_assignment))]
    topic = CT.CreatableTopic(name=args.topic, num_partitions=-1 if assignments or args.partitions is None
                              else args.partitions,
                              replication_factor=-1 if assignments or args.replication_factor is None
                              else args.replication_factor,
                              assignments=assignments, configs=_configs(args.config))
    body = CT(topics=[topic], timeout_ms=int(args.timeout * 1000), validate_only=False)
    answer = await until_decided(conn, body, 7, args.timeout, lambda a: [t.error_code for t in a.topics])
    [result] = answer.topics
    if result.error_code == TOPIC_ALREADY_EXISTS and args.if_not_exists:
        return
    _check(result.error_code, result.error_message)
    print(f"Created topic {args.topic}.")


async def _alter(conn, args) -> None:
    from kraftwire.protocol import messages as w

    if not args.topic:
        raise TopicCommandError("Missing required argument \"[topic]\"")
    if args.partitions is None:
        raise TopicCommandError("--alter needs --partitions (kraftwire alters topic configs with `kraftwire configs`)")
    names = _matching(await _metadata(conn, args), args)
    _ensure(names, args)
    CP = w.CreatePartitionsRequest
    body = CP(topics=[CP.CreatePartitionsTopic(name=n, count=args.partitions, assignments=None) for n in names],
              timeout_ms=int(args.timeout * 1000), validate_only=False)
    answer = await until_decided(conn, body, 3, args.timeout, lambda a: [r.error_code for r in a.results])
    for r in answer.results:
        _check(r.error_code, r.error_message)


async def _delete(conn, args) -> None:
    from kraftwire.protocol import messages as w

    if not args.topic:
        raise TopicCommandError("Missing required argument \"[topic]\"")
    names = _matching(await _metadata(conn, args), args)
    _ensure(names, args)
    if not names:
        return
    DT = w.DeleteTopicsRequest
    body = DT(topics=[DT.DeleteTopicState(name=n) for n in names], topic_names=names,
              timeout_ms=int(args.timeout * 1000))
    answer = await until_decided(conn, body, 6, args.timeout, lambda a: [r.error_code for r in a.responses])
    for r in answer.responses:
        _check(r.error_code, r.error_message)


def _check(code: int, message: str | None) -> None:
    if code:
        raise TopicCommandError(message or f"{name_of(code)} ({code})")

