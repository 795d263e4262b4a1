"""``kraftwire features --bootstrap-server HOST:PORT (describe | upgrade | downgrade | disable | version-mapping |
feature-dependencies)``: Kafka 4.4's ``kafka-features.sh``, its flags and its output, on kraftwire's own protocol
client.

* ``describe``: one line per feature the node supports, by name, from its ApiVersions (KIP-584), in Kafka 4.4's
  columns: ``Feature: metadata.version`` padded to 40, then ``SupportedMinVersion: 3.3-IV3``,
  ``SupportedMaxVersion: 4.4-IV0``, ``FinalizedVersionLevel: 4.4-IV0`` (each value padded to 15) and ``Epoch: 42``,
  two spaces apart (metadata.version levels by name, others as numbers);
* ``upgrade`` / ``downgrade [--unsafe]`` with ``--release-version V`` (its metadata.version and Kafka's default level
  of every feature, a level 0 left out of an upgrade), or the deprecated ``--metadata V`` and/or ``--feature
  NAME=LEVEL`` (repeatable), ``--dry-run`` (validate only): UpdateFeatures, then per feature by name
  ``metadata.version was upgraded to 21.`` (``can be`` on a dry run) or ``Could not upgrade metadata.version to 22.
  <reason>``; ``disable --feature NAME`` sets level 0;
* ``version-mapping [--release-version V]``: the feature levels a Kafka release implies (Kafka's table, whatever
  kraftwire implements of it: the cluster's controller refuses what it lacks);
* ``feature-dependencies --feature NAME=LEVEL ...``: what each level depends on.

Failures end with ``N out of M operation(s) failed.`` on stderr and exit 1, as Kafka's tool.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from kraftwire.error_codes import name_of
from kraftwire.tools.admin import connect, until_decided

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


class FeatureCommandError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT...]", help="brokers to ask")
    target.add_argument("--bootstrap-controller", metavar="HOST:PORT[,HOST:PORT...]", help="controllers to ask")
    parser.add_argument("--command-config", metavar="FILE", help="client properties for a secured listener")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="op",
                                metavar="describe|upgrade|downgrade|disable|version-mapping|feature-dependencies")
    sub.required = True
    sub.add_parser("describe", help="the supported and finalized features")
    for op in ("upgrade", "downgrade"):
        p = sub.add_parser(op, help=f"{op} one or more features")
        p.add_argument("--metadata", help="the metadata.version (deprecated: use --release-version)")
        p.add_argument("--release-version", help="a release, e.g. 3.9-IV0: its metadata.version")
        p.add_argument("--feature", action="append", metavar="NAME=LEVEL", help="a feature and its level")
        if op == "downgrade":
            p.add_argument("--unsafe", action="store_true", help="allow a downgrade that may lose metadata")
        p.add_argument("--dry-run", action="store_true", help="validate only")
    p = sub.add_parser("disable", help="disable one or more features (level 0)")
    p.add_argument("--feature", action="append", required=True, metavar="NAME", help="a feature to disable")
    p.add_argument("--unsafe", action="store_true", help="allow a downgrade that may lose metadata")
    p.add_argument("--dry-run", action="store_true", help="validate only")
    p = sub.add_parser("version-mapping", help="the feature levels of a release")
    p.add_argument("--release-version", help="the release (default: Kafka 4.4's latest production level)")
    p = sub.add_parser("feature-dependencies", help="the dependencies of feature levels")
    p.add_argument("--feature", action="append", required=True, metavar="NAME=LEVEL",
                   help="a feature and its level, e.g. metadata.version=5 (repeatable)")


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    args.bootstrap_server = args.bootstrap_server or args.bootstrap_controller
    try:
        if args.op == "version-mapping":
            return version_mapping(args)
        if args.op == "feature-dependencies":
            return feature_dependencies(args)
        updates = _updates(args) if args.op != "describe" else None
        tls, login = client_security(args.command_config)
        return asyncio.run(_run(args, tls, login, updates))
    except (FeatureCommandError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1


def level_text(feature: str, level: int) -> str:
    from kraftwire.metadata.version import BY_LEVEL, FEATURE_NAME

    if feature == FEATURE_NAME:
        found = BY_LEVEL.get(level)
        return found.name if found is not None else f"UNKNOWN {level}"
    return str(level)


def _release(text: str):
    """A release or step as Kafka's tool reads it for an update (production levels; whether the cluster implements
    it is its controller's answer)."""
    from kraftwire.metadata import version as mv

    try:
        return mv.lookup(text)
    except ValueError:
        raise FeatureCommandError(f"Unknown metadata.version {text}. Supported metadata.version are "
                                  + mv.kafka_names(mv.LATEST_PRODUCTION)) from None


def _name_and_level(item: str) -> tuple[str, int]:
    from kraftwire.tools.storage import _name_and_level as parse

    try:
        return parse(item)
    except ValueError as exc:
        raise FeatureCommandError(str(exc)) from None


