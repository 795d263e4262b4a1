"""``kraftwire storage``: ``random-uuid`` and ``format``, like Kafka's ``kafka-storage.sh``.

``kraftwire storage random-uuid`` prints a new cluster id (22 characters of URL-safe base64).

``kraftwire storage format -t CLUSTER_ID -c CONFIG [-r RELEASE] [-f NAME=LEVEL ...] [--ignore-formatted]`` writes
``meta.properties`` (``version=1``, ``cluster.id``, ``node.id``, a fresh ``directory.id``) into every log directory of
the config (``metadata.log.dir`` and ``log.dirs``) with ``bootstrap.checkpoint`` (the cluster's starting
``metadata.version`` and features, ``kraftwire.metadata.bootstrap``) beside it, printing
Kafka's lines (``Formatting metadata directory D with metadata.version V.``). It checks every directory before it
writes any: an already formatted directory stops it (exit 1) unless ``--ignore-formatted`` is given, in which case
formatted directories are left alone.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time

from kraftwire.config import Config, load_config
from kraftwire.errors import ConfigError, KraftwireError
from kraftwire.ids import random_kafka_uuid, uuid_from_base64, uuid_to_base64
from kraftwire.log.checkpoint import fsync_dir
from kraftwire.log.checkpoint import write_atomic
from kraftwire.log.meta_properties import MetaProperties, read_meta_properties, write_meta_properties
from kraftwire.metadata import version as mv
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, bootstrap_records, encode_bootstrap_file
from kraftwire.security.sasl import scram

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
    fmt.add_argument("-r", "--release-version", metavar="VERSION",
                     help=f"the metadata.version to start at: a release ({mv.DEFAULT.release}) or a step "
                     f"({mv.DEFAULT.name}); default {mv.DEFAULT.name}, supported {mv.MINIMUM.name} to {mv.MAXIMUM.name}")
    fmt.add_argument("-f", "--feature", metavar="NAME=LEVEL", action="append", default=[],
                     help="a feature level to start at (repeatable); metadata.version=LEVEL instead of -r")
    fmt.add_argument("-g", "--ignore-formatted", action="store_true",
                     help="skip directories that are already formatted instead of failing")
    fmt.add_argument("-S", "--add-scram", metavar="SCRAM", action="append", default=[],
                     help="a SCRAM credential for the metadata log, repeatable: "
                          "'SCRAM-SHA-256=[name=alice,password=alice-secret]' or "
                          "'SCRAM-SHA-512=[name=alice,iterations=8192,salt=\"N3E=\",saltedpassword=\"YCE=\"]'")
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
        version, features = release_and_features(args.release_version, args.feature)
        scram_records = []
        for text in args.add_scram:
            mechanism, user, cred = scram.parse_add_scram(text, lambda: scram.server_nonce(secrets.randbits(130)).encode())
            scram_records.append((scram.MECHANISMS[mechanism][1], user, cred))
        for line in format_storage(config, args.cluster_id, ignore_formatted=args.ignore_formatted,
                                   metadata_version=version, features=features, scram=scram_records):
            print(line)
    except (KraftwireError, ValueError) as exc:
        print(f"kraftwire storage format: {exc}", file=sys.stderr)
        return 1
    return 0


#: features kraftwire knows besides metadata.version, and the highest level it implements of each
KNOWN_FEATURES = {"kraft.version": 0, "group.version": 0, "transaction.version": 0,
                  "eligible.leader.replicas.version": 0}


def release_and_features(release: str | None, feature_args: list[str]) -> tuple[mv.MetadataVersion, dict[str, int]]:
    """``--release-version`` and ``--feature NAME=LEVEL`` as (metadata.version, other features); ``ValueError``
    names the offending argument."""
    features: dict[str, int] = {}
    for item in feature_args:
        name, sep, level = item.partition("=")
        name = name.strip()
        if not sep or not name or not level.strip().lstrip("-").isdigit():
            raise ValueError(f"--feature {item!r}: expected NAME=LEVEL")
        if name in features:
            raise ValueError(f"--feature {name} is given twice")
        features[name] = int(level)
    version = mv.DEFAULT
    if mv.FEATURE_NAME in features:
        if release is not None:
            raise ValueError("give metadata.version either with --release-version or with --feature, not both")
        version = mv.from_level(features.pop(mv.FEATURE_NAME))
    elif release is not None:
        version = mv.parse(release)
    for name, level in features.items():
        if name not in KNOWN_FEATURES:
            raise ValueError(f"unsupported feature: {name}; supported features are {mv.FEATURE_NAME}, "
                             + ", ".join(sorted(KNOWN_FEATURES)))
        if not 0 <= level <= KNOWN_FEATURES[name]:
            raise ValueError(f"--feature {name}={level}: kraftwire implements {name} up to level "
                             f"{KNOWN_FEATURES[name]}")
    return version, features


def format_storage(config: Config, cluster_id: str, *, ignore_formatted: bool = False,
                   metadata_version: mv.MetadataVersion = mv.DEFAULT, features: dict[str, int] | None = None,
                   now_ms: int | None = None, scram=()) -> list[str]:
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
    metadata_dir = config.metadata_dir()
    bootstrap = encode_bootstrap_file(bootstrap_records(metadata_version, features, scram),
                                      int(time.time() * 1000) if now_ms is None else now_ms)
    for d in todo:
        created = not os.path.isdir(d)
        os.makedirs(d, exist_ok=True)
        if created:
            fsync_dir(os.path.dirname(os.path.abspath(d)))
        write_atomic(os.path.join(d, BOOTSTRAP_FILE), bootstrap)  # every new directory gets one, as Kafka's
        write_meta_properties(d, MetaProperties(cluster_id=cluster_id, node_id=config.node_id,
                                                directory_id=random_kafka_uuid(), version=1))
        kind = "metadata" if d == metadata_dir else "data"
        lines.append(f"Formatting {kind} directory {d} with {mv.FEATURE_NAME} {metadata_version.name}.")
    return lines
