"""KAFKA-18723: which part of a fetched response a follower may append.

The rule, in order:

1. The whole response is validated by the codec (framing, magic, CRC-32C, record framing). A corrupt batch rejects
   the *whole* response: nothing is appended, the log end offset does not move, the follower fetches again.
   A trailing partial batch is not corruption; it is simply not used.
2. The first batch must start at the follower's log end offset (otherwise the response is stale: rejected).
3. Batches are accepted in order while offsets stay contiguous and partition leader epochs never go backwards, up to
   but not including the first batch whose partition leader epoch is above the follower's current epoch; that batch
   and every later batch of the response are dropped.

(The other half of the fix — ignore a response whose correlation id does not match, or when the local epoch changed
since the request — is in ``handlers/fetch.py``.)
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.errors import CorruptRecordError
from kraftwire.records import validate_batches

NO_PARTITION_LEADER_EPOCH = -1


@dataclass(frozen=True, slots=True)
class FilterResult:
    records: bytes | memoryview  # the accepted prefix (whole batches), possibly empty
    batch_count: int
    end_offset: int  # the follower's log end offset after appending ``records``
    last_epoch: int  # partition leader epoch of the last accepted batch (unchanged input if none)
    dropped_batches: int
    reason: str | None  # why something was dropped or rejected ("corrupt: crc mismatch", "epoch 7 above 6", ...)
    batches: tuple = ()  # the accepted batches as the codec's full validation reported them (the log trusts these)

    @property
    def rejected(self) -> bool:
        return self.reason is not None and self.reason.startswith(("corrupt", "stale"))


def filter_fetched(
    records: bytes | memoryview,
    *,
    follower_epoch: int,
    log_end_offset: int,
    last_epoch: int,
    epoch_filter: bool = True,
) -> FilterResult:
    if not records:
        return FilterResult(b"", 0, log_end_offset, last_epoch, 0, None)
    try:
        result = validate_batches(records)
    except CorruptRecordError as exc:
        return FilterResult(b"", 0, log_end_offset, last_epoch, 0, f"corrupt: {exc.reason} at {exc.position}")
    batches = result.batches
    if not batches:
        return FilterResult(b"", 0, log_end_offset, last_epoch, 0, None)
    if batches[0].base_offset != log_end_offset:
        return FilterResult(
            b"", 0, log_end_offset, last_epoch, len(batches),
            f"stale: first batch at {batches[0].base_offset}, log end {log_end_offset}",
        )
    end, epoch, accepted_bytes, count, reason = log_end_offset, last_epoch, 0, 0, None
    for batch in batches:
        ple = batch.partition_leader_epoch
        if batch.base_offset != end:
            reason = f"gap: batch at {batch.base_offset}, expected {end}"
            break
        if epoch_filter and ple != NO_PARTITION_LEADER_EPOCH and ple > follower_epoch:
            reason = f"epoch {ple} above {follower_epoch}"
            break
        if epoch_filter and ple != NO_PARTITION_LEADER_EPOCH and ple < epoch:
            reason = f"epoch {ple} below {epoch}"
            break
        end = batch.last_offset + 1
        if ple != NO_PARTITION_LEADER_EPOCH:
            epoch = ple
        accepted_bytes = batch.position + batch.size
        count += 1
    return FilterResult(
        memoryview(records)[:accepted_bytes], count, end, epoch, len(batches) - count, reason, tuple(batches[:count])
    )