def _updates(args) -> dict[str, int]:
    from kraftwire.metadata.features import release_defaults
    from kraftwire.metadata.version import FEATURE_NAME

    updates: dict[str, int] = {}
    if args.op == "disable":
        for name in args.feature:
            if name in updates:
                raise FeatureCommandError(f"Feature {name} was specified more than once.")
            updates[name] = 0
        return updates
    if args.release_version is not None and (args.metadata is not None or args.feature):
        raise FeatureCommandError("Can not specify `release-version` with other feature flags.")
    if args.release_version is not None:
        release = _release(args.release_version)
        updates[FEATURE_NAME] = release.level
        updates.update((name, level) for name, level in release_defaults(release).items()
                       if args.op != "upgrade" or level > 0)
    if args.metadata is not None:
        print(" `metadata` flag is deprecated and may be removed in a future release.")
        updates[FEATURE_NAME] = _release(args.metadata).level
    for item in args.feature or ():
        name, value = _name_and_level(item)
        if name in updates:
            raise FeatureCommandError(f"Feature {name} was specified more than once.")
        updates[name] = value
    if not updates:
        raise FeatureCommandError(f"You must specify at least one feature to {args.op}")
    return updates


def version_mapping(args) -> int:
    from kraftwire.metadata import version as mv
    from kraftwire.metadata.features import release_defaults

    text = args.release_version if args.release_version is not None else mv.LATEST_PRODUCTION.name
    try:
        release = mv.lookup(text, unstable=True)  # as Kafka's tool: the unstable levels too
    except ValueError as exc:
        raise FeatureCommandError(str(exc)) from None
    print(f"metadata.version={release.level} ({text})")
    for name, level in release_defaults(release).items():
        print(f"{name}={level}")
    return 0


def feature_dependencies(args) -> int:
    from kraftwire.metadata import features as ft
    from kraftwire.metadata import version as mv

    for item in args.feature:
        name, level = _name_and_level(item)
        if name == mv.FEATURE_NAME:
            found = mv.BY_LEVEL.get(level)
            if found is None or level < mv.KAFKA_MINIMUM.level:
                raise FeatureCommandError(f"Unknown metadata.version {level}")
            print(f"{name}={level} ({found.name}) has no dependencies.")
            continue
        feature = ft.BY_NAME.get(name)
        if feature is None:
            raise FeatureCommandError(f"Unknown feature: {name}")
        found_level = feature.level(level)
        if found_level is None:
            raise FeatureCommandError(f"No feature:{name} with feature level {level}")
        if not found_level.dependencies:
            print(f"{name}={level} has no dependencies.")
            continue
        print(f"{name}={level} requires:")
        for dep, dep_level in found_level.dependencies:
            suffix = f" ({mv.BY_LEVEL[dep_level].name})" if dep == mv.FEATURE_NAME else ""
            print(f"    {dep}={dep_level}{suffix}")
    return 0


async def _run(args, tls, login, updates) -> int:
    from kraftwire.protocol import messages as w

    conn = await connect(args, tls, login)
    try:
        if updates is None:
            # v4: below it a node leaves out the features whose range starts at 0 (KAFKA-17492)
            versions = await conn.request(w.ApiVersionsRequest(client_software_name="kraftwire-features",
                                                               client_software_version="1"), 4, timeout=args.timeout)
            finalized = {f.name: f.max_version_level for f in versions.finalized_features or ()}
            epoch = versions.finalized_features_epoch
            for f in sorted(versions.supported_features or (), key=lambda f: f.name):
                print(f"Feature: {f.name:<40}  SupportedMinVersion: {level_text(f.name, f.min_version):<15}  "
                      f"SupportedMaxVersion: {level_text(f.name, f.max_version):<15}  "
                      f"FinalizedVersionLevel: {level_text(f.name, finalized.get(f.name, 0)):<15}  "
                      f"Epoch: {epoch if epoch >= 0 else '-'}")
            return 0
        kind = UPGRADE if args.op == "upgrade" else UNSAFE_DOWNGRADE if args.unsafe else SAFE_DOWNGRADE
        UF = w.UpdateFeaturesRequest
        body = UF(timeout_ms=int(args.timeout * 1000), validate_only=args.dry_run, feature_updates=[
            UF.FeatureUpdateKey(feature=name, max_version_level=level, allow_downgrade=kind != UPGRADE,
                                upgrade_type=kind) for name, level in sorted(updates.items())])
        answer = await until_decided(conn, body, 1, args.timeout, lambda a: [a.error_code])
    finally:
        await conn.close()
    results = {r.feature: r for r in answer.results or ()}
    failures = 0
    for name in sorted(updates):
        level = updates[name]
        r = results.get(name)
        code = answer.error_code or (r.error_code if r is not None else 0)
        message = answer.error_message if answer.error_code else (r.error_message if r is not None else None)
        op_text = f"disable {name}" if args.op == "disable" else f"{args.op} {name} to {level}"
        if code:
            print(f"{'Can not' if args.dry_run else 'Could not'} {op_text}. {message or name_of(code)}")
            failures += 1
        else:
            done = "disabled." if args.op == "disable" else f"{args.op}d to {level}."
            print(f"{name}{' can be ' if args.dry_run else ' was '}{done}")
    if failures:
        print(f"{failures} out of {len(updates)} operation(s) failed.", file=sys.stderr)
        return 1
    return 0
