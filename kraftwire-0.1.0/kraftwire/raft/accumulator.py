"""Leader-side batching for ``schedule_append`` (Kafka's BatchAccumulator, simplified to what the core needs).

* An append is atomic: all its records land in one batch, at consecutive offsets.
* Records linger up to ``append.linger.ms`` from the first record of the open batch; ``next_deadline_ms`` reports the
  linger expiry so the driver wakes the core even if nothing else is appended.
* A batch holds at most ``max_batch_size`` bytes (8 MiB); an append that does not fit in the open batch closes it and
  starts a new one; an append that alone exceeds the limit fails with ``RecordTooLargeError`` and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.errors import RecordTooLargeError
from kraftwire.records import RECORD_BATCH_OVERHEAD, BatchInfo, RecordBatchBuilder

#: DefaultRecord.MAX_RECORD_OVERHEAD: the most bytes a record adds besides its key and value.
MAX_RECORD_OVERHEAD = 21


def estimated_size(values: list[bytes]) -> int:
    return sum(map(len, values)) + MAX_RECORD_OVERHEAD * len(values)


@dataclass(slots=True)
class _OpenBatch:
    base_offset: int
    created_ms: int
    values: list[bytes] = field(default_factory=list)
    size: int = RECORD_BATCH_OVERHEAD


class BatchAccumulator:
    def __init__(self, *, epoch: int, next_offset: int, linger_ms: int, max_batch_size: int) -> None:
        self.epoch = epoch
        self.next_offset = next_offset
        self.linger_ms = linger_ms
        self.max_batch_size = max_batch_size
        self._open: _OpenBatch | None = None
        self._completed: list[_OpenBatch] = []

    def append(self, values: list[bytes], now_ms: int) -> int:
        """Queue ``values`` as one atomic group; returns the offset the last one will get."""
        if not values:
            raise ValueError("an append needs at least one record")
        size = estimated_size(values)
        if size + RECORD_BATCH_OVERHEAD > self.max_batch_size:
            raise RecordTooLargeError(size + RECORD_BATCH_OVERHEAD, self.max_batch_size)
        if self._open is not None and self._open.size + size > self.max_batch_size:
            self._completed.append(self._open)
            self._open = None
        if self._open is None:
            self._open = _OpenBatch(self.next_offset, now_ms)
        self._open.values.extend(values)
        self._open.size += size
        self.next_offset += len(values)
        return self.next_offset - 1

    def flush_open(self) -> None:
        """Close the open batch now (before an ``append_batch`` must follow it in offset order)."""
        if self._open is not None:
            self._completed.append(self._open)
            self._open = None

    def skip(self, count: int) -> None:
        """Offsets taken by something appended outside the accumulator (a client batch, a control batch)."""
        if self._open is not None or self._completed:
            raise AssertionError("close the open batch first")
        self.next_offset += count

    def next_deadline_ms(self) -> int | None:
        if self._completed:
            return 0
        if self._open is not None:
            return self._open.created_ms + self.linger_ms
        return None

    def drain(self, now_ms: int) -> list[bytes]:
        """Whole batches ready to append (completed ones, and the open one once it lingered long enough)."""
        return [data for data, _ in self.drain_built(now_ms)]

    def drain_built(self, now_ms: int) -> list[tuple[bytes, BatchInfo]]:
        """``drain``, each batch with what the log would learn by validating it: this builder wrote it at its final
        offsets and epoch, so the log stores it as it is."""
        if self._open is not None and now_ms >= self._open.created_ms + self.linger_ms:
            self._completed.append(self._open)
            self._open = None
        out = []
        epoch = self.epoch
        for batch in self._completed:
            builder = RecordBatchBuilder(base_offset=batch.base_offset, partition_leader_epoch=epoch)
            builder.append_many(batch.values, timestamp=now_ms)
            data = builder.build()
            last = batch.base_offset + len(batch.values) - 1
            out.append((data, BatchInfo(batch.base_offset, last, epoch, 0, len(data))))
        self._completed.clear()
        return out

    def pending_records(self) -> int:
        n = sum(len(b.values) for b in self._completed)
        return n + (len(self._open.values) if self._open else 0)
