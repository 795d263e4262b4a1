"""Metadata record batches, and ``bootstrap.checkpoint``: the records a cluster starts from.

Metadata records travel in ordinary (non-control) RecordBatch v2 batches, a null key and the serde value per record,
at most ``MAX_RECORDS_PER_BATCH`` (10,000, as Kafka's controller) per batch.

``bootstrap.checkpoint`` (in the metadata log directory, written by ``storage format``) has snapshot framing from
offset 0 in epoch 0: a SnapshotHeader control batch, the bootstrap records (a FeatureLevelRecord for
``metadata.version`` first, then every other feature whose level is above 0, by name), a SnapshotFooter. The first
active controller of an empty log writes these records into the log. Pure: bytes in, bytes out.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from kraftwire.errors import CorruptRecordError, ProtocolError
from kraftwire.metadata import records as serde
from kraftwire.metadata.records import ApiMessageAndVersion, MetadataRecordError
from kraftwire.metadata.version import FEATURE_NAME, MetadataVersion, from_level
from kraftwire.protocol import messages as m
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.records.control import (SNAPSHOT_FOOTER, SNAPSHOT_HEADER, decode_control_record,
                                       snapshot_footer_batch, snapshot_header_batch)

BOOTSTRAP_FILE = "bootstrap.checkpoint"
MAX_RECORDS_PER_BATCH = 10_000


def metadata_batches(items: Iterable[ApiMessageAndVersion], *, base_offset: int, epoch: int,
                     timestamp: int) -> list[bytes]:
    """``items`` as batches of at most ``MAX_RECORDS_PER_BATCH`` records from ``base_offset``."""
    out: list[bytes] = []
    builder = None
    count = 0
    for item in items:
        if builder is None or count == MAX_RECORDS_PER_BATCH:
            if builder is not None:
                out.append(builder.build())
                base_offset += count
            builder = RecordBatchBuilder(base_offset=base_offset, partition_leader_epoch=epoch)
            count = 0
        builder.append(None, serde.encode(item.message, item.version), timestamp=timestamp)
        count += 1
    if builder is not None:
        out.append(builder.build())
    return out


class Bootstrap(NamedTuple):
    """What a cluster starts from: its metadata.version and the bootstrap records (FeatureLevelRecords first)."""

    metadata_version: MetadataVersion
    records: tuple[ApiMessageAndVersion, ...]


def bootstrap_records(version: MetadataVersion, features: dict[str, int] | None = None) -> Bootstrap:
    """The bootstrap of a new cluster at ``version`` with other ``features`` (levels above 0 are recorded)."""
    items = [ApiMessageAndVersion(m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=version.level), 0)]
    for name in sorted(features or {}):
        if name != FEATURE_NAME and features[name] > 0:
            items.append(ApiMessageAndVersion(m.FeatureLevelRecord(name=name, feature_level=features[name]), 0))
    return Bootstrap(version, tuple(items))


def encode_bootstrap_file(bootstrap: Bootstrap, timestamp: int) -> bytes:
    n = len(bootstrap.records)
    parts = [snapshot_header_batch(timestamp, epoch=0, base_offset=0, timestamp=timestamp)]
    parts += metadata_batches(bootstrap.records, base_offset=1, epoch=0, timestamp=timestamp)
    parts.append(snapshot_footer_batch(epoch=0, base_offset=1 + n, timestamp=timestamp))
    return b"".join(parts)


def decode_bootstrap_file(data) -> Bootstrap:
    """Read ``bootstrap.checkpoint``; ``MetadataRecordError`` says what is wrong with it."""
    items: list[ApiMessageAndVersion] = []
    header = footer = False
    try:
        reader = read_batches(data)
        for batch in reader:
            for rec in batch:
                if batch.is_control:
                    ctype, _ = decode_control_record(rec.key, rec.value)
                    header = header or ctype == SNAPSHOT_HEADER
                    footer = footer or ctype == SNAPSHOT_FOOTER
                    continue
                if not header or footer:
                    raise MetadataRecordError("bootstrap.checkpoint: a record outside the snapshot header and footer")
                items.append(serde.decode(rec.value))
        if reader.incomplete:
            raise MetadataRecordError("bootstrap.checkpoint: the file ends inside a batch")
    except (CorruptRecordError, ProtocolError) as exc:
        raise MetadataRecordError(f"bootstrap.checkpoint: corrupt batch: {exc}") from None
    if not header or not footer:
        raise MetadataRecordError("bootstrap.checkpoint: no snapshot " + ("header" if not header else "footer"))
    levels = [i.message for i in items if isinstance(i.message, m.FeatureLevelRecord) and i.message.name == FEATURE_NAME]
    if not levels:
        raise MetadataRecordError("bootstrap.checkpoint: no metadata.version FeatureLevelRecord")
    try:
        version = from_level(levels[-1].feature_level)
    except ValueError as exc:
        raise MetadataRecordError(f"bootstrap.checkpoint: {exc}") from None
    return Bootstrap(version, tuple(items))
