"""``kraftwire get-offsets --bootstrap-server HOST:PORT [--topic REGEX] [--partitions 0,1] [--topic-partitions
PATTERNS] [--time T] [--exclude-internal-topics]``: Kafka's ``kafka-get-offsets.sh`` (GetOffsetShell), its flags
and its output, on kraftwire's own protocol client.

Prints ``topic:partition:offset`` for each matching partition, sorted by topic then partition, as ListOffsets
answers for ``--time``: ``latest`` (-1, the default), ``earliest`` (-2), ``max-timestamp`` (-3),
``earliest-local`` (-4), ``latest-tiered`` (-5), ``earliest-pending-upload`` (-6) or a timestamp in ms (a partition
without an offset for it prints nothing). ``--topic-partitions`` takes Kafka's patterns: ``topic-regex:N``,
``:N-M`` (M exclusive), ``:N-``, ``:-M`` or a bare regex (every partition); an empty regex matches any topic. Each
leader is asked for its partitions. A failure prints ``Error occurred: <why>`` on stderr and exits 1, as Kafka's
tool; a partition the leader refuses prints ``Skip getting offsets for topic-partition T-P due to error: <why>``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys

from kraftwire.error_codes import name_of
from kraftwire.tools.admin import add_bootstrap_arguments, connect

#: --time's names, as Kafka's OffsetSpec numbers them
TIMES = {"latest": -1, "earliest": -2, "max-timestamp": -3, "earliest-local": -4, "latest-tiered": -5,
         "earliest-pending-upload": -6}
_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")


class GetOffsetsError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    parser.add_argument("--topic", help="the topics (a regular expression); all when absent")
    parser.add_argument("--partitions", metavar="0,1,...", help="comma-separated partition ids")
    parser.add_argument("--topic-partitions", metavar="topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3",
                        help="comma-separated topic-partition patterns")
    parser.add_argument("--time", default="latest", help="a timestamp (ms), or -1/latest, -2/earliest, "
                        "-3/max-timestamp, -4/earliest-local, -5/latest-tiered, -6/earliest-pending-upload")
    parser.add_argument("--exclude-internal-topics", action="store_true", help="leave the internal topics out")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def parse_time(text: str) -> int:
    if text in TIMES:
        return TIMES[text]
    try:
        return int(text)
    except ValueError:
        raise GetOffsetsError(f"Malformed time argument {text}. Please use -1 or latest / -2 or earliest / -3 or "
                              "max-timestamp / -4 or earliest-local / -5 or latest-tiered / -6 or "
                              "earliest-pending-upload, or a specified long format timestamp") from None


def partition_filter(args):
    """A predicate on (topic, partition, internal) from the filter flags, checked as Kafka's tool checks them."""
    if args.topic_partitions is not None and (args.topic is not None or args.partitions is not None):
        raise GetOffsetsError("--topic-partitions cannot be used with --topic or --partitions")
    if args.topic_partitions is not None:
        rules = [_rule(text) for text in args.topic_partitions.split(",")]
    else:
        wanted = None
        if args.partitions is not None:
            try:
                wanted = {int(p) for p in args.partitions.split(",")}
            except ValueError:
                raise GetOffsetsError("--partitions expects a comma separated list of numeric partition ids, but "
                                      f"received: {args.partitions}") from None
        topic = _regex(args.topic or ".*")
        rules = [(topic, (lambda p: True) if wanted is None else wanted.__contains__)]

    def accepts(topic: str, partition: int, internal: bool) -> bool:
        if internal and args.exclude_internal_topics:
            return False
        return any(regex.fullmatch(topic) and accept(partition) for regex, accept in rules)

    return accepts


def _regex(text: str):
    try:
        return re.compile(text)
    except re.error as exc:
        raise GetOffsetsError(f"Invalid regular expression {text}: {exc}") from None


def _rule(text: str):
    found = _PATTERN.fullmatch(text)
    if found is None:
        raise GetOffsetsError(f"Invalid topic-partition pattern: {text}")
    topic, single, low, high = found.groups()
    regex = _regex(topic or ".*")
    if single:
        return regex, int(single).__eq__
    if low is None and high is None:
        return regex, lambda p: True
    lo = int(low) if low else 0
    hi = int(high) if high else 2**31
    return regex, lambda p: lo <= p < hi


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        timestamp = parse_time(args.time)
        accepts = partition_filter(args)
        tls, login = client_security(args.command_config)
        found, skipped = asyncio.run(_offsets(args, tls, login, accepts, timestamp))
    except (GetOffsetsError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(f"Error occurred: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    for (topic, partition), why in sorted(skipped.items()):
        print(f"Skip getting offsets for topic-partition {topic}-{partition} due to error: {why}", file=sys.stderr)
    for (topic, partition), offset in sorted(found.items()):
        if offset >= 0:
            print(f"{topic}:{partition}:{offset}")
    return 0


async def _offsets(args, tls, login, accepts, timestamp: int):
    """({(topic, partition): offset}, {(topic, partition): why skipped}) from each partition's leader."""
    from kraftwire.protocol import messages as w
    from kraftwire.tools.consumer_groups import Admin

    admin = Admin(await connect(args, tls, login), tls, login, args.timeout)
    try:
        md = await admin.metadata(None)
        by_leader: dict[int, dict[str, list[int]]] = {}
        skipped = {}
        for t in md.topics:
            if t.error_code:
                continue
            for p in t.partitions:
                if not accepts(t.name, p.partition_index, t.is_internal):
                    continue
                if p.leader_id < 0:
                    skipped[(t.name, p.partition_index)] = "LEADER_NOT_AVAILABLE"
                    continue
                by_leader.setdefault(p.leader_id, {}).setdefault(t.name, []).append(p.partition_index)
        if not by_leader and not skipped:
            raise GetOffsetsError("Could not match any topic-partitions with the specified filters")
        L = w.ListOffsetsRequest
        version = 11 if timestamp == -6 else 9
        found = {}
        for leader, topics in by_leader.items():
            body = L(replica_id=-1, isolation_level=0, timeout_ms=int(args.timeout * 1000), topics=[
                L.ListOffsetsTopic(name=name, partitions=[L.ListOffsetsPartition(partition_index=i, timestamp=timestamp)
                                                          for i in parts]) for name, parts in topics.items()])
            answer = await (await admin.broker(leader)).request(body, version, timeout=args.timeout)
            for t in answer.topics:
                for p in t.partitions:
                    if p.error_code:
                        skipped[(t.name, p.partition_index)] = name_of(p.error_code)
                    else:
                        found[(t.name, p.partition_index)] = p.offset
        return found, skipped
    finally:
        await admin.close()
