"""``kraftwire storage``: ``random-uuid`` and ``format``, like Kafka's ``kafka-storage.sh``.

``kraftwire storage random-uuid`` prints a new cluster id (22 characters of URL-safe base64).

``kraftwire storage format -t CLUSTER_ID -c CONFIG [--ignore-formatted]`` writes ``meta.properties``
(``version=1``, ``cluster.id``, ``node.id``, a fresh ``directory.id``) into every log directory of the config
(``metadata.log.dir`` and ``log.dirs``), printing ``Formatting <dir>`` for each. It checks every directory before
it writes any: an already formatted directory stops it (exit 1) unless ``--ignore-formatted`` is given, in which
case formatted directories are left alone.
"""

from __future__ import annotations

import argparse
import os
import sys

from kraftwire.config import Config, load_config
from kraftwire.errors import ConfigError, KraftwireError
from kraftwire.ids import random_kafka_uuid, uuid_from_base64, uuid_to_base64
from kraftwire.log.checkpoint import fsync_dir
from kraftwire.log.meta_properties import MetaProperties, read_meta_properties, write_meta_properties

__all__ = ["add_arguments", "run", "format_storage"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="storage_command", metavar="SUBCOMMAND")
    sub.required = True
    sub.add_parser("random-uuid", help="print a new random cluster id (22 characters of base64url)")
    fmt = sub.add_parser(
        "format",
        help="write meta.properties into every log directory of a config",
        description="Format the log directories of a node: write meta.properties (version=1, cluster.id, node.id, "
        "directory.id) in each of metadata.log.dir and log.dirs. Refuses to reformat.",
    )
    fmt.add_argument("-t", "--cluster-id", required=True, help="the cluster id (see 'kraftwire storage random-uuid')")
    fmt.add_argument("-c", "--config", required=True, help="the node's properties file")
    fmt.add_argument("-g", "--ignore-formatted", action="store_true",
                     help="skip directories that are already formatted instead of failing")
    fmt.add_argument("-s", "--standalone", action="store_true",
                     help="(coming later, with dynamic quorums / KIP-853: not supported yet) format as the single "
                     "initial voter")
    fmt.add_argument("-I", "--initial-controllers", metavar="VOTERS",
                     help="(coming later, with dynamic quorums / KIP-853: not supported yet) the initial voter set "
                     "id@host:port:directory-id,...")
    fmt.set_defaults(_storage_format=True)


def run(args: argparse.Namespace) -> int:
    if args.storage_command == "random-uuid":
        print(uuid_to_base64(random_kafka_uuid()))
        return 0
    if args.standalone or args.initial_controllers:
        print("kraftwire storage format: --standalone and --initial-controllers come with dynamic quorums "
              "(KIP-853) and are not supported yet; use controller.quorum.voters.", file=sys.stderr)
        return 1
    try:
        config = load_config(args.config).validate()
    except OSError as exc:
        print(f"kraftwire storage format: cannot read {args.config}: {exc}", file=sys.stderr)
        return 1
    except ConfigError as exc:
        print(f"kraftwire storage format: {exc}", file=sys.stderr)
        return 1
    try:
        for line in format_storage(config, args.cluster_id, ignore_formatted=args.ignore_formatted):
            print(line)
    except (KraftwireError, ValueError) as exc:
        print(f"kraftwire storage format: {exc}", file=sys.stderr)
        return 1
    return 0


def format_storage(config: Config, cluster_id: str, *, ignore_formatted: bool = False) -> list[str]:
    """Format every log dir of ``config``; returns the lines to print. Raises ``ValueError`` with the reason."""
    try:
        uuid_from_base64(cluster_id)
    except ValueError:
        raise ValueError(
            f"cluster id {cluster_id!r} does not appear to be a valid UUID (22 characters of base64url, "
            "as 'kraftwire storage random-uuid' prints)"
        ) from None
    if config.node_id < 0:
        raise ConfigError("node.id", config.node_id, "must be set to a non-negative id to format storage")
    dirs = config.all_log_dirs()
    todo: list[str] = []
    for d in dirs:
        meta = read_meta_properties(d) if os.path.isdir(d) else None
        if meta is None:
            todo.append(d)
        elif not ignore_formatted:
            raise ValueError(
                f"log directory {d} is already formatted (cluster.id {meta.cluster_id}, node.id {meta.node_id}); "
                "use --ignore-formatted to leave it alone and format the others"
            )
    if not todo:
        return ["All of the log directories are already formatted."]
    lines = []
    for d in todo:
        created = not os.path.isdir(d)
        os.makedirs(d, exist_ok=True)
        if created:
            fsync_dir(os.path.dirname(os.path.abspath(d)))
        write_meta_properties(d, MetaProperties(cluster_id=cluster_id, node_id=config.node_id,
                                                directory_id=random_kafka_uuid(), version=1))
        lines.append(f"Formatting {d}")
    return lines
