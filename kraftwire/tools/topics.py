"""``kraftwire topics --bootstrap-server HOST:PORT (--create | --list | --describe | --alter | --delete) ...``: Kafka's
``kafka-topics.sh``, its flags and its output, on kraftwire's own protocol client.

* ``--create --topic T [--partitions N] [--replication-factor R] [--config K=V ...] [--replica-assignment
  1:2,2:3,...] [--if-not-exists]`` prints ``Created topic T.`` (and Kafka's warning for a name with ``.`` or ``_``);
* ``--list [--topic REGEX] [--exclude-internal]``: one name per line, sorted;
* ``--describe [--topic REGEX | --topic-id ID] [--under-replicated-partitions | --unavailable-partitions |
  --under-min-isr-partitions | --at-min-isr-partitions | --topics-with-overrides] [--exclude-internal]``:
  Kafka's topic line (``Topic``, ``TopicId``, ``PartitionCount``, ``ReplicationFactor``, ``Configs`` with the values
  that are not defaults) and a tab-indented line per partition (``Leader`` — ``none`` without one —, ``Replicas``,
  ``Isr``, ``Elr`` and ``LastKnownElr`` from DescribeTopicPartitions, asked page by page of
  ``--partition-size-limit-per-response`` partitions as Kafka's admin client asks); with a partition filter only the
  matching partition lines (the ISR against each topic's ``min.insync.replicas`` for the two min-ISR filters); with
  ``--topics-with-overrides`` only the topic lines of topics with a configuration override; ``--topic-id`` describes
  one topic by its id from the Metadata answer, as Kafka's admin client does (so ``Elr: N/A``); a partition being
  moved (ListPartitionReassignments) also shows ``Adding Replicas`` and ``Removing Replicas``, and counts the replicas
  the move keeps as its replication factor, as Kafka's tool does;
* ``--alter --topic T --partitions N`` grows a topic; ``--delete --topic REGEX``. Both print nothing on success.

``--topic`` is a regular expression matched against whole names, as Kafka's tool takes it. A failure prints
``Error while executing topic command : <message>`` and exits 1. ``--command-config F`` reaches a secured listener.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys

from kraftwire.error_codes import CLUSTER_AUTHORIZATION_FAILED, TOPIC_ALREADY_EXISTS, UNSUPPORTED_VERSION, name_of
from kraftwire.tools.admin import add_bootstrap_arguments, connect, until_decided
from kraftwire.ids import uuid_to_base64
from kraftwire.java_order import hashmap_capacity, hashmap_order, string_hash

INTERNAL = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
TOPIC_RESOURCE = 2
DEFAULT_CONFIG_SOURCE = 5


class TopicCommandError(Exception):
    pass


#: a value that does not parse fails as Kafka's tool fails: joptsimple's line, on standard output after the tool's
#: heading (``kraftwire.cli.KafkaExitParser``)
BAD_VALUE = ("stdout", "Error while executing topic command : ")


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
    parser.add_argument("--under-min-isr-partitions", action="store_true",
                        help="with --describe: only partitions whose ISR is smaller than min.insync.replicas")
    parser.add_argument("--at-min-isr-partitions", action="store_true",
                        help="with --describe: only partitions whose ISR is as large as min.insync.replicas")
    parser.add_argument("--topics-with-overrides", action="store_true",
                        help="with --describe: only topics with configuration overrides (their topic lines)")
    parser.add_argument("--topic-id", help="with --describe: the id (base64) of the topic to describe")
    parser.add_argument("--partition-size-limit-per-response", type=int, default=2000,
                        help="the most partitions in one DescribeTopicPartitions answer")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.server.edge.client import SaslLoginError
    from kraftwire.tools.command_config import client_security

    try:
        tls, login = client_security(args.command_config)
        asyncio.run(_run(args, tls, login))
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 1
    except SaslLoginError as exc:  # Kafka's tool prints the broker's words ("Authentication failed ...")
        print(f"Error while executing topic command : {exc.reason}")
        return 1
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


#: the partition filters, in the order Kafka's tool tries them when several are given (the first given decides)
PARTITION_REPORTS = ("under_replicated_partitions", "under_min_isr_partitions", "at_min_isr_partitions",
                     "unavailable_partitions")


class UsageError(TopicCommandError):
    """A flag combination Kafka's option parser refuses: printed on stderr without the command's prefix."""


def _one_report(args) -> None:
    """``--topics-with-overrides`` with no partition filter, as Kafka's option parser allows."""
    given = [name for name in PARTITION_REPORTS if getattr(args, name)]
    if given and args.topics_with_overrides:
        raise UsageError(f'Option "[{given[0].replace("_", "-")}]" can\'t be used with option '
                         '"[topics-with-overrides]"')


