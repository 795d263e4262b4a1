"""Folding committed metadata batches into published images, as Kafka's ``MetadataBatchLoader`` does.

``MetadataLoader.load_batch(last_offset, records)`` folds one committed batch (its records as
``ApiMessageAndVersion`` or messages) and returns the image to publish, or ``None`` while a metadata transaction
(KIP-868: BeginTransactionRecord … EndTransactionRecord) is open: a reader never sees half of a transaction. An
AbortTransactionRecord throws the open transaction's records away (the image stays what it was before Begin). A
snapshot replaces everything: ``load_snapshot(end_offset, records)``. Truncation is the caller's: after the log is
truncated below the published offset, it reloads from a snapshot. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from kraftwire.metadata.image import MetadataDelta, MetadataImage, MetadataReplayError
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m


class MetadataLoader:
    def __init__(self, image: MetadataImage | None = None) -> None:
        self.image = image or MetadataImage()  # the last published image
        self._delta: MetadataDelta | None = None  # records folded since, not yet published
        self._in_transaction = False
        self._before_transaction: MetadataDelta | None = None

    @property
    def in_transaction(self) -> bool:
        return self._in_transaction

    def load_batch(self, last_offset: int, records) -> MetadataImage | None:
        """Fold one committed batch ending at ``last_offset``; the new image, or None inside a transaction."""
        if last_offset <= self.image.offset:
            raise MetadataReplayError(f"batch ending at {last_offset} is not after the published image "
                                      f"({self.image.offset})")
        for item in records:
            record = item.message if isinstance(item, ApiMessageAndVersion) else item
            kind = type(record)
            if kind is m.BeginTransactionRecord:
                if self._in_transaction:
                    raise MetadataReplayError("BeginTransactionRecord inside an open metadata transaction")
                self._in_transaction = True
                self._before_transaction = self._delta
                self._delta = MetadataDelta(self._pending_image())
                continue
            if kind in (m.EndTransactionRecord, m.AbortTransactionRecord):
                if not self._in_transaction:
                    raise MetadataReplayError(f"{kind.__name__} without a BeginTransactionRecord")
                self._in_transaction = False
                if kind is m.AbortTransactionRecord:
                    self._delta = self._before_transaction
                self._before_transaction = None
                continue
            if self._delta is None:
                self._delta = MetadataDelta(self.image)
            self._delta.replay(record)
        if self._in_transaction:
            return None
        if self._delta is not None:
            self.image = self._delta.apply(last_offset)
            self._delta = None
        else:
            self.image = replace(self.image, offset=last_offset)
        return self.image

    def load_snapshot(self, end_offset: int, records) -> MetadataImage:
        """Replace everything with a snapshot's records (the snapshot covers offsets below ``end_offset``)."""
        delta = MetadataDelta(MetadataImage())
        for item in records:
            delta.replay(item.message if isinstance(item, ApiMessageAndVersion) else item)
        self.image = delta.apply(end_offset - 1)
        self._delta = self._before_transaction = None
        self._in_transaction = False
        return self.image

    def _pending_image(self) -> MetadataImage:
        """The published image plus what was folded outside a transaction and not yet published."""
        return self._delta.apply(self.image.offset) if self._delta is not None else self.image
