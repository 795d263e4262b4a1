"""``kraftwire cluster (--bootstrap-server | --bootstrap-controller) HOST:PORT (cluster-id | unregister --id N)``:
Kafka's ``kafka-cluster.sh``, its flags and its output, on kraftwire's own protocol client.

* ``cluster-id`` prints ``Cluster ID: <id>`` (DescribeCluster);
* ``unregister --id N`` removes broker N's registration (UnregisterBroker, forwarded to the active controller; the
  broker first leaves every ISR and leadership) and prints ``Broker N is no longer registered.``.

A failure prints the reason on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from kraftwire.error_codes import name_of
from kraftwire.tools.admin import connect, until_decided



class ClusterCommandError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--bootstrap-server", "-b", metavar="HOST:PORT[,HOST:PORT...]", help="brokers to ask")
    target.add_argument("--bootstrap-controller", "-C", metavar="HOST:PORT[,HOST:PORT...]", help="controllers to ask")
    parser.add_argument("--config", "-c", dest="command_config", metavar="FILE",
                        help="client properties for a secured listener")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="op", metavar="cluster-id|unregister")
    sub.required = True
    sub.add_parser("cluster-id", help="get information about the ID of a cluster")
    p = sub.add_parser("unregister", help="unregister a broker")
    p.add_argument("--id", "-i", type=int, required=True, help="the ID of the broker to unregister")


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    args.bootstrap_server = args.bootstrap_server or args.bootstrap_controller
    try:
        tls, login = client_security(args.command_config)
        asyncio.run(_run(args, tls, login))
    except (ClusterCommandError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1
    return 0


async def _run(args, tls, login) -> None:
    from kraftwire.protocol import messages as w

    conn = await connect(args, tls, login)
    try:
        if args.op == "cluster-id":
            answer = await conn.request(w.DescribeClusterRequest(include_cluster_authorized_operations=False), 1,
                                        timeout=args.timeout)
            if answer.error_code:
                raise ClusterCommandError(answer.error_message or name_of(answer.error_code))
            print(f"Cluster ID: {answer.cluster_id}" if answer.cluster_id
                  else "No cluster ID found. The Kafka version is probably too old.")
            return
        answer = await until_decided(conn, w.UnregisterBrokerRequest(broker_id=args.id), 0, args.timeout,
                                     lambda a: [a.error_code])
        if answer.error_code:
            raise ClusterCommandError(answer.error_message or f"{name_of(answer.error_code)} ({answer.error_code})")
        print(f"Broker {args.id} is no longer registered.")
    finally:
        await conn.close()
