"""``kraftwire metadata-quorum --bootstrap-server HOST:PORT describe --status | --replication [--human-readable]``:
what Kafka's ``kafka-metadata-quorum.sh`` prints (kraft-facts §11), from DescribeQuorum v2 and DescribeCluster.

``--status``: aligned ``Key: value`` lines (ClusterId, LeaderId, LeaderEpoch, HighWatermark, MaxFollowerLag,
MaxFollowerLagTimeMs, CurrentVoters, CurrentObservers), values from column 24 as Kafka prints them. The two lists keep
Kafka's JSON objects (``id``, ``directoryId`` — null when unset —, ``endpoints`` only when the quorum reports some)
and add one key Kafka's objects do not have, ``lag``: the leader's log end offset minus the replica's, the same
number as the ``Lag`` column of ``--replication`` (issue #9). ``--replication``: the table NodeId, DirectoryId,
LogEndOffset, Lag, LastFetchTimestamp, LastCaughtUpTimestamp, Status — leader first, then voters, then observers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from kraftwire.ids import ZERO_UUID, uuid_to_base64

DEFAULT_TOPIC = "__cluster_metadata"
_STATUS_VALUE_COLUMN = 24  # Kafka pads every --status key ("ClusterId:" .. "MaxFollowerLagTimeMs:") to 24 columns


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT...]",
                        help="brokers to ask, tried in order until one answers")
    target.add_argument("--bootstrap-controller", metavar="HOST:PORT[,HOST:PORT...]",
                        help="controllers to ask, tried in order until one answers")
    parser.add_argument("--command-config", metavar="FILE",
                        help="client properties for a secured listener: security.protocol, ssl.truststore.*, "
                             "sasl.mechanism, sasl.jaas.config (as Kafka's tools take them)")
    parser.add_argument("--timeout", type=float, default=10.0, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="mq_command", metavar="describe")
    sub.required = True
    describe = sub.add_parser("describe", help="describe the metadata quorum")
    what = describe.add_mutually_exclusive_group(required=True)
    what.add_argument("--status", action="store_true", help="the quorum status")
    what.add_argument("--replication", action="store_true", help="per-replica replication state")
    describe.add_argument("--human-readable", action="store_true", help="timestamps as '<n> ms ago'")


async def fetch_quorum(host: str, port: int, *, timeout: float = 10.0, topic: str = DEFAULT_TOPIC, ssl_context=None,
                       sasl=None):
    """(DescribeQuorum v2 response, DescribeCluster response) from the node at host:port."""
    from kraftwire.server.client import describe_quorum

    return await describe_quorum(host, port, timeout=timeout, topic=topic, ssl_context=ssl_context, sasl=sasl)


def _dir(value) -> str | None:
    return None if value == ZERO_UUID else uuid_to_base64(value)


def _endpoints(quorum, node_id: int) -> list[str]:
    for node in quorum.nodes:
        if node.node_id == node_id:
            return [f"{listener.name}://{listener.host}:{listener.port}" for listener in node.listeners]
    return []


def _leader(part):
    return next((v for v in part.current_voters if v.replica_id == part.leader_id), None)


def _lag(leader, replica) -> int | None:
    """Kafka's --replication ``Lag``: leader log end offset minus the replica's (never below 0); None without a leader."""
    return None if leader is None else max(0, leader.log_end_offset - replica.log_end_offset)


def _replicas_json(quorum, replicas, leader) -> str:
    items = []
    for r in replicas:
        item = {"id": r.replica_id, "directoryId": _dir(r.replica_directory_id)}
        endpoints = _endpoints(quorum, r.replica_id)
        if endpoints:  # Kafka leaves the key out when the quorum knows no endpoint (observers, old voters)
            item["endpoints"] = endpoints
        item["lag"] = _lag(leader, r)
        items.append(item)
    return "[" + ", ".join(json.dumps(i, separators=(", ", ": ")) for i in items) + "]"


def status_lines(quorum, cluster) -> list[str]:
    part = quorum.topics[0].partitions[0]
    leader = _leader(part)
    max_lag, max_lag_time = 0, -1
    if leader is not None and part.current_voters:
        lagging = min(part.current_voters, key=lambda v: v.log_end_offset)
        max_lag = leader.log_end_offset - lagging.log_end_offset
        if lagging.replica_id == leader.replica_id:
            max_lag_time = 0
        elif leader.last_caught_up_timestamp >= 0 and lagging.last_caught_up_timestamp >= 0:
            max_lag_time = leader.last_caught_up_timestamp - lagging.last_caught_up_timestamp
    rows = [
        ("ClusterId", cluster.cluster_id),
        ("LeaderId", part.leader_id),
        ("LeaderEpoch", part.leader_epoch),
        ("HighWatermark", part.high_watermark),
        ("MaxFollowerLag", max_lag),
        ("MaxFollowerLagTimeMs", max_lag_time),
        ("CurrentVoters", _replicas_json(quorum, part.current_voters, leader)),
        ("CurrentObservers", _replicas_json(quorum, part.observers, leader)),
    ]
    return [f"{(k + ':').ljust(_STATUS_VALUE_COLUMN)}{v}" for k, v in rows]


def replication_lines(quorum, *, human_readable: bool = False, now_ms: int | None = None) -> list[str]:
    part = quorum.topics[0].partitions[0]
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    leader = _leader(part)
    others = [v for v in part.current_voters if v.replica_id != part.leader_id]
    ordered = ([(leader, "Leader")] if leader else []) + [(v, "Follower") for v in others] + \
              [(o, "Observer") for o in part.observers]

    def ts(value: int) -> str:
        if value < 0:
            return "-1"
        return f"{max(0, now_ms - value)} ms ago" if human_readable else str(value)

    header = ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"]
    rows = [[str(r.replica_id), uuid_to_base64(r.replica_directory_id), str(r.log_end_offset),
             str(_lag(leader, r) or 0), ts(r.last_fetch_timestamp), ts(r.last_caught_up_timestamp),
             status] for r, status in ordered]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["\t".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [header, *rows]]


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import KraftwireError
    from kraftwire.server.client import parse_host_port

    try:
        servers = [parse_host_port(item.strip())
                   for item in (args.bootstrap_server or args.bootstrap_controller).split(",") if item.strip()]
    except ValueError as exc:
        print(f"kraftwire metadata-quorum: {exc}", file=sys.stderr)
        return 1
    if not servers:
        print("kraftwire metadata-quorum: no bootstrap server given", file=sys.stderr)
        return 1
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        tls, login = client_security(args.command_config)
    except ConfigError as exc:
        print(f"kraftwire metadata-quorum: {exc}", file=sys.stderr)
        return 1
    failures = []
    for host, port in servers:
        try:
            quorum, cluster = asyncio.run(fetch_quorum(host, port, timeout=args.timeout, ssl_context=tls, sasl=login))
            break
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            failures.append(f"{host}:{port}: {exc or type(exc).__name__}")
    else:
        print(f"kraftwire metadata-quorum: cannot describe the quorum via {'; '.join(failures)}", file=sys.stderr)
        return 1
    part = quorum.topics[0].partitions[0] if quorum.topics and quorum.topics[0].partitions else None
    error = quorum.error_code or (part.error_code if part is not None else 0)
    if error:
        from kraftwire.error_codes import name_of  # type: ignore[attr-defined]

        print(f"kraftwire metadata-quorum: the quorum answered {name_of(error)} ({error})", file=sys.stderr)
        return 1
    lines = status_lines(quorum, cluster) if args.status else replication_lines(quorum,
                                                                                 human_readable=args.human_readable)
    print("\n".join(lines))
    return 0
