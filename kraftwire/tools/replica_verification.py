"""``kraftwire replica-verification --broker-list HOST:PORT [--topics-include REGEX] [--time -1|-2|MS]``: Kafka's
``kafka-replica-verification.sh`` (ReplicaVerificationTool), its options and its output, on kraftwire's own protocol
client.

From the offsets of ``--time`` (ListOffsets to each leader) it fetches every replica of every matching partition
(non-internal topics) from the broker holding it, as Kafka's debugging consumer (replica id -2), round after round,
and compares the replicas batch by batch: the same last offset and the same checksum, else it prints Kafka's line
(``<time>: partition T-P: replica A's offset X doesn't match replica B's offset Y``, or ``... has unmatched
checksum at offset X; replica A's checksum C; replica B's checksum D``) and exits 1. Every ``--report-interval-ms``
it prints ``<time>: max lag is L for partition T-P at offset O among N partitions`` (the lag: the highest high
watermark of the partition's replicas less the offset verified so far; the first partition with the largest lag in
the order of Kafka's map of them). It runs until stopped, as Kafka's tool.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import re
import sys
import time

from kraftwire.error_codes import name_of
from kraftwire.java_order import hashmap_order, topic_partition_hash
from kraftwire.tools.admin import connect

DEBUGGING_REPLICA = -2


class VerificationError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker-list", "--bootstrap-server", dest="bootstrap_server", required=True,
                        metavar="HOST:PORT,...", help="the servers to connect to")
    parser.add_argument("--fetch-size", type=int, default=1024 * 1024, help="bytes per partition and fetch")
    parser.add_argument("--max-wait-ms", type=int, default=1000, help="how long each fetch may wait")
    parser.add_argument("--topics-include", "--topic-white-list", dest="topics_include", default=".*",
                        help="a regular expression of the topics to verify")
    parser.add_argument("--time", type=int, default=-1, help="the starting offsets: -1 latest, -2 earliest, or ms")
    parser.add_argument("--report-interval-ms", type=int, default=30000, help="ms between reports")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def stamp(now: float | None = None) -> str:
    """Kafka's ``yyyy-MM-dd HH:mm:ss,SSS`` (local time)."""
    when = datetime.datetime.fromtimestamp(time.time() if now is None else now)
    return when.strftime("%Y-%m-%d %H:%M:%S,") + f"{when.microsecond // 1000:03d}"


def run(args: argparse.Namespace) -> int:
    try:
        pattern = re.compile(args.topics_include)
    except re.error:
        print(f"{args.topics_include} is an invalid regex", file=sys.stderr)
        return 1
    try:
        asyncio.run(_verify(args, pattern))
    except VerificationError as exc:
        print(exc)
        return 1
    except (OSError, asyncio.TimeoutError) as exc:
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def compare(tp: str, batches: dict[int, list[tuple[int, int]]]) -> int:
    """The batches (last offset, checksum) the replicas (``{replica: [...]}``) all hold, compared in order: how many
    match; a mismatch raises Kafka's line."""
    replicas = sorted(batches)
    first = replicas[0]
    count = min(len(b) for b in batches.values())
    for i in range(count):
        offset, crc = batches[first][i]
        for other in replicas[1:]:
            o_offset, o_crc = batches[other][i]
            if o_offset != offset:
                raise VerificationError(f"{stamp()}: partition {tp}: replica {first}'s offset {offset} doesn't "
                                        f"match replica {other}'s offset {o_offset}")
            if o_crc != crc:
                raise VerificationError(f"{stamp()}: partition {tp} has unmatched checksum at offset {offset}; "
                                        f"replica {first}'s checksum {crc}; replica {other}'s checksum {o_crc}")
    return count


