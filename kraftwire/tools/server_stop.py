"""``kraftwire server-stop [--process-role ROLES] [--node-id ID]``: Kafka's ``kafka-server-stop.sh`` for kraftwire
nodes. It finds the running ``kraftwire server-start`` processes (their command lines in ``/proc``) and sends each
the signal ``$SIGNAL`` (TERM by default, as the script; ``SIGNAL=0`` only checks): all of them, or those whose
properties file (with its ``--override``\\ s) says ``process.roles=ROLES`` (the value as written, e.g.
``broker,controller``) or ``node.id=ID``. ``--node-id`` wins over ``--process-role`` (with Kafka's note). Both take
``--flag=value`` as the script does, or ``--flag value``.

No server running prints ``No kafka server to stop`` and exits 1, as the script; a server whose properties file
cannot be read is skipped with a note on stderr.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from kraftwire.config import parse_properties


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--process-role", metavar="ROLES", help="stop the nodes with this process.roles value")
    parser.add_argument("--node-id", metavar="ID", help="stop the node with this node.id")


def server_command(argv: list[str]) -> tuple[str | None, list[str]] | None:
    """(properties file or None, its ``--override`` items) when ``argv`` runs ``kraftwire server-start``, else None."""
    for i, arg in enumerate(argv[:-1]):
        is_kraftwire = (os.path.basename(arg) == "kraftwire" or (arg == "kraftwire" and i > 0 and argv[i - 1] == "-m")
                        or arg.endswith(os.path.join("kraftwire", "__main__.py")))
        if is_kraftwire and argv[i + 1] == "server-start":
            rest = argv[i + 2:]
            config, overrides, j = None, [], 0
            while j < len(rest):
                if rest[j] in ("--config", "--override") and j + 1 < len(rest):
                    if rest[j] == "--config":
                        config = rest[j + 1]
                    else:
                        overrides.append(rest[j + 1])
                    j += 2
                    continue
                if not rest[j].startswith("-") and config is None:
                    config = rest[j]
                j += 1
            return config, overrides
    return None


def running_servers() -> list[tuple[int, str | None, list[str]]]:
    """(pid, absolute properties path or None, overrides) of each running ``kraftwire server-start``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
            command = server_command(argv)
            if command is None:
                continue
            config, overrides = command
            if config is not None and not os.path.isabs(config):
                config = os.path.join(os.readlink(f"/proc/{entry}/cwd"), config)
        except OSError:  # it ended meanwhile, or is not ours to read
            continue
        found.append((int(entry), config, overrides))
    return sorted(found)


def node_properties(config: str, overrides: list[str]) -> dict[str, str]:
    with open(config, encoding="utf-8") as f:
        props = parse_properties(f.read())
    for item in overrides:
        key, sep, value = item.partition("=")
        if sep:
            props[key.strip()] = value.strip()
    return props


def _signal() -> int:
    text = os.environ.get("SIGNAL", "TERM").strip().upper()
    if text.isdigit():
        return int(text)
    name = text if text.startswith("SIG") else f"SIG{text}"
    try:
        return int(getattr(signal, name))
    except AttributeError:
        raise ValueError(f"SIGNAL={text}: not a signal name or number") from None


def run(args: argparse.Namespace) -> int:
    if args.node_id is not None and args.process_role is not None:
        print("When both node-id and process-role are provided, the value for node-id will take precedence")
    try:
        sig = _signal()
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 1
    servers = running_servers()
    if not servers:
        print("No kafka server to stop")
        return 1
    for pid, config, overrides in servers:
        if args.node_id is not None or args.process_role is not None:
            if config is None:
                print(f"kraftwire server-stop: process {pid} names no properties file; skipped", file=sys.stderr)
                continue
            try:
                props = node_properties(config, overrides)
            except OSError as exc:
                print(f"kraftwire server-stop: cannot read {config} of process {pid}: {exc.strerror or exc}; "
                      "skipped", file=sys.stderr)
                continue
            if args.node_id is not None:
                if props.get("node.id", "").strip() != args.node_id:
                    continue
            elif props.get("process.roles", "").strip() != args.process_role:
                continue
        try:
            os.kill(pid, sig)
        except ProcessLookupError:  # it ended meanwhile
            continue
    return 0
