"""Metadata records as a node that fetched them sees them: through the serde, then replayed into an image."""

from __future__ import annotations

from kraftwire.metadata import records as serde
from kraftwire.metadata.image import MetadataDelta, MetadataImage


def wire(records):
    """``ApiMessageAndVersion``s encoded and decoded by the serde."""
    return [serde.decode(serde.encode(r.message, r.version)) for r in records]


def replay(img: MetadataImage, records, last_offset: int | None = None) -> MetadataImage:
    """``img`` after ``records`` (through the serde); the new image ends at ``last_offset`` (default: one offset per
    record after ``img``). No records: ``img`` itself."""
    if not records:
        return img
    delta = MetadataDelta(img)
    for r in wire(records):
        delta.replay(r.message)
    return delta.apply(img.offset + len(records) if last_offset is None else last_offset)
