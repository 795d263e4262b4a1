"""``kraftwire log-dirs --bootstrap-server HOST:PORT --describe [--broker-list 1,2] [--topic-list a,b]
[--command-config F]``: Kafka's ``kafka-log-dirs.sh``, its flags and its output, on kraftwire's own protocol client.

It asks the cluster for its brokers (DescribeCluster), then each broker for its log directories (DescribeLogDirs), and
prints, as Kafka's tool does::

    Querying brokers for log directories information
    Received log directory information from brokers 1,2,3
    {"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"t-0","size":42,"offsetLag":0,"isFuture":false}],
    "error":null,"logDir":"/tmp/kraft-combined-logs"}]}],"version":1}

(the JSON on one line, keys in the order Kafka's Java maps print them; an offline directory's ``error`` is the Java
exception class). A broker in ``--broker-list`` the cluster does not have is an error naming the ones it has.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from kraftwire import error_codes as ec
from kraftwire.tools.admin import add_bootstrap_arguments, connect
from kraftwire.java_order import hashmap_capacity, hashmap_order, string_hash, topic_partition_hash


class LogDirsError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    parser.add_argument("--describe", action="store_true", help="describe the log directories of the brokers")
    parser.add_argument("--broker-list", default="", metavar="0,1,2",
                        help="the brokers to query (default: every broker of the cluster)")
    parser.add_argument("--topic-list", default="", metavar="topic1,topic2",
                        help="the topics to list (default: all)")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    if not args.describe:
        print("Missing required argument \"[describe]\"", file=sys.stderr)
        return 1
    try:
        brokers = {int(b) for b in args.broker_list.split(",") if b.strip()}
    except ValueError:
        print(f"--broker-list must list broker ids: {args.broker_list!r}", file=sys.stderr)
        return 1
    topics = {t for t in args.topic_list.split(",") if t}
    try:
        tls, login = client_security(args.command_config)
        print("Querying brokers for log directories information", flush=True)
        by_broker = asyncio.run(_describe(args, tls, login, brokers))
    except (LogDirsError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1
    print(f"Received log directory information from brokers {','.join(str(b) for b in sorted(by_broker))}")
    print(format_json(by_broker, topics))
    return 0


async def _describe(args, tls, login, wanted: set[int]) -> dict[int, list]:
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import KafkaConnection

    conn = await connect(args, tls, login)
    try:
        cluster = await conn.request(w.DescribeClusterRequest(include_cluster_authorized_operations=False), 1,
                                     timeout=args.timeout)
    finally:
        await conn.close()
    if cluster.error_code:
        raise LogDirsError(f"DescribeCluster: {ec.name_of(cluster.error_code)}")
    nodes = {b.broker_id: (b.host, b.port) for b in cluster.brokers}
    missing = wanted - set(nodes)
    if missing:
        raise LogDirsError(f"ERROR: The given brokers do not exist from --broker-list: "
                           f"{','.join(map(str, sorted(missing)))}. Current existent brokers: "
                           f"{','.join(map(str, sorted(nodes)))}")
    out = {}
    for broker in sorted(wanted or nodes):
        host, port = nodes[broker]
        bconn = await KafkaConnection.open(host, port, timeout=args.timeout, client_id="log-dirs-tool",
                                           ssl_context=tls, sasl=login)
        try:
            answer = await bconn.request(w.DescribeLogDirsRequest(topics=None), 4, timeout=args.timeout)
        finally:
            await bconn.close()
        if answer.error_code:
            raise LogDirsError(f"DescribeLogDirs on broker {broker}: {ec.name_of(answer.error_code)}")
        out[broker] = answer.results
    return out


def format_json(by_broker: dict[int, list], topics: set[str]) -> str:
    """Kafka's JSON for DescribeLogDirs results per broker (keys and lists in Kafka's HashMap order)."""
    brokers = []
    for broker in hashmap_order(sorted(by_broker), lambda b: b):
        dirs = []
        results = {r.log_dir: r for r in by_broker[broker]}
        # the admin client's map of a broker's log dirs is made with the answer's size as its initial capacity
        for log_dir in hashmap_order(results, string_hash, hashmap_capacity(len(results), initial=len(results))):
            r = results[log_dir]
            parts = {(t.name, p.partition_index): p for t in r.topics for p in t.partitions
                     if not topics or t.name in topics}
            partitions = [{"partition": f"{t}-{i}", "size": parts[(t, i)].partition_size,
                           "offsetLag": parts[(t, i)].offset_lag, "isFuture": parts[(t, i)].is_future_key}
                          for t, i in hashmap_order(parts, lambda k: topic_partition_hash(*k))]
            error = (ec.java_exception_class(r.error_code) or ec.name_of(r.error_code)) if r.error_code else None
            dirs.append({"partitions": partitions, "error": error, "logDir": log_dir})
        brokers.append({"broker": broker, "logDirs": dirs})
    return json.dumps({"brokers": brokers, "version": 1}, separators=(",", ":"))
