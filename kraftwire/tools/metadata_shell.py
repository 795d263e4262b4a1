"""``kraftwire metadata-shell --snapshot PATH [COMMAND ...]``: browse a metadata image as ``kafka-metadata-shell.sh``.

``PATH`` is a snapshot (``.checkpoint``), a log segment (``.log``), or a metadata partition directory
(``__cluster_metadata-0``: its latest snapshot, then the segments after it) — or the log directory holding one. The
records are folded into a ``MetadataImage`` exactly as a node folds them; a record that cannot be read or applied
stops the shell with its offset and the reason (exit status 1), as Kafka's loader stops.

The image is a tree of Kafka's paths::

    /local/version, /local/commitId
    /image/provenance
    /image/features/metadataVersion, /image/features/finalized_<feature>
    /image/cluster/brokers/<id>, /image/cluster/controllers/<id>
    /image/topics/byName/<topic>/{name,id,<partition>}, /image/topics/byId/<topic id>/...
    /image/configs/<TYPE>:<resource name>/<key>
    /image/clientQuotas/<entity>/<key>
    /image/producerIds/nextProducerId
    /image/acls/<acl id>, /image/scram/<mechanism>/<user>, /image/delegationToken/<token id>

Commands (one-shot after the path, or typed at the prompt): ``ls [PATH...]``, ``cat PATH...``, ``cd [PATH]``,
``pwd``, ``tree [PATH]``, ``find [PATH]``, ``history``, ``help``, ``man COMMAND``, ``exit``. Paths may be relative to
the working directory and use ``..``; ids are printed as Kafka prints them (base64 for topic, directory and
incarnation ids).
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
from dataclasses import dataclass
from typing import Callable, Iterator, Union

from kraftwire import __version__
from kraftwire.errors import CorruptRecordError, KraftwireError, ProtocolError
from kraftwire.ids import uuid_to_base64
from kraftwire.metadata import records as serde
from kraftwire.metadata.image import MetadataImage, ProducerIds
from kraftwire.metadata.loader import MetadataLoader
from kraftwire.metadata.records import MetadataRecordError
from kraftwire.metadata.snapshot import decode_snapshot
from kraftwire.metadata.version import FEATURE_NAME
from kraftwire.records import read_batches
from kraftwire.snapshot.paths import SnapshotFileKind, parse_snapshot_path

__all__ = ["add_arguments", "run", "load", "Shell", "Provenance"]

PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
RESOURCE_TYPES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
PROMPT = "[ {} ] >> "


class ShellError(Exception):
    """A command that cannot be carried out (the message is printed, the shell goes on)."""


# ---------------------------------------------------------------------------------------------------- loading
def _segments(directory: str) -> tuple[str | None, list[str], int]:
    """(latest snapshot or None, the segments to read after it, the snapshot's end offset) of a partition dir."""
    snaps, logs = [], []
    for name in os.listdir(directory):
        full = os.path.join(directory, name)
        parsed = parse_snapshot_path(full)
        if parsed is not None and parsed.kind is SnapshotFileKind.FROZEN:
            snaps.append((parsed.snapshot_id.end_offset, parsed.snapshot_id.epoch, full))
        elif name.endswith(".log") and name[:-4].isdigit():
            logs.append((int(name[:-4]), full))
    snaps.sort()
    logs.sort()
    if snaps:
        end = snaps[-1][0]
        # the first segment that may hold offsets at or past the snapshot's end: the last one starting at or before it
        start = max((i for i, (base, _) in enumerate(logs) if base <= end), default=0)
        return snaps[-1][2], [p for _, p in logs[start:]], end
    return None, [p for _, p in logs], 0


def _partition_dir(path: str) -> str:
    if any(n.endswith((".log", ".checkpoint")) for n in os.listdir(path)):
        return path
    for name in sorted(os.listdir(path)):
        if name.endswith("-0") and os.path.isdir(os.path.join(path, name)):
            return os.path.join(path, name)
    raise ShellError(f"{path}: no snapshot or log segment here, and no metadata partition directory (name-0) in it")


@dataclass(frozen=True)
class Provenance:
    """The last metadata (non-control) batch folded, as Kafka's shell reader passes each one to its loader: its last
    offset, its leader epoch and its max timestamp."""
    offset: int = -1
    epoch: int = -1
    time_ms: int = -1

    def text(self) -> str:
        """Kafka's ``offset N, epoch E, time T`` (T a UTC ZonedDateTime as Java prints it)."""
        return f"offset {self.offset}, epoch {self.epoch}, time {java_utc_time(self.time_ms)}"


def java_utc_time(ms: int) -> str:
    """``ms`` at UTC as Java's ``DateTimeFormatter.ISO_ZONED_DATE_TIME`` writes it (Kafka's ProvenanceNode): seconds
    always, the fraction with its trailing zeros dropped (none when zero), ``Z[UTC]`` after."""
    when = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    fraction = f"{ms % 1000:03d}".rstrip("0")
    return when.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z[UTC]"


def _last_metadata_batch(data: bytes, start: int, before: Provenance) -> Provenance:
    last = before
    for batch in read_batches(data):
        if not batch.is_control and batch.last_offset >= start:
            last = Provenance(batch.last_offset, batch.partition_leader_epoch, batch.max_timestamp)
    return last


def _fold_log(loader: MetadataLoader, data: bytes, path: str, start: int) -> None:
    offset = start
    try:
        reader = read_batches(data)
        for batch in reader:
            if batch.last_offset < start or batch.is_control:
                continue
            offset = batch.base_offset
            items = []
            for rec in batch:
                offset = rec.offset
                items.append(serde.decode(rec.value))
            loader.load_batch(batch.last_offset, items)
        if reader.incomplete:
            raise MetadataRecordError(f"the file ends inside a batch after offset {offset}")
    except (MetadataRecordError, CorruptRecordError, ProtocolError, KraftwireError) as exc:
        raise ShellError(f"{path}: offset {offset}: {exc}") from None


def load(path: str) -> tuple[MetadataImage, Provenance]:
    """The image a snapshot, segment or metadata directory holds, and the provenance of its last metadata batch."""
    loader = MetadataLoader()
    if os.path.isdir(path):
        snapshot, segments, start = _segments(_partition_dir(path))
    elif path.endswith(".log"):
        snapshot, segments, start = None, [path], 0
    else:
        snapshot, segments, start = path, [], 0
    provenance = Provenance()
    if snapshot is not None:
        with open(snapshot, "rb") as f:
            data = f.read()
        parsed = parse_snapshot_path(snapshot)
        end = parsed.snapshot_id.end_offset if parsed is not None else 0
        try:
            loader.load_snapshot(end, decode_snapshot(data, snapshot).records)
        except KraftwireError as exc:
            raise ShellError(str(exc)) from None
        provenance = _last_metadata_batch(data, 0, provenance)
        start = end
    for seg in segments:
        with open(seg, "rb") as f:
            data = f.read()
        _fold_log(loader, data, seg, start)
        provenance = _last_metadata_batch(data, start, provenance)
    if loader.in_transaction:
        print("warning: the log ends inside a metadata transaction; its records are not shown", file=sys.stderr)
    return loader.image, provenance


# ---------------------------------------------------------------------------------------------------- the tree
Node = Union[str, Callable[[], dict]]  # a leaf's text, or a directory whose children are made when it is opened


def _b64(u) -> str:
    return uuid_to_base64(u)


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _list(items, fmt=str) -> str:
    return "[" + ", ".join(fmt(i) for i in items) + "]"


def _features_text(features) -> str:
    """Supported features as Kafka prints its map of them: by name, ``min-max`` or one level when they are equal."""
    return ", ".join(f"{f.name}: {f.min_version}" if f.min_version == f.max_version
                     else f"{f.name}: {f.min_version}-{f.max_version}" for f in sorted(features, key=lambda f: f.name))


def _broker_text(b) -> str:
    listeners = ", ".join(f"Endpoint(listenerName='{e.name}', securityProtocol={PROTOCOLS.get(e.security_protocol, e.security_protocol)}, "
                          f"host='{e.host}', port={e.port})" for e in b.listeners)
    features = _features_text(b.features)
    rack = f"Optional[{b.rack}]" if b.rack is not None else "Optional.empty"
    return (f"BrokerRegistration(id={b.id}, epoch={b.epoch}, incarnationId={_b64(b.incarnation_id)}, "
            f"listeners=[{listeners}], supportedFeatures={{{features}}}, rack={rack}, fenced={_bool(b.fenced)}, "
            f"inControlledShutdown={_bool(b.in_controlled_shutdown)}, "
            f"isMigratingZkBroker={_bool(b.is_migrating_zk_broker)}, directories={_list(b.log_dirs, _b64)}, "
            # kraftwire's image keeps no cordoned directories (KIP-1066): Kafka prints null for a record without them
            "cordonedDirectories=null)")


def _controller_text(c) -> str:
    listeners = ", ".join(f"Endpoint(listenerName='{e.name}', securityProtocol={PROTOCOLS.get(e.security_protocol, e.security_protocol)}, "
                          f"host='{e.host}', port={e.port})" for e in c.listeners)
    features = _features_text(c.features)
    return (f"ControllerRegistration(id={c.id}, incarnationId={_b64(c.incarnation_id)}, "
            f"zkMigrationReady={_bool(c.zk_migration_ready)}, listeners=[{listeners}], "
            f"supportedFeatures={{{features}}})")


def _partition_text(p) -> str:
    return (f"PartitionRegistration(replicas={_list(p.replicas)}, directories={_list(p.directories, _b64)}, "
            f"isr={_list(p.isr)}, removingReplicas={_list(p.removing_replicas)}, "
            f"addingReplicas={_list(p.adding_replicas)}, elr={_list(p.elr)}, "
            f"lastKnownElr={_list(p.last_known_elr)}, leader={p.leader}, "
            f"leaderRecoveryState={RECOVERY_STATES.get(p.leader_recovery_state, p.leader_recovery_state)}, "
            f"leaderEpoch={p.leader_epoch}, partitionEpoch={p.partition_epoch})")


def _topic_node(t) -> Callable[[], dict]:
    def children() -> dict:
        out: dict = {"name": t.name, "id": _b64(t.id)}
        for pid in sorted(t.partitions):
            out[str(pid)] = _partition_text(t.partitions[pid])
        return out
    return children


def _quota_entity(entity) -> str:
    parts = []
    for kind, name in entity:
        label = {"client-id": "clientId", "ip": "ip", "user": "user"}.get(kind, kind)
        escaped = (name or "").replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        parts.append(f"{label}({escaped})")
    return "_".join(parts)


def image_tree(image: MetadataImage, provenance: Provenance) -> dict:
    """Kafka's shell tree of ``image`` (its ``MetadataImageNode`` and ``LocalShellNode``); the shell lists every
    directory's children by name, as Kafka does."""
    mv = image.metadata_version

    def features() -> dict:
        # Kafka's FeaturesImage holds the metadata version as an Optional and prints it so
        out: dict = {"metadataVersion": f"Optional[{mv}]" if mv is not None else "Optional.empty"}
        for name in sorted(image.features):
            if name != FEATURE_NAME:  # metadata.version has its own node, as in Kafka's FeaturesImage
                out[f"finalized_{name}"] = str(image.features[name])
        return out

    def cluster() -> dict:
        return {
            "brokers": lambda: {str(i): _broker_text(image.brokers[i]) for i in sorted(image.brokers)},
            "controllers": lambda: {str(i): _controller_text(image.controllers[i]) for i in sorted(image.controllers)},
        }

    def topics() -> dict:
        by_name = {t.name: t for t in image.topics.values()}
        return {
            "byName": lambda: {n: _topic_node(by_name[n]) for n in sorted(by_name)},
            "byId": lambda: {_b64(t.id): _topic_node(t) for t in sorted(image.topics.values(), key=lambda t: t.name)},
        }

    def configs() -> dict:
        out: dict = {}
        for (rtype, rname), entries in sorted(image.configs.items()):
            values = dict(entries)
            kind = RESOURCE_TYPES.get(rtype, rtype)
            # a cluster default (an empty resource name) is named by its type alone, as Kafka names it
            out[f"{kind}:{rname}" if rname else str(kind)] = (lambda v=values: {k: v[k] for k in sorted(v)})
        return out

    def quotas() -> dict:
        return {_quota_entity(e): (lambda q=dict(v): {k: str(q[k]) for k in sorted(q)})
                for e, v in sorted(image.client_quotas.items(), key=lambda kv: str(kv[0]))}

    def acls() -> dict:
        return {"byId": acls_by_id}

    def acls_by_id() -> dict:
        return {_b64(i): (f"StandardAcl(resourceType={a.resource_type}, resourceName={a.resource_name}, "
                          f"patternType={a.pattern_type}, principal={a.principal}, host={a.host}, "
                          f"operation={a.operation}, permissionType={a.permission_type})")
                for i, a in sorted(image.acls.items(), key=lambda kv: str(kv[0]))}

    def scram() -> dict:
        by_mech: dict = {name: {} for name in SCRAM_MECHANISMS.values()}  # Kafka lists every mechanism
        for (mech, user), cred in sorted(image.scram.items()):
            by_mech.setdefault(SCRAM_MECHANISMS.get(mech, str(mech)), {})[user] = (
                f"ScramCredentialData(iterations={cred.iterations})")
        return {m: (lambda d=d: d) for m, d in by_mech.items()}

    def image_node() -> dict:
        return {
            "provenance": provenance.text(),
            "features": features,
            "cluster": cluster,
            "topics": topics,
            "configs": configs,
            "clientQuotas": quotas,
            # before any ProducerIdsRecord Kafka's image says -1 (its empty ProducerIdsImage)
            "producerIds": lambda: {"nextProducerId": str(image.producer_ids.next_producer_id
                                                          if image.producer_ids != ProducerIds() else -1)},
            "acls": acls,
            "scram": scram,
            "delegationToken": lambda: {tid: f"DelegationTokenData(owner={t.owner})"
                                        for tid, t in sorted(image.delegation_tokens.items())},
        }

    return {"local": lambda: {"version": __version__, "commitId": "unknown"}, "image": image_node}


# ---------------------------------------------------------------------------------------------------- the shell
HELP = {
    "cat": "cat PATH...: print the contents of leaf nodes",
    "cd": "cd [PATH]: change the working directory (/ without a path)",
    "exit": "exit: leave the shell",
    "find": "find [PATH]: print every path under PATH",
    "help": "help: list the commands",
    "history": "history: the commands typed so far",
    "ls": "ls [PATH...]: list the children of directories (a leaf lists itself)",
    "man": "man COMMAND: how a command is used",
    "pwd": "pwd: print the working directory",
    "tree": "tree [PATH]: print the tree under PATH with leaf contents",
}


def _children(node: Callable[[], dict]) -> dict:
    """A directory's children by name (Kafka's shell keeps them in a sorted map)."""
    return dict(sorted(node().items()))


class Shell:
    def __init__(self, root: dict, out=None) -> None:
        self.root = root
        self.cwd: list[str] = []
        self.history: list[str] = []
        self.out = out or sys.stdout
        #: whether a command failed (the exit status of a one-shot command)
        self.failed = False

    # ------------------------------------------------------------------------------------------------ paths
    def _parts(self, path: str | None) -> list[str]:
        parts = [] if path is not None and path.startswith("/") else list(self.cwd)
        for piece in (path or "").split("/"):
            if piece in ("", "."):
                continue
            if piece == "..":
                if parts:
                    parts.pop()
            else:
                parts.append(piece)
        return parts

    def _resolve(self, parts: list[str]) -> Node:
        node: Node = lambda: self.root  # noqa: E731 - the root is a directory like any other
        for i, name in enumerate(parts):
            if isinstance(node, str):
                raise ShellError(f"{'/' + '/'.join(parts[:i])}: not a directory")
            children = _children(node)
            if name not in children:
                raise ShellError(f"{'/' + '/'.join(parts[:i + 1])}: no such file or directory")
            node = children[name]
        return node

    @staticmethod
    def _show(parts: list[str]) -> str:
        return "/" + "/".join(parts)

    def _walk(self, parts: list[str], node: Node) -> Iterator[tuple[list[str], Node]]:
        yield parts, node
        if not isinstance(node, str):
            for name, child in _children(node).items():
                yield from self._walk(parts + [name], child)

    # ------------------------------------------------------------------------------------------------ commands
    def execute(self, line: str) -> bool:
        """Run one command line; False when the shell should exit."""
        try:
            words = shlex.split(line)
        except ValueError as exc:
            self._error(str(exc))
            return True
        if not words:
            return True
        self.history.append(line)
        command, args = words[0], words[1:]
        handler = getattr(self, f"_cmd_{command}", None)
        if handler is None:
            self._error(f"unknown command {command!r} (help lists the commands)")
            return True
        try:
            return handler(args) is not False
        except ShellError as exc:
            self._error(str(exc))
            return True

    def _print(self, text: str) -> None:
        print(text, file=self.out)

    def _error(self, text: str) -> None:
        self.failed = True
        print(f"error: {text}", file=self.out)

    def _cmd_ls(self, args: list[str]) -> None:
        targets = args or [None]
        for i, path in enumerate(targets):
            parts = self._parts(path)
            node = self._resolve(parts)
            if isinstance(node, str):
                self._print(parts[-1] if parts else "/")
                continue
            if len(targets) > 1:  # Kafka heads each listing with the directory's own name
                self._print(("\n" if i else "") + f"{parts[-1] if parts else '/'}:")
            for name in _children(node):
                self._print(name)

    def _cmd_cat(self, args: list[str]) -> None:
        if not args:
            raise ShellError("cat needs a path")
        for path in args:
            parts = self._parts(path)
            node = self._resolve(parts)
            if not isinstance(node, str):
                raise ShellError(f"{self._show(parts)}: is a directory")
            self._print(node)

    def _cmd_cd(self, args: list[str]) -> None:
        if len(args) > 1:
            raise ShellError("cd takes at most one path")
        parts = self._parts(args[0] if args else "/")
        if isinstance(self._resolve(parts), str):
            raise ShellError(f"{self._show(parts)}: not a directory")
        self.cwd = parts

    def _cmd_pwd(self, args: list[str]) -> None:
        self._print(self._show(self.cwd))

    def _cmd_tree(self, args: list[str]) -> None:
        """As Kafka's shell: a leaf prints its contents; a directory its children, each ``name:`` and below it
        (two more spaces in) a leaf's contents or a directory's children."""
        parts = self._parts(args[0] if args else None)
        top = self._resolve(parts)
        if isinstance(top, str):
            self._print(top)
            return
        for sub, node in self._walk(parts, top):
            depth = len(sub) - len(parts)
            if depth == 0:
                continue
            self._print(f"{'  ' * (depth - 1)}{sub[-1]}:")
            if isinstance(node, str):
                self._print(f"{'  ' * depth}{node}")

    def _cmd_find(self, args: list[str]) -> None:
        parts = self._parts(args[0] if args else None)
        for sub, _node in self._walk(parts, self._resolve(parts)):
            self._print(self._show(sub))

    def _cmd_history(self, args: list[str]) -> None:
        for i, line in enumerate(self.history, 1):
            self._print(f"{i:5d}  {line}")

    def _cmd_help(self, args: list[str]) -> None:
        self._print("Commands: " + " ".join(sorted(HELP)) + " (man COMMAND says more)")

    def _cmd_man(self, args: list[str]) -> None:
        if len(args) != 1 or args[0] not in HELP:
            raise ShellError("man takes one command name: " + " ".join(sorted(HELP)))
        self._print(HELP[args[0]])

    def _cmd_exit(self, args: list[str]) -> bool:
        return False

    def interact(self, stdin=None) -> None:
        stdin = stdin or sys.stdin
        interactive = stdin.isatty()
        while True:
            if interactive:
                self.out.write(PROMPT.format(self._show(self.cwd)))
                self.out.flush()
            line = stdin.readline()
            if not line:
                break
            if not self.execute(line.strip()):
                break


# ---------------------------------------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-s", "--snapshot", required=True, metavar="PATH",
                        help="a snapshot (.checkpoint), a segment (.log) or a metadata log directory")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="run this one command and exit (else read commands from standard input)")


def run(args: argparse.Namespace) -> int:
    if not os.path.exists(args.snapshot):
        print(f"error: {args.snapshot}: no such file or directory", file=sys.stderr)
        return 1
    try:
        image, provenance = load(args.snapshot)
    except ShellError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {args.snapshot}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    shell = Shell(image_tree(image, provenance))
    if args.command:
        shell.execute(shlex.join(args.command))
        return 1 if shell.failed else 0
    shell.interact()
    return 0
