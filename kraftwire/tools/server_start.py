"""``kraftwire server-start [--config] FILE [--override KEY=VALUE ...]``: run one KRaft node from a Kafka properties
file until SIGINT/SIGTERM, as ``kafka-server-start.sh FILE --override KEY=VALUE`` does (an override replaces the
file's value of its key, or adds the key).

Exit codes: 0 after a graceful shutdown, 1 on a configuration or start-up error (the message names the key and
value, or says why the directory cannot be used), 3 on a fail-stop (I/O error in the log directory).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys

from kraftwire.errors import ConfigError

LOG_FORMAT = "[%(asctime)s] %(levelname)s %(name)s: %(message)s"


def add_common_arguments(parser: argparse.ArgumentParser, *, positional: bool = False) -> None:
    if positional:  # kafka-server-start.sh config/server.properties
        parser.add_argument("config_file", nargs="?", metavar="CONFIG", help="the node's properties file, as "
                            "kafka-server-start.sh takes it (or --config)")
        parser.add_argument("--config", metavar="FILE", help="the node's properties file (Kafka keys)")
    else:
        parser.add_argument("--config", required=True, metavar="FILE",
                            help="the node's properties file (Kafka keys)")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="a property that replaces the file's (repeatable), as kafka-server-start.sh takes it")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    # quickstart hands its children listening sockets it bound itself (no pick-then-bind race)
    parser.add_argument("--listener-fd", action="append", default=[], metavar="NAME=FD", help=argparse.SUPPRESS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, positional=True)


def setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level), format=LOG_FORMAT, stream=sys.stderr, force=True)


def inherited_sockets(specs: list[str]) -> dict[str, socket.socket]:
    out = {}
    for spec in specs:
        name, _, fd = spec.partition("=")
        out[name.upper()] = socket.socket(fileno=int(fd))
    return out


def load_settings_or_exit(path: str, overrides: list[str] = ()):
    """The node's settings from ``path`` with ``overrides`` (``KEY=VALUE`` each) applied; None after printing why
    they cannot be used."""
    from kraftwire.config import parse_properties
    from kraftwire.server.node.settings import NodeSettings

    try:
        try:
            with open(path, encoding="utf-8") as f:
                props = parse_properties(f.read())
        except OSError as exc:
            raise ConfigError("--config", path, f"cannot read the file: {exc.strerror or exc}") from None
        for item in overrides:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError("--override", item, "KEY=VALUE")
            props[key.strip()] = value.strip()
        return NodeSettings.from_properties(props)
    except ConfigError as exc:
        print(f"kraftwire: configuration error in {path}: {exc}", file=sys.stderr)
        return None


async def run_node(node, *, duration_s: float | None = None, on_started=None, before_shutdown=None) -> int:
    """Start ``node``, wait for SIGINT/SIGTERM (or ``duration_s``), shut down gracefully."""
    from kraftwire.server.node.app import StartupError

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    node.stop_requested = stop
    try:
        await node.start()
    except StartupError as exc:
        print(f"kraftwire: cannot start: {exc}", file=sys.stderr)
        return 1
    if on_started is not None:
        on_started()
    try:
        if duration_s is not None:
            try:
                await asyncio.wait_for(stop.wait(), duration_s)
            except asyncio.TimeoutError:
                pass
        else:
            await stop.wait()
    finally:
        if before_shutdown is not None:
            before_shutdown()
        logging.getLogger("kraftwire.node").info("shutting down")
        await node.shutdown()
    return 0


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_level)
    given = [c for c in (getattr(args, "config_file", None), args.config) if c]
    if len(given) != 1:
        print("kraftwire server-start: give the properties file once, as CONFIG or --config FILE", file=sys.stderr)
        return 1  # kafka-server-start.sh without its file prints its usage and exits 1
    settings = load_settings_or_exit(given[0], args.override)
    if settings is None:
        return 1
    from kraftwire.server.node.app import Node

    node = Node(settings, listen_sockets=inherited_sockets(args.listener_fd))
    return asyncio.run(run_node(node))