def describe_order(names: list[str]) -> list[str]:
    """The order Kafka's tool describes topics in (``names`` sorted, as it lists them): that of the map its admin
    client answers with, a ``HashMap`` sized for the names and filled from a copy of another such map filled in
    name order (``KafkaAdminClient`` describing topics, ``DescribeTopicsResult.allTopicNames``)."""
    if not names:
        return []
    presized = 1
    while presized < len(names):
        presized *= 2
    while len(names) > presized * 3 // 4:
        presized *= 2
    futures = hashmap_order(names, string_hash, presized)
    copied = hashmap_order(futures, string_hash, hashmap_capacity(len(names), copied=True))
    return hashmap_order(copied, string_hash, presized)


def _topic_id(text: str):
    """``--topic-id``'s uuid; None for Kafka's zero uuid, which names no topic (every topic is described)."""
    import base64
    import binascii
    import uuid

    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 16:
        raise TopicCommandError(f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the "
                                "expected 16 bytes of a base64-encoded UUID")
    value = uuid.UUID(bytes=raw)
    return None if value.int == 0 else value


async def _describe(conn, args) -> None:
    from kraftwire.protocol import messages as w

    _one_report(args)
    md = await _metadata(conn, args)
    by_id = _topic_id(args.topic_id) if args.topic_id is not None else None
    if by_id is not None:
        names = [t.name for t in md.topics if t.error_code == 0 and t.topic_id == by_id
                 and not (args.exclude_internal and t.name in INTERNAL)]
        if not names and not args.if_exists:
            raise TopicCommandError(f"TopicId '{args.topic_id}' does not exist as expected")
    else:
        names = _matching(md, args)
        _ensure(names, args)
    live = {b.node_id for b in md.brokers}
    by_name = {t.name: t for t in md.topics}
    partition_filter = any(getattr(args, name) for name in PARTITION_REPORTS)
    overrides, min_isr = {}, {}
    if names:
        DC = w.DescribeConfigsRequest
        answer = await conn.request(DC(resources=[DC.DescribeConfigsResource(resource_type=TOPIC_RESOURCE,
                                                                             resource_name=n, configuration_keys=None)
                                                  for n in names], include_synonyms=False,
                                       include_documentation=False), 4, timeout=args.timeout)
        for r in answer.results:
            if r.error_code == 0:
                # a value is a default when its source is DEFAULT_CONFIG (IsDefault is a v0 field)
                overrides[r.resource_name] = ",".join(f"{c.name}={c.value}" for c in r.configs
                                                      if c.config_source != DEFAULT_CONFIG_SOURCE)
                min_isr.update({r.resource_name: int(c.value) for c in r.configs
                                if c.name == "min.insync.replicas" and c.value is not None})
    # by id, Kafka's admin client describes from the Metadata answer (no ELR there)
    described = {} if by_id is not None else await _describe_partitions(conn, names, args)
    moving = await _reassignments(conn, {n: described.get(n, by_name[n].partitions) for n in names}, args)
    for name in describe_order(names):
        t = by_name[name]
        parts = sorted(described.get(name, t.partitions), key=lambda p: p.partition_index)
        if args.topics_with_overrides and not overrides.get(name):
            continue
        if not partition_filter:
            rf = replication_factor(parts[0], moving.get((name, parts[0].partition_index))) if parts else 0
            print(f"Topic: {name}\tTopicId: {uuid_to_base64(t.topic_id)}\tPartitionCount: {len(parts)}\t"
                  f"ReplicationFactor: {rf}\tConfigs: {overrides.get(name, '')}")
        if args.topics_with_overrides:
            continue
        for p in parts:
            move = moving.get((name, p.partition_index))
            if partition_filter and not _reported(p, move, args, live, min_isr.get(name, 1)):
                continue
            leader = p.leader_id if p.leader_id >= 0 else "none"
            elr, known = getattr(p, "eligible_leader_replicas", None), getattr(p, "last_known_elr", None)
            changes = "" if move is None else (f"Adding Replicas: {_ids(move.adding_replicas)}\t"
                                               f"Removing Replicas: {_ids(move.removing_replicas)}\t")
            print(f"\tTopic: {name}\tPartition: {p.partition_index}\tLeader: {leader}\t"
                  f"Replicas: {','.join(map(str, p.replica_nodes))}\tIsr: {','.join(map(str, p.isr_nodes))}\t"
                  f"{changes}Elr: {_ids(elr)}\tLastKnownElr: {_ids(known)}")


