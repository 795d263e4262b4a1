"""Metadata record batches, and ``bootstrap.checkpoint``: the records a cluster starts from.

``bootstrap.checkpoint`` (in the metadata log directory, written by ``storage format``) has snapshot framing from
offset 0 in epoch 0: a SnapshotHeader control batch, the bootstrap records (a FeatureLevelRecord for
``metadata.version`` first, then every other feature whose level is above 0, by name), a SnapshotFooter. The first
active controller of an empty log writes these records into the log. Pure: bytes in, bytes out.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from kraftwire.metadata.features import kraftwire_defaults
from kraftwire.metadata.records import ApiMessageAndVersion, MetadataRecordError
from kraftwire.metadata.snapshot import (MAX_RECORDS_PER_BATCH, decode_snapshot, encode_snapshot_records,
                                         metadata_batches)
from kraftwire.metadata.version import FEATURE_NAME, MetadataVersion, from_level
from kraftwire.protocol import messages as m

__all__ = ["BOOTSTRAP_FILE", "MAX_RECORDS_PER_BATCH", "Bootstrap", "bootstrap_records", "decode_bootstrap_file",
           "encode_bootstrap_file", "metadata_batches", "scram_credentials"]

BOOTSTRAP_FILE = "bootstrap.checkpoint"


class Bootstrap(NamedTuple):
    """What a cluster starts from: its metadata.version and the bootstrap records (FeatureLevelRecords first)."""

    metadata_version: MetadataVersion
    records: tuple[ApiMessageAndVersion, ...]


def bootstrap_records(version: MetadataVersion, features: dict[str, int] | None = None,
                      scram: Iterable[tuple[int, str, object]] = ()) -> Bootstrap:
    """The bootstrap of a new cluster at ``version`` with other ``features`` (levels above 0 are recorded; None: the
    levels kraftwire picks at ``version``, ``features.kraftwire_defaults``) and SCRAM credentials ``(mechanism byte,
    user, credential with salt/stored_key/server_key/iterations)`` (``storage format --add-scram``; they need
    metadata.version 3.5-IV2)."""
    if features is None:
        features = kraftwire_defaults(version)[0]
    items = [ApiMessageAndVersion(m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=version.level), 0)]
    for name in sorted(features):
        if name != FEATURE_NAME and features[name] > 0:
            items.append(ApiMessageAndVersion(m.FeatureLevelRecord(name=name, feature_level=features[name]), 0))
    scram = list(scram)
    if scram and not version.at_least("3.5-IV2"):
        raise ValueError(f"SCRAM credentials need metadata.version 3.5-IV2 or later, not {version}")
    for mechanism, user, cred in scram:
        items.append(ApiMessageAndVersion(m.UserScramCredentialRecord(
            name=user, mechanism=mechanism, salt=cred.salt, stored_key=cred.stored_key, server_key=cred.server_key,
            iterations=cred.iterations), 0))
    return Bootstrap(version, tuple(items))


def scram_credentials(bootstrap: Bootstrap) -> dict[tuple[str, int], tuple[bytes, bytes, bytes, int]]:
    """``{(user, mechanism byte): (salt, stored key, server key, iterations)}`` of the bootstrap's SCRAM records."""
    out = {}
    for item in bootstrap.records:
        r = item.message
        if isinstance(r, m.UserScramCredentialRecord):
            out[(r.name, r.mechanism)] = (bytes(r.salt), bytes(r.stored_key), bytes(r.server_key), r.iterations)
    return out


def encode_bootstrap_file(bootstrap: Bootstrap, timestamp: int) -> bytes:
    return encode_snapshot_records(bootstrap.records, epoch=0, timestamp=timestamp)


def decode_bootstrap_file(data) -> Bootstrap:
    """Read ``bootstrap.checkpoint``; ``MetadataRecordError`` says what is wrong with it."""
    items = decode_snapshot(data, BOOTSTRAP_FILE).records
    levels = [i.message for i in items if isinstance(i.message, m.FeatureLevelRecord) and i.message.name == FEATURE_NAME]
    if not levels:
        raise MetadataRecordError("bootstrap.checkpoint: no metadata.version FeatureLevelRecord")
    try:
        version = from_level(levels[-1].feature_level)
    except ValueError as exc:
        raise MetadataRecordError(f"bootstrap.checkpoint: {exc}") from None
    return Bootstrap(version, tuple(items))
