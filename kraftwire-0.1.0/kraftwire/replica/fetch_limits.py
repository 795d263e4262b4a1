"""How many record bytes each partition of a Fetch answer may carry (Kafka's ``KafkaApis.handleFetchRequest`` and
``ReplicaManager.readFromLog``, KIP-74; our words). Pure: the Fetch handlers read the log and ask here.

* **The answer's budget** is the request's ``max_bytes`` capped by the broker's ``fetch.max.bytes`` (consumer and
  follower fetches alike; a follower asks for its ``replica.fetch.response.max.bytes``). ``min_bytes`` is capped by
  the budget.
* **Partitions are read in request order**, each up to ``min(partition_max_bytes, what is left of the budget)``.
* **Progress before limits.** Until a partition has carried records, a partition's first batch goes out whole even
  when it is larger than that limit (so a consumer moves past a batch larger than its limits). From then on a
  partition carries only whole batches within its limit: nothing when its first batch does not fit (Kafka sends
  an incomplete first batch as nothing too), and nothing once the budget is spent.
* Fetch v3+ only (kraftwire serves v4+): Kafka's hard limit of older versions does not arise.
"""

from __future__ import annotations

__all__ = ["FetchLimits"]


class FetchLimits:
    """``FetchLimits(request_max_bytes, request_min_bytes, fetch_max_bytes)``: the limits of one Fetch answer, spent
    as its partitions are read (``limit``, then ``fits``, then ``took``)."""

    __slots__ = ("remaining", "min_bytes", "min_one")

    def __init__(self, request_max_bytes: int, request_min_bytes: int, fetch_max_bytes: int) -> None:
        #: record bytes the answer may still carry
        self.remaining = max(0, min(request_max_bytes, fetch_max_bytes))
        #: the answer waits for this many bytes (MinBytes, capped by the budget)
        self.min_bytes = min(request_min_bytes, self.remaining)
        #: no partition has carried records yet: the next one's first batch may exceed its limit
        self.min_one = True

    def __repr__(self) -> str:
        return f"FetchLimits(remaining={self.remaining} min_one={self.min_one})"

    def limit(self, partition_max_bytes: int) -> int:
        """The bytes the next partition may carry (its first batch whole may exceed it while ``min_one``)."""
        return max(0, min(partition_max_bytes, self.remaining))

    def may_read(self, limit: int) -> bool:
        """Whether a partition with ``limit`` can carry anything: worth reading the log."""
        return limit > 0 or self.min_one

    def fits(self, size: int, limit: int) -> bool:
        """Whether a read of ``size`` bytes of whole batches (at least the first, whatever its size) may go out."""
        return size <= limit or self.min_one

    def took(self, size: int) -> None:
        """A partition carried ``size`` bytes of records."""
        if size > 0:
            self.min_one = False
        self.remaining = max(0, self.remaining - size)