def replication_factor(p, move) -> int:
    """A partition's replication factor as Kafka's tool counts it: while ``move`` (its ListPartitionReassignments
    entry, or None) is in progress — a replica being added or removed is still among ``p``'s replicas — the replicas
    it keeps, not the union the partition holds meanwhile (a move that finished between the two answers counts as
    finished)."""
    if move is not None and set(p.replica_nodes) & (set(move.adding_replicas) | set(move.removing_replicas)):
        return len(move.replicas) - len(move.adding_replicas)
    return len(p.replica_nodes)


def _reported(p, move, args, live: set[int], min_isr: int) -> bool:
    """Whether partition ``p`` (``move``: its reassignment or None) passes the partition filter: the first given of
    ``PARTITION_REPORTS``."""
    if args.under_replicated_partitions:
        return len(p.isr_nodes) < replication_factor(p, move)
    if args.under_min_isr_partitions:  # a partition without a leader counts as under its minimum, as in Kafka's
        return p.leader_id < 0 or len(p.isr_nodes) < min_isr
    if args.at_min_isr_partitions:
        return len(p.isr_nodes) == min_isr
    return not (p.leader_id >= 0 and p.leader_id in live)


def _ids(nodes) -> str:
    return "N/A" if nodes is None else ",".join(map(str, nodes))


async def _reassignments(conn, partitions: dict[str, list], args) -> dict[tuple[str, int], object]:
    """The reassignments in progress among ``partitions`` ({topic: its partitions}), by (topic, partition), from
    ListPartitionReassignments as Kafka's tool asks before it prints; a cluster that does not serve it or does not let
    this user ask (UNSUPPORTED_VERSION, CLUSTER_AUTHORIZATION_FAILED) has none to show, as in Kafka's tool."""
    from kraftwire.protocol import messages as w

    topics = [w.ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics(
        name=name, partition_indexes=sorted(p.partition_index for p in parts))
        for name, parts in partitions.items() if parts]
    if not topics:
        return {}
    answer = await until_decided(conn, w.ListPartitionReassignmentsRequest(timeout_ms=int(args.timeout * 1000),
                                                                           topics=topics),
                                 0, args.timeout, lambda a: [a.error_code])
    if answer.error_code in (CLUSTER_AUTHORIZATION_FAILED, UNSUPPORTED_VERSION):
        return {}
    _check(answer.error_code, answer.error_message)
    return {(t.name, p.partition_index): p for t in answer.topics for p in t.partitions}


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

