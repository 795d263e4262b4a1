"""``kraftwire storage``: ``random-uuid``, ``format``, ``info``, ``version-mapping`` and ``feature-dependencies``,
like Kafka's ``kafka-storage.sh``.

``kraftwire storage info -c CONFIG`` prints, as Kafka's tool, the log directories found (sorted), the first one's
``meta.properties`` (``Found metadata: {cluster.id=..., ...}``) and the problems: a directory that does not exist or
is not formatted, or directories that disagree on the cluster id (else on the node id); exit 1 with a problem.
``version-mapping [-r RELEASE]`` and ``feature-dependencies --feature NAME=LEVEL ...`` print what ``kraftwire
features`` prints for them (Kafka's two tools share them too).

``kraftwire storage random-uuid`` prints a new cluster id (22 characters of URL-safe base64).

``kraftwire storage format -t CLUSTER_ID -c CONFIG [-r RELEASE] [-f NAME=LEVEL ...] [--ignore-formatted]`` writes
``meta.properties`` (``version=1``, ``cluster.id``, ``node.id``, a fresh ``directory.id``) into every log directory of
the config (``metadata.log.dir`` and ``log.dirs``) with ``bootstrap.checkpoint`` (the cluster's starting
``metadata.version`` and features, ``kraftwire.metadata.bootstrap``) beside it, printing
Kafka's lines (``Formatting metadata directory D with metadata.version V.``). It checks every directory before it
writes any: an already formatted directory stops it (exit 1) unless ``--ignore-formatted`` is given, in which case
formatted directories are left alone.

The features start at the release's levels (Kafka's defaults for ``--release-version``, kraftwire's newest level
without it), each lowered to what kraftwire implements with a note on stderr saying why (``kraftwire.metadata
.features``); ``--feature NAME=LEVEL`` sets one, and a level kraftwire refuses is refused by name.

A controller without ``controller.quorum.voters`` (Kafka 4's shipped configs name
``controller.quorum.bootstrap.servers``) needs one of ``--standalone`` (itself as the one voter, at its advertised
controller listener, with a new directory id), ``--initial-controllers id@host:port:directory-id,...`` or
``--no-initial-controllers``, as Kafka's StorageTool requires; the first two write the metadata log's bootstrap
snapshot (``kraftwire.raft.dynamic_voters``: kraft.version 1 and the VotersRecord) and give a voter's metadata
directory its directory id from the set, printing Kafka's "Formatting dynamic metadata voter directory ..." line.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time

from kraftwire.config import Config, load_config, load_properties
from kraftwire.errors import ConfigError, KraftwireError
from kraftwire.ids import random_kafka_uuid, uuid_from_base64, uuid_to_base64
from kraftwire.log.checkpoint import fsync_dir
from kraftwire.log.checkpoint import write_atomic
from kraftwire.log.meta_properties import MetaProperties, read_meta_properties, write_meta_properties
from kraftwire.metadata import features as ft
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
                     help=f"the metadata.version to start at, with the release's feature levels: a release "
                     f"({mv.DEFAULT.release}) or a step ({mv.DEFAULT.name}); default {mv.DEFAULT.name}, supported "
                     f"{mv.MINIMUM.name} to {mv.MAXIMUM.name}")
    fmt.add_argument("-f", "--feature", metavar="NAME=LEVEL", action="append", default=[],
                     help="a feature level to start at, instead of the release's (repeatable); "
                     "metadata.version=LEVEL instead of -r")
    fmt.add_argument("-g", "--ignore-formatted", action="store_true",
                     help="skip directories that are already formatted instead of failing")
    fmt.add_argument("-S", "--add-scram", metavar="SCRAM", action="append", default=[],
                     help="a SCRAM credential for the metadata log, repeatable: "
                          "'SCRAM-SHA-256=[name=alice,password=alice-secret]' or "
                          "'SCRAM-SHA-512=[name=alice,iterations=8192,salt=\"N3E=\",saltedpassword=\"YCE=\"]'")
    quorum = fmt.add_mutually_exclusive_group()
    quorum.add_argument("-s", "--standalone", action="store_true",
                        help="initialize this controller as a single-node dynamic quorum (KIP-853)")
    quorum.add_argument("-N", "--no-initial-controllers", action="store_true",
                        help="initialize a node without a dynamic quorum topology (a controller to be added later)")
    quorum.add_argument("-I", "--initial-controllers", metavar="VOTERS",
                        help="the initial dynamic quorum: id@host:port:directory-id,... (the same on every node)")
    fmt.set_defaults(_storage_format=True)
    info = sub.add_parser("info", help="print the state of the log directories of a config")
    info.add_argument("-c", "--config", required=True, help="the node's properties file")
    mapping = sub.add_parser("version-mapping", help="the feature levels of a release")
    mapping.add_argument("-r", "--release-version", help="the release (default: Kafka 4.4's latest production level)")
    deps = sub.add_parser("feature-dependencies", help="the dependencies of feature levels")
    deps.add_argument("-f", "--feature", action="append", required=True, metavar="NAME=LEVEL",
                      help="a feature and its level, e.g. transaction.version=2 (repeatable)")


def _features_listing(args) -> int:
    """``version-mapping`` and ``feature-dependencies``: kafka-features.sh's, which Kafka's storage tool shares."""
    from kraftwire.tools import features

    try:
        return (features.version_mapping if args.storage_command == "version-mapping"
                else features.feature_dependencies)(args)
    except features.FeatureCommandError as exc:
        print(exc, file=sys.stderr)
        return 1


def info_lines(directories) -> tuple[list[str], bool]:
    """Kafka's ``storage info`` report of ``directories``: (lines, whether a problem was found)."""
    problems, found, metas = [], [], []
    for directory in sorted(set(directories)):
        if not os.path.isdir(directory):
            problems.append(f"{directory} does not exist")
            continue
        found.append(directory)
        path = os.path.join(directory, "meta.properties")
        if not os.path.isfile(path):
            problems.append(f"{directory} is not formatted.")
            continue
        try:
            metas.append(load_properties(path))
        except (OSError, ValueError) as exc:
            problems.append(f"{path} cannot be read: {exc}")
    if len({m.get("cluster.id") for m in metas}) > 1:
        problems.append("Mismatched cluster IDs between storage directories.")
    elif len({m.get("node.id") for m in metas}) > 1:
        problems.append("Mismatched node IDs between storage directories.")
    lines = []
    if found:
        lines += [f"Found log director{'y' if len(found) == 1 else 'ies'}:", *(f"  {d}" for d in found), ""]
    elif not problems:
        lines += ["No directories specified.", ""]
    if metas:
        lines += ["Found metadata: {" + ", ".join(f"{k}={v}" for k, v in sorted(metas[0].items())) + "}", ""]
    if problems:
        lines += [f"Found problem{'s' if len(problems) > 1 else ''}:", *(f"  {p}" for p in problems), ""]
    return lines, bool(problems)


