"""A metadata snapshot as Kafka writes it: the image as metadata records between a SnapshotHeader and a SnapshotFooter.

``encode_snapshot(image, ...)`` gives the bytes of a ``.checkpoint`` file (the header control batch, the image's
records in batches of at most 10,000, the footer) and ``decode_snapshot(data)`` reads one back as
``SnapshotContents``: the records between header and footer, and the control records the header batch carried
(KRaftVersion and Voters, KIP-853). ``load_snapshot(data, end_offset)`` is the image it holds. Both readers refuse
what Kafka's would: a record outside header and footer, a missing header or footer, a file that ends inside a batch,
a corrupt batch, or a record the serde cannot read (``MetadataRecordError`` with the offset and the reason).
Pure: bytes in, bytes out; the caller reads and writes files.

Metadata records travel in ordinary (non-control) RecordBatch v2 batches with a null key and the serde value per
record (``metadata_batches``), in the log as in snapshots.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from kraftwire.errors import CorruptRecordError, ProtocolError
from kraftwire.metadata import records as serde
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.loader import MetadataLoader
from kraftwire.metadata.records import ApiMessageAndVersion, MetadataRecordError
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.records.control import (SNAPSHOT_FOOTER, SNAPSHOT_HEADER, decode_control_record,
                                       snapshot_footer_batch, snapshot_header_batch)


#: Kafka's controller writes at most this many records per batch
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


class SnapshotContents(NamedTuple):
    records: list[ApiMessageAndVersion]
    #: (control type, message) of every control record, header and footer included, in file order
    control: list[tuple[int, object]]


def encode_snapshot(image: MetadataImage, *, epoch: int, timestamp: int) -> bytes:
    """The snapshot file of ``image``."""
    return encode_snapshot_records(image.records(), epoch=epoch, timestamp=timestamp)


def encode_snapshot_records(items, *, epoch: int, timestamp: int) -> bytes:
    """Snapshot framing around ``items``: the header at offset 0, the records from 1, then the footer."""
    items = list(items)
    parts = [snapshot_header_batch(timestamp, epoch=epoch, base_offset=0, timestamp=timestamp)]
    parts += metadata_batches(items, base_offset=1, epoch=epoch, timestamp=timestamp)
    parts.append(snapshot_footer_batch(epoch=epoch, base_offset=1 + len(items), timestamp=timestamp))
    return b"".join(parts)


def decode_snapshot(data, what: str = "snapshot") -> SnapshotContents:
    """The records of a snapshot file (``what`` names it in errors)."""
    items: list[ApiMessageAndVersion] = []
    control: list[tuple[int, object]] = []
    header = footer = False
    offset = -1
    try:
        reader = read_batches(data)
        for batch in reader:
            for rec in batch:
                offset = rec.offset
                if batch.is_control:
                    ctype, message = decode_control_record(rec.key, rec.value)
                    control.append((ctype, message))
                    header = header or ctype == SNAPSHOT_HEADER
                    footer = footer or ctype == SNAPSHOT_FOOTER
                    continue
                if not header or footer:
                    raise MetadataRecordError(f"{what}: a record outside the snapshot header and footer "
                                              f"(offset {offset})")
                items.append(serde.decode(rec.value))
        if reader.incomplete:
            raise MetadataRecordError(f"{what}: the file ends inside a batch (after offset {offset})")
    except MetadataRecordError as exc:
        if "offset" in str(exc):
            raise
        raise MetadataRecordError(f"{what}: offset {offset}: {exc}") from None
    except (CorruptRecordError, ProtocolError) as exc:
        raise MetadataRecordError(f"{what}: corrupt batch after offset {offset}: {exc}") from None
    if not header or not footer:
        raise MetadataRecordError(f"{what}: no snapshot " + ("header" if not header else "footer"))
    return SnapshotContents(items, control)


def load_snapshot(data, end_offset: int, what: str = "snapshot") -> MetadataImage:
    """The image a snapshot covering offsets below ``end_offset`` holds."""
    return MetadataLoader().load_snapshot(end_offset, decode_snapshot(data, what).records)
