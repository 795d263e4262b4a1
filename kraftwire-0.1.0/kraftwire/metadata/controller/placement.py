"""Replica placement as Kafka's striped placer does it, pure.

``place(brokers, partitions, replication_factor, rng)`` returns one replica list per partition. The brokers that can
hold replicas are the registered ones not in controlled shutdown; fenced ones count, but only as followers, and only
once the rack's unfenced brokers are used up. Racks are sorted by name (brokers without ``broker.rack`` form a rack of
their own, first); each rack keeps its unfenced and fenced brokers in two lists, shuffled, each with a random start.

For every partition the leader is the next unfenced broker, starting at the rack after the previous partition's; the
followers are taken one per rack, round robin from that rack (the leader's rack passed over on the first round),
unfenced before fenced. Every list moves one step per
partition, and once as many partitions have been placed as there are unfenced brokers, the racks and lists are
shuffled again, so that leaders and followers spread over the cluster.

Refusals (``PlacementError``, which the topic manager turns into INVALID_REPLICATION_FACTOR): a replication factor
below 1; more replicas than usable brokers; no unfenced broker.

``rng`` is anything with ``randrange(n)`` (``random.Random`` at the edge, a seeded one in tests and simulations);
random numbers are drawn in Kafka's order, so a source that draws as Java's does gives Kafka's placements.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.errors import KraftwireError


class PlacementError(KraftwireError):
    """The partitions cannot be placed (the message says why, in Kafka's words)."""


@dataclass(frozen=True, slots=True)
class UsableBroker:
    id: int
    rack: str | None
    fenced: bool


def _rack_order(name: str | None) -> tuple[bool, str]:
    return (name is not None, name or "")


def _shuffle(items: list, rng) -> None:
    for i in range(len(items) - 1, 0, -1):
        j = rng.randrange(i + 1)
        items[i], items[j] = items[j], items[i]


class _BrokerList:
    __slots__ = ("brokers", "epoch", "index", "offset")

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.epoch = 0
        self.index = 0
        self.offset = 0

    def next(self, epoch: int) -> int:
        """The next broker of this partition's round, -1 when the list has given all of its brokers."""
        if not self.brokers:
            return -1
        if self.epoch != epoch:  # a new partition (or a new round after a reshuffle)
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker

    def initialize(self, rng) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.randrange(len(self.brokers))

    def shuffle(self, rng) -> None:
        _shuffle(self.brokers, rng)


class _Rack:
    __slots__ = ("unfenced", "fenced")

    def __init__(self) -> None:
        self.unfenced = _BrokerList()
        self.fenced = _BrokerList()

    def next_unfenced(self, epoch: int) -> int:
        return self.unfenced.next(epoch)

    def next(self, epoch: int) -> int:
        broker = self.unfenced.next(epoch)
        return broker if broker >= 0 else self.fenced.next(epoch)

    def initialize(self, rng) -> None:
        self.fenced.initialize(rng)
        self.unfenced.initialize(rng)

    def shuffle(self, rng) -> None:
        self.fenced.shuffle(rng)
        self.unfenced.shuffle(rng)


class _RackList:
    def __init__(self, brokers, rng) -> None:
        self.rng = rng
        self.racks: dict[str | None, _Rack] = {}
        for b in brokers:
            rack = self.racks.setdefault(b.rack, _Rack())
            (rack.fenced if b.fenced else rack.unfenced).brokers.append(b.id)
        self.names = sorted(self.racks, key=_rack_order)
        self._fixed = list(self.names)  # the order racks draw random numbers in (Kafka: its rack map's order)
        self.total = sum(len(r.unfenced.brokers) + len(r.fenced.brokers) for r in self.racks.values())
        self.unfenced = sum(len(r.unfenced.brokers) for r in self.racks.values())
        for name in self._fixed:
            self.racks[name].initialize(rng)
        self.epoch = 0
        self.offset = rng.randrange(len(self.names)) if self.names else 0

    def shuffle(self) -> None:
        _shuffle(self.names, self.rng)
        for name in self._fixed:
            self.racks[name].shuffle(self.rng)

    def place(self, replication_factor: int) -> list[int]:
        if replication_factor < 1:
            raise PlacementError(f"Invalid replication factor {replication_factor}: the replication factor must be "
                                 "positive.")
        if self.unfenced == 0:
            raise PlacementError("All brokers are currently fenced.")
        if replication_factor > self.total:
            raise PlacementError(f"The target replication factor of {replication_factor} cannot be reached because "
                                 f"only {self.total} broker(s) are registered or some brokers have all their log "
                                 "directories cordoned.")  # Kafka 4.4's words (KIP-1066); no cordoning here
        # once a round has handed out as many leaders as there are unfenced brokers, reshuffle (not with a single
        # unfenced broker: it would be the same round again)
        if self.epoch == self.unfenced and self.unfenced > 1:
            self.shuffle()
            self.epoch = 0
        if self.offset >= len(self.names):
            self.offset = 0
        chosen: list[int] = []
        first = self.offset
        while True:
            broker = self.racks[self.names[first]].next_unfenced(self.epoch)
            if broker >= 0:
                chosen.append(broker)
                break
            first = (first + 1) % len(self.names)
        # followers: one per rack in turn from the same starting rack, passing over the leader's rack the first
        # time round so that the first follower is in another rack when there is one
        index, skip = self.offset, first
        for _ in range(1, replication_factor):
            broker = -1
            while broker < 0:
                if index == skip:
                    skip = -1
                else:
                    broker = self.racks[self.names[index]].next(self.epoch)
                index = (index + 1) % len(self.names)
            chosen.append(broker)
        self.epoch += 1
        self.offset += 1
        return chosen


def place(brokers, partitions: int, replication_factor: int, rng) -> list[list[int]]:
    """Replica lists for ``partitions`` new partitions over ``brokers`` (``UsableBroker``s: registered and not in
    controlled shutdown, in broker id order). Raises ``PlacementError``."""
    racks = _RackList(brokers, rng)
    return [racks.place(replication_factor) for _ in range(partitions)]
