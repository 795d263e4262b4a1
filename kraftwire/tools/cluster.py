"""``kraftwire cluster (cluster-id | list-endpoints | unregister --id N | unregister-controller --id N)
(--bootstrap-server | --bootstrap-controller) HOST:PORT``: Kafka's ``kafka-cluster.sh``, its flags and its output, on kraftwire's own protocol client.

The connection flags go after the subcommand, as Kafka 4.4 takes them, or before it (kraftwire's older order, still
taken); ``--command-config``/``-c`` names a client properties file (``--config``, deprecated in Kafka, too).

* ``cluster-id`` prints ``Cluster ID: <id>`` (DescribeCluster);
* ``list-endpoints [--include-fenced-brokers]`` prints Kafka's table of the brokers' endpoints (``ID HOST PORT RACK
  STATE ENDPOINT_TYPE``), or of the controllers' with ``--bootstrap-controller`` (no ``STATE``): DescribeCluster v2
  asked for the one endpoint type;
* ``unregister --id N`` removes broker N's registration (UnregisterBroker, forwarded to the active controller; the
  broker first leaves every ISR and leadership) and prints ``Broker N is no longer registered.``;
* ``unregister-controller --id N`` removes controller N's registration (UnregisterController, KIP-1312, decided by
  the active controller from metadata.version 4.4-IV2) and prints ``Controller N is no longer registered.``. As
  Kafka's tool, an UNSUPPORTED_VERSION answer (a level below 4.4-IV2) prints ``The target cluster does not support
  the controller unregistration API.`` and exits 0; another refusal prints the Java exception Kafka's admin client
  raises (``org.apache.kafka.common.errors.ControllerIdNotRegisteredException: Controller ID 5 is not currently
  registered.``) on stderr and exits 1.

A failure prints the reason on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from kraftwire.error_codes import UNSUPPORTED_VERSION, java_exception_class, name_of
from kraftwire.tools.admin import connect, until_decided

BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS = 1, 2


class ClusterCommandError(Exception):
    pass


def _connection_options(parser, default) -> None:
    """The flags Kafka takes after the subcommand; ``default`` is ``SUPPRESS`` there so that a flag given before the
    subcommand is not reset by the subcommand's parser."""
    parser.add_argument("--bootstrap-server", "-b", metavar="HOST:PORT[,HOST:PORT...]", default=default,
                        help="brokers to ask")
    parser.add_argument("--bootstrap-controller", "-C", metavar="HOST:PORT[,HOST:PORT...]", default=default,
                        help="controllers to ask")
    parser.add_argument("--command-config", "-c", metavar="FILE", default=default,
                        help="client properties for a secured listener")
    parser.add_argument("--config", dest="deprecated_config", metavar="FILE", default=default,
                        help="(deprecated in Kafka) as --command-config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _connection_options(parser, None)
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="op", metavar="cluster-id|list-endpoints|unregister|unregister-controller")
    sub.required = True
    ops = {"cluster-id": sub.add_parser("cluster-id", help="get information about the ID of a cluster"),
           "list-endpoints": sub.add_parser("list-endpoints", help="list the brokers' or controllers' endpoints"),
           "unregister": sub.add_parser("unregister", help="unregister a broker"),
           "unregister-controller": sub.add_parser("unregister-controller", help="unregister a controller")}
    for p in ops.values():
        _connection_options(p, argparse.SUPPRESS)
    ops["list-endpoints"].add_argument("--include-fenced-brokers", action="store_true",
                                       help="list fenced brokers too (with --bootstrap-server)")
    ops["unregister"].add_argument("--id", "-i", type=int, required=True, help="the ID of the broker to unregister")
    ops["unregister-controller"].add_argument("--id", "-i", type=int, required=True,
                                              help="the ID of the controller to unregister")


