"""What the admin tools (``topics``, ``configs``, ``features``, ``cluster``, ``leader-election``) share: a
connection to the first bootstrap server that answers, and a controller request sent again while it is only refused
with NOT_CONTROLLER (no active controller yet, or a failover under way), as Kafka's admin client retries it — both
bounded by the tool's ``--timeout``."""

from __future__ import annotations

import asyncio
from typing import Callable

from kraftwire.error_codes import NOT_CONTROLLER

CONNECT_BACKOFF_S = 0.2
RETRY_BACKOFF_S = 0.1


def add_bootstrap_arguments(parser, controller: bool = False) -> None:
    """``--bootstrap-server`` (required) and ``--command-config``, as kafka-topics.sh takes them; ``controller``:
    ``--bootstrap-server`` or ``--bootstrap-controller``, one of them, as kafka-configs.sh takes them (the tool then
    reaches ``args.bootstrap_server or args.bootstrap_controller``)."""
    if controller:
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT...]", help="brokers to ask")
        target.add_argument("--bootstrap-controller", metavar="HOST:PORT[,HOST:PORT...]", help="controllers to ask")
    else:
        parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                            help="the server(s) to connect to")
    parser.add_argument("--command-config", metavar="FILE", help="client properties for a secured listener")


async def connect(args, tls, login):
    """A connection to one of ``args.bootstrap_server`` (comma-separated), each tried in turn, again until
    ``args.timeout`` (a node may still be starting); the last failure when none answered."""
    from kraftwire.server.edge.client import KafkaConnection, parse_host_port

    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.timeout
    while True:
        last = None
        for server in args.bootstrap_server.split(","):
            host, port = parse_host_port(server)
            try:
                return await KafkaConnection.open(host, port, timeout=args.timeout, client_id="kraftwire-admin",
                                                  ssl_context=tls, sasl=login)
            except (OSError, asyncio.TimeoutError) as exc:
                last = exc
        if loop.time() + CONNECT_BACKOFF_S > deadline:
            raise last or OSError("no bootstrap server")
        await asyncio.sleep(CONNECT_BACKOFF_S)


async def until_decided(conn, body, version: int, timeout: float, codes: Callable[[object], list[int]]):
    """Send a controller request; again while ``codes(answer)`` holds NOT_CONTROLLER, until ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        answer = await conn.request(body, version, timeout=timeout + 5)
        if NOT_CONTROLLER not in codes(answer) or loop.time() + RETRY_BACKOFF_S > deadline:
            return answer
        await asyncio.sleep(RETRY_BACKOFF_S)
