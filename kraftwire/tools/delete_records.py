"""``kraftwire delete-records --bootstrap-server HOST:PORT --offset-json-file F [--command-config F]``: Kafka's
``kafka-delete-records.sh``, its flags, its JSON file and its output, on kraftwire's own protocol client.

The file is Kafka's ``{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}`` (offset -1:
the high watermark); a partition named twice is refused. Each partition's DeleteRecords goes to its leader (from a
Metadata answer, asked again while the leadership moves), and the output is Kafka's::

    Executing records delete operation
    Records delete operation completed:
    partition: foo-1	low_watermark: 1
    partition: foo-2	error: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset ...

in the order Kafka's tool prints them (its result map's). The exit status is 0 once the requests were answered, as
Kafka's; a bad file or an unreachable cluster exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from kraftwire import error_codes as ec
from kraftwire.tools.admin import add_bootstrap_arguments, connect
from kraftwire.java_order import hashmap_order, topic_partition_hash

RETRIABLE = (ec.NOT_LEADER_OR_FOLLOWER, ec.LEADER_NOT_AVAILABLE)  # the leadership is moving: ask again
RETRY_BACKOFF_S = 0.2


class DeleteRecordsError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    parser.add_argument("--offset-json-file", required=True, metavar="FILE",
                        help='the offset per partition: {"partitions": [{"topic": "foo", "partition": 1, '
                             '"offset": 1}], "version": 1}')
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def parse_offsets(text: str) -> dict[tuple[str, int], int]:
    try:
        data = json.loads(text)
    except ValueError:
        raise DeleteRecordsError("The input string is not a valid JSON") from None
    if not isinstance(data, dict):
        raise DeleteRecordsError("The input string is not a valid JSON object")
    version = data.get("version", 1)
    if version != 1:
        raise DeleteRecordsError(f"Not supported version field value {version}")
    if "partitions" not in data:
        raise DeleteRecordsError("Missing partitions field")
    seen: dict[tuple[str, int], list[int]] = {}
    try:
        for item in data["partitions"]:
            seen.setdefault((str(item["topic"]), int(item["partition"])), []).append(int(item["offset"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise DeleteRecordsError(f"Invalid partitions field: {exc}") from None
    twice = [f"{t}-{p}" for (t, p), offsets in seen.items() if len(offsets) > 1]
    if twice:
        raise DeleteRecordsError(f"Offset json file contains duplicate topic partitions: {','.join(twice)}")
    return {tp: offsets[0] for tp, offsets in seen.items()}


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        raise DeleteRecordsError(f"Unable to read file {path}") from None  # Kafka's line


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        offsets = parse_offsets(_read(args.offset_json_file))
        tls, login = client_security(args.command_config)
        print("Executing records delete operation", flush=True)
        results = asyncio.run(_delete(args, tls, login, offsets))
    except (DeleteRecordsError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1
    print("Records delete operation completed:")
    for topic, partition in hashmap_order(results, lambda k: topic_partition_hash(*k)):
        error, low = results[(topic, partition)]
        if error:
            print(f"partition: {topic}-{partition}\terror: {ec.java_exception(error)}")
        else:
            print(f"partition: {topic}-{partition}\tlow_watermark: {low}")
    return 0


async def _delete(args, tls, login, offsets: dict[tuple[str, int], int]) -> dict[tuple[str, int], tuple[int, int]]:
    from kraftwire.ids import ZERO_UUID
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import KafkaConnection

    D = w.DeleteRecordsRequest
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.timeout
    results: dict[tuple[str, int], tuple[int, int]] = {}
    left = dict(offsets)
    conn = await connect(args, tls, login)
    try:
        while left:
            md = await conn.request(w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(
                topic_id=ZERO_UUID, name=t) for t in sorted({t for t, _ in left})], allow_auto_topic_creation=False), 12,
                timeout=args.timeout)
            endpoints = {b.node_id: (b.host, b.port) for b in md.brokers}
            by_leader: dict[int, list[tuple[str, int]]] = {}
            for t in md.topics:
                parts = {p.partition_index: p for p in t.partitions}
                for (topic, index) in [k for k in left if k[0] == t.name]:
                    p = parts.get(index)
                    code = t.error_code or (ec.UNKNOWN_TOPIC_OR_PARTITION if p is None else p.error_code)
                    if code == ec.NONE and p.leader_id in endpoints:
                        by_leader.setdefault(p.leader_id, []).append((topic, index))
                    else:
                        results[(topic, index)] = (code or ec.LEADER_NOT_AVAILABLE, -1)
            for leader, tps in by_leader.items():
                host, port = endpoints[leader]
                lconn = await KafkaConnection.open(host, port, timeout=args.timeout, client_id="delete-records",
                                                   ssl_context=tls, sasl=login)
                try:
                    topics: dict[str, list] = {}
                    for topic, index in tps:
                        topics.setdefault(topic, []).append(D.DeleteRecordsPartition(
                            partition_index=index, offset=left[(topic, index)]))
                    answer = await lconn.request(D(topics=[D.DeleteRecordsTopic(name=t, partitions=ps)
                                                           for t, ps in topics.items()],
                                                   timeout_ms=int(args.timeout * 1000)), 2, timeout=args.timeout)
                finally:
                    await lconn.close()
                for t in answer.topics:
                    for p in t.partitions:
                        results[(t.name, p.partition_index)] = (p.error_code, p.low_watermark)
            left = {k: v for k, v in left.items() if results.get(k, (ec.NONE,))[0] in RETRIABLE}
            if not left or loop.time() + RETRY_BACKOFF_S > deadline:
                break
            await asyncio.sleep(RETRY_BACKOFF_S)
    finally:
        await conn.close()
    return results