def _info(args) -> int:
    try:
        config = load_config(args.config)
    except OSError as exc:
        print(f"kraftwire storage info: cannot read {args.config}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except ConfigError as exc:
        print(f"kraftwire storage info: {exc}", file=sys.stderr)
        return 1
    lines, problems = info_lines(config.all_log_dirs())
    for line in lines:
        print(line)
    return 1 if problems else 0


def run(args: argparse.Namespace) -> int:
    if args.storage_command == "random-uuid":
        print(uuid_to_base64(random_kafka_uuid()))
        return 0
    if args.storage_command in ("version-mapping", "feature-dependencies"):
        return _features_listing(args)
    if args.storage_command == "info":
        return _info(args)
    try:
        config = load_config(args.config).validate()
    except OSError as exc:
        print(f"kraftwire storage format: cannot read {args.config}: {exc}", file=sys.stderr)
        return 1
    except ConfigError as exc:
        print(f"kraftwire storage format: {exc}", file=sys.stderr)
        return 1
    try:
        initial = initial_voters(args, config)
        version, features, notes = release_and_features(args.release_version, args.feature,
                                                        dynamic=initial is not None)
        for note in notes:
            print(f"kraftwire storage format: {note}", file=sys.stderr)
        scram_records = []
        for text in args.add_scram:
            mechanism, user, cred = scram.parse_add_scram(text, lambda: scram.server_nonce(secrets.randbits(130)).encode())
            scram_records.append((scram.MECHANISMS[mechanism][1], user, cred))
        for line in format_storage(config, args.cluster_id, ignore_formatted=args.ignore_formatted,
                                   metadata_version=version, features=features, scram=scram_records,
                                   initial_voters=initial):
            print(line)
    except (KraftwireError, ValueError) as exc:
        print(f"kraftwire storage format: {exc}", file=sys.stderr)
        return 1
    return 0


def initial_voters(args, config: Config):
    """The initial dynamic voter set (KIP-853) from ``--standalone`` or ``--initial-controllers``, or None; Kafka's
    refusals as ``ValueError``."""
    from kraftwire.raft.dynamic_voters import DynamicVoter, parse_voters

    if config.node_id < 0:
        raise ConfigError("node.id", config.node_id, "must be set to a non-negative id to format storage")
    roles = config.process_roles or ("controller",)  # the node's default role, as its settings take it
    voters = None
    if args.initial_controllers:
        voters = parse_voters(args.initial_controllers)
    elif args.standalone:
        if "controller" not in roles:
            raise ValueError("You can only use --standalone on a controller.")
        from kraftwire.server.node.settings import NodeSettings

        settings = NodeSettings.from_file(args.config)
        names = settings.controller_listener_names
        ep = next((e for e in settings.advertised if names and e.name == names[0]), None)
        if ep is None:
            raise ValueError("No controller listeners found.")
        voters = (DynamicVoter(config.node_id, ep.host or "localhost", ep.port, random_kafka_uuid()),)
    if voters is not None and config.controller_quorum_voters:
        raise ValueError("controller.quorum.voters is set: a static quorum takes no --standalone or "
                         "--initial-controllers (remove controller.quorum.voters and name "
                         "controller.quorum.bootstrap.servers instead)")
    if (voters is None and not args.no_initial_controllers and "controller" in roles
            and not config.controller_quorum_voters):
        raise ValueError("Because controller.quorum.voters is not set on this controller, you must specify one of "
                         "the following: --standalone, --initial-controllers, or --no-initial-controllers.")
    return voters


def release_and_features(release: str | None, feature_args: list[str], *,
                         dynamic: bool = False) -> tuple[mv.MetadataVersion, dict[str, int], list[str]]:
    """``--release-version`` and ``--feature NAME=LEVEL`` as Kafka 4.4's StorageTool reads them: (metadata.version,
    the other features' levels, notes). A feature not named takes the release's default (Kafka's), lowered to the
    highest level kraftwire implements; each lowering of a named release's default is a note. ``ValueError`` carries Kafka's message, or
    kraftwire's reason for a level it refuses."""
    features = dict(_name_and_level(item) for item in feature_args)  # as Kafka's: the last of a name counts
    version = mv.DEFAULT
    if mv.FEATURE_NAME in features:
        if release is not None:
            raise ValueError("Use --release-version instead of --feature metadata.version=X to avoid ambiguity.")
        level = features.pop(mv.FEATURE_NAME)
        if level not in mv.BY_LEVEL or level < mv.KAFKA_MINIMUM.level:
            raise ValueError(f"No MetadataVersion with feature level {level}. Valid feature levels are from "
                             f"{mv.KAFKA_MINIMUM.level} to {mv.LATEST_TESTING.level}.")
        if not mv.BY_LEVEL[level].is_production:
            raise ValueError(f"metadata.version {mv.BY_LEVEL[level].name} is not yet stable.")
        version = mv.from_level(level)
    elif release is not None:
        version = mv.parse(release)
    for name, level in features.items():
        feature = ft.BY_NAME.get(name)
        if feature is None:
            raise ValueError(f"Unsupported feature: {name}. Supported features are: "
                             + ", ".join(sorted(ft.BY_NAME)))
        if feature.level(level) is None:
            raise ValueError(f"No feature:{name} with feature level {level}")
        why = ft.refusal(name, level)
        if why:
            raise ValueError(why)
    kraft = features.pop(ft.KRAFT_VERSION, None)  # it lives in the Raft log's bootstrap snapshot
    if kraft is not None and (kraft == 0) == dynamic:
        raise ValueError(f"Cannot set kraft.version to {kraft} {'if' if dynamic else 'unless'} KIP-853 "
                         "configuration is present. Try removing the --feature flag for kraft.version.")
    defaults, lowered = ft.kraftwire_defaults(version)
    notes = [f"{name}={defaults[name]}, not Kafka {version.release}'s default {ft.BY_NAME[name].default_level(version)}"
             f": {why}" for name, why in lowered.items() if name not in features and release is not None]
    levels = {**defaults, **features}
    proposed = {mv.FEATURE_NAME: version.level, **levels}
    for name in sorted(levels):
        why = ft.dependency_error(name, levels[name], proposed)
        if why:
            raise ValueError(why)
    return version, levels, notes


def _name_and_level(item: str) -> tuple[str, int]:
    """Kafka's parseNameAndLevel: ``NAME=LEVEL`` with a short for a level."""
    name, sep, level = item.partition("=")
    if not sep:
        raise ValueError(f"Can't parse feature=level string {item}: equals sign not found.")
    try:
        value = int(level.strip())
        if not -32768 <= value <= 32767:
            raise ValueError
    except ValueError:
        raise ValueError(f"Can't parse feature=level string {item}: unable to parse {level.strip()} "
                         "as a short.") from None
    return name.strip(), value


def format_storage(config: Config, cluster_id: str, *, ignore_formatted: bool = False,
                   metadata_version: mv.MetadataVersion = mv.DEFAULT, features: dict[str, int] | None = None,
                   now_ms: int | None = None, scram=(), initial_voters=None) -> list[str]:
    """Format every log dir of ``config``; returns the lines to print. Raises ``ValueError`` with the reason.
    ``features`` None: the levels kraftwire picks at ``metadata_version`` (``features.kraftwire_defaults``)."""
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
    now = int(time.time() * 1000) if now_ms is None else now_ms
    me = next((v for v in initial_voters or () if v.node_id == config.node_id), None)
    for d in todo:
        created = not os.path.isdir(d)
        os.makedirs(d, exist_ok=True)
        if created:
            fsync_dir(os.path.dirname(os.path.abspath(d)))
        write_atomic(os.path.join(d, BOOTSTRAP_FILE), bootstrap)  # every new directory gets one, as Kafka's
        directory_id = random_kafka_uuid()
        if d != metadata_dir:
            kind = "data directory"
        elif initial_voters is None:
            kind = "metadata directory"
        else:
            # KIP-853: the metadata log starts from a bootstrap snapshot naming the initial voters; a voter's
            # metadata directory takes the directory id it has in that set
            kind = "dynamic metadata voter directory" if me is not None else "dynamic metadata directory"
            if me is not None:
                directory_id = me.directory_id
            _write_bootstrap_snapshot(d, config, initial_voters, now)
        write_meta_properties(d, MetaProperties(cluster_id=cluster_id, node_id=config.node_id,
                                                directory_id=directory_id, version=1))
        lines.append(f"Formatting {kind} {d} with {mv.FEATURE_NAME} {metadata_version.name}.")
    return lines


def _write_bootstrap_snapshot(directory: str, config: Config, voters, now_ms: int) -> None:
    from kraftwire.config import METADATA_TOPIC
    from kraftwire.raft.dynamic_voters import BOOTSTRAP_SNAPSHOT, bootstrap_snapshot, voters_record

    partition = os.path.join(directory, f"{METADATA_TOPIC}-0")
    os.makedirs(partition, exist_ok=True)
    fsync_dir(directory)
    listener = config.controller_listener_names[0] if config.controller_listener_names else "CONTROLLER"
    write_atomic(os.path.join(partition, BOOTSTRAP_SNAPSHOT), bootstrap_snapshot(voters_record(voters, listener),
                                                                                  now_ms))