def _target(args) -> None:
    """One of --bootstrap-server and --bootstrap-controller, and at most one of --command-config and --config, as
    Kafka's parser requires; ``args.bootstrap_server`` becomes the servers to reach."""
    if (args.bootstrap_server is None) == (args.bootstrap_controller is None):
        raise ClusterCommandError("one of the arguments --bootstrap-server --bootstrap-controller is required"
                                  if args.bootstrap_server is None else
                                  "argument --bootstrap-controller/-C: not allowed with argument --bootstrap-server/-b")
    if args.command_config is not None and args.deprecated_config is not None:
        raise ClusterCommandError("--config and --command-config cannot be specified together.")
    if args.deprecated_config is not None:
        print("Option --config has been deprecated and will be removed in a future version. Use --command-config "
              "instead.", file=sys.stderr)
        args.command_config = args.deprecated_config
    if getattr(args, "include_fenced_brokers", False) and args.bootstrap_controller is not None:
        raise ClusterCommandError("The option --include-fenced-brokers is only supported with --bootstrap-server "
                                  "option")
    args.controllers = args.bootstrap_controller is not None
    args.bootstrap_server = args.bootstrap_server or args.bootstrap_controller


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        _target(args)
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
        if args.op == "list-endpoints":
            answer = await conn.request(w.DescribeClusterRequest(
                include_cluster_authorized_operations=False, include_fenced_brokers=args.include_fenced_brokers,
                endpoint_type=CONTROLLER_ENDPOINTS if args.controllers else BROKER_ENDPOINTS), 2,
                timeout=args.timeout)
            if answer.error_code:
                raise ClusterCommandError(answer.error_message or name_of(answer.error_code))
            print(endpoints_table(answer.brokers, args.controllers), end="")
            return
        if args.op == "unregister-controller":
            answer = await until_decided(conn, w.UnregisterControllerRequest(controller_id=args.id), 0, args.timeout,
                                         lambda a: [a.error_code])
            print(unregister_controller_outcome(args.id, answer.error_code, answer.error_message))
            return
        answer = await until_decided(conn, w.UnregisterBrokerRequest(broker_id=args.id), 0, args.timeout,
                                     lambda a: [a.error_code])
        if answer.error_code:
            raise ClusterCommandError(answer.error_message or f"{name_of(answer.error_code)} ({answer.error_code})")
        print(f"Broker {args.id} is no longer registered.")
    finally:
        await conn.close()


def unregister_controller_outcome(controller_id: int, code: int, message: str | None) -> str:
    """What Kafka's ``kafka-cluster unregister-controller`` prints for the answer (stdout), or ClusterCommandError
    with what it prints on stderr."""
    if code == 0:
        return f"Controller {controller_id} is no longer registered."
    if code == UNSUPPORTED_VERSION:
        return "The target cluster does not support the controller unregistration API."
    text = message or name_of(code)
    java = java_exception_class(code)
    raise ClusterCommandError(f"{java}: {text}" if java else text)


def endpoints_table(nodes, controllers: bool) -> str:
    """Kafka's list-endpoints table: ID, PORT and STATE 10 wide, HOST as wide as the longest host (100 with none),
    RACK as the longest rack (10 with none; an absent rack prints ``null``), ENDPOINT_TYPE 15; each column followed by
    one space but the last."""
    host_w = max((len(n.host) for n in nodes), default=100)
    rack_w = max((len(n.rack) for n in nodes if n.rack is not None), default=10)

    def row(*cells) -> str:
        widths = (10, host_w, 10, rack_w) + (() if controllers else (10,)) + (15,)
        return " ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + "\n"

    lines = [row("ID", "HOST", "PORT", "RACK", *(() if controllers else ("STATE",)), "ENDPOINT_TYPE")]
    for n in nodes:
        rack = "null" if n.rack is None else n.rack
        if controllers:
            lines.append(row(n.broker_id, n.host, n.port, rack, "controller"))
        else:
            lines.append(row(n.broker_id, n.host, n.port, rack, "fenced" if n.is_fenced else "unfenced", "broker"))
    return "".join(lines)
