"""``meta.properties``: a formatted log directory's identity (Kafka's MetaProperties, version 1 for KRaft).

A Java properties file written like ``Properties.store`` (a ``#`` line, a ``#<date>`` line, then ``key=value``
lines sorted by key, as modern JDKs write them)::

    #
    #Sun Nov 22 07:13:50 UTC 2026
    cluster.id=<cluster id>
    directory.id=<22-char base64url uuid>
    node.id=1
    version=1

Written with tmp + fsync + rename + fsync dir. ``ensure_formatted(dir)`` is what a node calls at start-up: it
raises ``StorageNotFormattedError`` with the reason when the directory was never formatted.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass

from kraftwire.config import parse_properties
from kraftwire.errors import LogError, StorageNotFormattedError
from kraftwire.ids import uuid_from_base64, uuid_to_base64
from kraftwire.log.checkpoint import read_file_or_none, write_atomic

__all__ = [
    "META_PROPERTIES",
    "MetaProperties",
    "MetaPropertiesError",
    "format_meta_properties",
    "read_meta_properties",
    "write_meta_properties",
    "ensure_formatted",
]

META_PROPERTIES = "meta.properties"


class MetaPropertiesError(LogError):
    """meta.properties exists but is malformed or inconsistent."""


@dataclass(frozen=True, slots=True)
class MetaProperties:
    cluster_id: str
    node_id: int
    directory_id: uuid.UUID | None = None
    version: int = 1

    def to_properties(self) -> dict[str, str]:
        props = {"cluster.id": self.cluster_id, "version": str(self.version)}
        if self.version == 0:
            props["broker.id"] = str(self.node_id)
        else:
            props["node.id"] = str(self.node_id)
        if self.directory_id is not None:
            props["directory.id"] = uuid_to_base64(self.directory_id)
        return props

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> "MetaProperties":
        raw_version = props.get("version")
        if raw_version not in ("0", "1"):
            raise MetaPropertiesError(f"meta.properties: unsupported version {raw_version!r}")
        version = int(raw_version)
        cluster_id = props.get("cluster.id")
        if not cluster_id:
            raise MetaPropertiesError("meta.properties: cluster.id is missing")
        id_key = "node.id" if version == 1 else "broker.id"
        raw_id = props.get(id_key)
        if raw_id is None:
            raise MetaPropertiesError(f"meta.properties: {id_key} is missing")
        try:
            node_id = int(raw_id)
        except ValueError:
            raise MetaPropertiesError(f"meta.properties: {id_key} is not an integer: {raw_id!r}") from None
        directory_id = None
        if "directory.id" in props:
            try:
                directory_id = uuid_from_base64(props["directory.id"])
            except ValueError:
                raise MetaPropertiesError(f"meta.properties: bad directory.id {props['directory.id']!r}") from None
        return cls(cluster_id=cluster_id, node_id=node_id, directory_id=directory_id, version=version)


def _escape(text: str, is_key: bool) -> str:
    out = []
    for i, c in enumerate(text):
        if c == " " and (is_key or i == 0):
            out.append("\\ ")
        elif c in "\\=:#!":
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif ord(c) < 0x20 or ord(c) > 0x7E:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def format_meta_properties(meta: MetaProperties, *, now: float | None = None) -> str:
    """The file's text. ``now`` (seconds since the epoch) fixes the date comment, for byte-exact tests."""
    stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(time.time() if now is None else now))
    lines = ["#", f"#{stamp}"]
    for key, value in sorted(meta.to_properties().items()):
        lines.append(f"{_escape(key, True)}={_escape(value, False)}")
    return "\n".join(lines) + "\n"


def write_meta_properties(directory: str, meta: MetaProperties, *, now: float | None = None) -> str:
    path = os.path.join(directory, META_PROPERTIES)
    write_atomic(path, format_meta_properties(meta, now=now))
    return path


def read_meta_properties(directory: str) -> MetaProperties | None:
    """The directory's meta.properties, or None when absent; malformed content raises ``MetaPropertiesError``."""
    text = read_file_or_none(os.path.join(directory, META_PROPERTIES))
    return None if text is None else MetaProperties.from_properties(parse_properties(text))


def ensure_formatted(directory: str, *, node_id: int | None = None, cluster_id: str | None = None) -> MetaProperties:
    """What a node checks before it starts: the dir is formatted (and for this node / cluster, when given)."""
    if not os.path.isdir(directory):
        raise StorageNotFormattedError(
            f"log directory {directory} does not exist; run 'kraftwire storage format -t <cluster id> -c <config>'"
        )
    meta = read_meta_properties(directory)
    if meta is None:
        raise StorageNotFormattedError(
            f"no {META_PROPERTIES} in {directory}: the directory is not formatted; "
            "run 'kraftwire storage format -t <cluster id> -c <config>' first"
        )
    if node_id is not None and meta.node_id != node_id:
        raise MetaPropertiesError(
            f"{directory}/{META_PROPERTIES} has node.id {meta.node_id} but the configuration says node.id {node_id}"
        )
    if cluster_id is not None and meta.cluster_id != cluster_id:
        raise MetaPropertiesError(
            f"{directory}/{META_PROPERTIES} has cluster.id {meta.cluster_id} but {cluster_id} was expected"
        )
    return meta