async def _verify(args, pattern) -> None:
    from kraftwire.records import read_batches
    from kraftwire.tools.consumer_groups import Admin

    admin = Admin(await connect(args, None, None), None, None, args.timeout)
    try:
        md = await admin.metadata(None)
        replicas: dict[tuple[str, int], list[int]] = {}
        leaders: dict[tuple[str, int], int] = {}
        for t in md.topics:
            if t.error_code == 0 and not t.is_internal and pattern.fullmatch(t.name):
                for p in t.partitions:
                    replicas[(t.name, p.partition_index)] = list(p.replica_nodes)
                    leaders[(t.name, p.partition_index)] = p.leader_id
        if not replicas:
            raise VerificationError(f"No topics found. {args.topics_include} if specified, is either filtering out "
                                    "all topics or there is no topic.")
        offsets = await _start_offsets(admin, leaders, args)
        order = hashmap_order(list(replicas), lambda tp: topic_partition_hash(*tp))
        print(f"{stamp()}: verification process is started", flush=True)
        last_report, max_lag = time.monotonic(), (-1, None, -1)
        while True:
            fetched: dict[tuple[str, int], dict[int, tuple[int, list[tuple[int, int]]]]] = {}
            brokers = sorted({b for rs in replicas.values() for b in rs})
            # one fetch per broker at once, as Kafka's tool runs a fetcher thread per broker
            answers = await asyncio.gather(*(_fetch(admin, b, replicas, offsets, args) for b in brokers))
            for broker, answer in zip(brokers, answers):
                for t in answer.responses:
                    for p in t.partitions:
                        if p.error_code:
                            raise VerificationError(f"{stamp()}: Error in processing replica {broker} in partition "
                                                    f"{t.topic}-{p.partition_index}: {name_of(p.error_code)}")
                        batches = [(b.last_offset, b.crc) for b in read_batches(bytes(p.records or b""))]
                        fetched.setdefault((t.topic, p.partition_index), {})[broker] = (p.high_watermark, batches)
            for tp in order:
                got = fetched.get(tp, {})
                if len(got) != len(replicas[tp]):
                    raise VerificationError(f"fetched {len(got)} replicas for {tp[0]}-{tp[1]}, but expected "
                                            f"{len(replicas[tp])} replicas")
                batches = {r: b for r, (_, b) in got.items()}
                matched = compare(f"{tp[0]}-{tp[1]}", batches)
                if matched:
                    offsets[tp] = batches[min(batches)][matched - 1][0] + 1
                lag = max(hw for hw, _ in got.values()) - offsets[tp]
                if lag > max_lag[0]:
                    max_lag = (lag, tp, offsets[tp])
            if (time.monotonic() - last_report) * 1000 >= args.report_interval_ms:
                lag, tp, offset = max_lag
                print(f"{stamp()}: max lag is {lag} for partition {tp[0]}-{tp[1]} at offset {offset} among "
                      f"{len(replicas)} partitions", flush=True)
                last_report, max_lag = time.monotonic(), (-1, None, -1)
    finally:
        await admin.close()


async def _fetch(admin, broker: int, replicas, offsets, args):
    """Broker ``broker``'s replicas from the offsets verified so far, fetched as Kafka's debugging consumer."""
    from kraftwire.protocol import messages as w

    mine = [tp for tp, rs in replicas.items() if broker in rs]
    F = w.FetchRequest
    body = F(replica_id=DEBUGGING_REPLICA, max_wait_ms=args.max_wait_ms, min_bytes=1, max_bytes=args.fetch_size,
             isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=[], rack_id="",
             topics=[F.FetchTopic(topic=topic, partitions=[
                 F.FetchPartition(partition=p, fetch_offset=offsets[(topic, p)], partition_max_bytes=args.fetch_size)
                 for t2, p in mine if t2 == topic]) for topic in sorted({t for t, _ in mine})])
    return await (await admin.broker(broker)).request(body, 12, timeout=args.timeout + 5)


async def _start_offsets(admin, leaders: dict[tuple[str, int], int], args) -> dict[tuple[str, int], int]:
    from kraftwire.protocol import messages as w

    L = w.ListOffsetsRequest
    out = {}
    for leader in sorted(set(leaders.values())):
        tps = [tp for tp, lead in leaders.items() if lead == leader]
        if leader < 0:
            raise VerificationError(f"no leader for {', '.join(f'{t}-{p}' for t, p in tps)}")
        body = L(replica_id=-1, isolation_level=0, topics=[
            L.ListOffsetsTopic(name=topic, partitions=[L.ListOffsetsPartition(partition_index=p, timestamp=args.time)
                                                       for t2, p in tps if t2 == topic])
            for topic in sorted({t for t, _ in tps})])
        answer = await (await admin.broker(leader)).request(body, 7, timeout=args.timeout)
        for t in answer.topics:
            for p in t.partitions:
                if p.error_code:
                    raise VerificationError(f"cannot get the offsets of {t.name}-{p.partition_index}: "
                                            f"{name_of(p.error_code)}")
                out[(t.name, p.partition_index)] = max(p.offset, 0)
    return out
