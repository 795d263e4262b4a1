"""KIP-853 voter sets, and which one is in force at each offset of the log.

``VoterSet`` is the quorum's membership: per voter its ``ReplicaKey`` (node id + metadata directory id), its
endpoints ``(listener name, host, port)`` and the kraft.version range it supports. Kafka's rules:

* a replica is a voter when its id is in the set and, if the set knows the voter's directory id, its directory id is
  that one (a static set, ``controller.quorum.voters``, knows none: the id alone decides). A voter whose disk was
  wiped has a new directory id, so it is no longer the voter it was: it must be removed and added again;
* ``add`` needs an id not in the set; ``remove`` the exact key and at least one voter left; ``update`` (new endpoints
  or version range) a key that is a voter.

``VoterHistory`` is Kafka's ``VoterSetHistory``: the set in force at each offset. Its base is the set the node started
from (static ids, the newest snapshot carrying a ``VotersRecord`` — at that snapshot's last offset, ``-1`` for the
bootstrap checkpoint — or the set learned from the quorum by a node still to be added); each ``VotersRecord`` in the
log adds an entry at its own offset, effective as soon as it is appended (KIP-853), dropped again when the log is
truncated below it. ``last()`` is the set the node acts on; ``at(offset)`` the one a snapshot ending there records.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.ids import ZERO_UUID, ReplicaKey
from kraftwire.protocol import messages as m

Endpoint = tuple[str, str, int]  # (listener name, host, port)


@dataclass(frozen=True, slots=True)
class VoterNode:
    key: ReplicaKey
    endpoints: tuple[Endpoint, ...] = ()
    kraft_version_min: int = 0
    kraft_version_max: int = 1

    @property
    def id(self) -> int:
        return self.key.id

    def is_voter(self, key: ReplicaKey) -> bool:
        """Kafka's ``VoterNode.isVoter``: the id, and the directory id when the set knows one."""
        if key.id != self.key.id:
            return False
        return self.key.directory_id is None or self.key.directory_id == key.directory_id

    def endpoint(self, listener: str | None = None) -> tuple[str, int] | None:
        """(host, port) on ``listener``, else on the first listener named."""
        for name, host, port in self.endpoints:
            if listener is None or name == listener:
                return host, port
        return (self.endpoints[0][1], self.endpoints[0][2]) if self.endpoints else None


@dataclass(frozen=True, slots=True)
class VoterSet:
    nodes: tuple[VoterNode, ...]  # sorted by id, ids unique

    @classmethod
    def of(cls, nodes) -> "VoterSet":
        nodes = list(nodes)
        by_id = {n.id: n for n in nodes}
        if len(by_id) != len(nodes):
            raise ValueError("a voter set names each node id once")
        return cls(tuple(by_id[i] for i in sorted(by_id)))

    @classmethod
    def from_ids(cls, ids) -> "VoterSet":
        """A static set (``controller.quorum.voters``): ids only, no directory ids or endpoints."""
        return cls.of(VoterNode(ReplicaKey(int(i))) for i in ids)

    @classmethod
    def from_record(cls, record) -> "VoterSet":
        nodes = []
        for v in record.voters:
            directory = None if v.voter_directory_id in (None, ZERO_UUID) else v.voter_directory_id
            feature = v.kraft_version_feature
            nodes.append(VoterNode(ReplicaKey(v.voter_id, directory),
                                   tuple((e.name, e.host, e.port) for e in v.endpoints),
                                   feature.min_supported_version if feature is not None else 0,
                                   feature.max_supported_version if feature is not None else 0))
        return cls.of(nodes)

    def to_record(self) -> m.VotersRecord:
        R = m.VotersRecord
        return R(version=0, voters=[
            R.Voter(voter_id=n.id, voter_directory_id=n.key.directory_id or ZERO_UUID,
                    endpoints=[R.Endpoint(name=name, host=host, port=port) for name, host, port in n.endpoints],
                    kraft_version_feature=R.KRaftVersionFeature(min_supported_version=n.kraft_version_min,
                                                                max_supported_version=n.kraft_version_max))
            for n in self.nodes])

    # --- reading ------------------------------------------------------------------------------------------------
    @property
    def ids(self) -> frozenset[int]:
        return frozenset(n.id for n in self.nodes)

    @property
    def keys(self) -> tuple[ReplicaKey, ...]:
        return tuple(n.key for n in self.nodes)

    def node(self, node_id: int) -> VoterNode | None:
        for n in self.nodes:
            if n.id == node_id:
                return n
        return None

    def is_voter(self, key: ReplicaKey) -> bool:
        node = self.node(key.id)
        return node is not None and node.is_voter(key)

    @property
    def majority(self) -> int:
        return len(self.nodes) // 2 + 1

    # --- changing (each returns a new set, or None when Kafka's rule refuses) -------------------------------------
    def add(self, node: VoterNode) -> "VoterSet | None":
        if self.node(node.id) is not None:
            return None
        return VoterSet.of(self.nodes + (node,))

    def remove(self, key: ReplicaKey) -> "VoterSet | None":
        node = self.node(key.id)
        if node is None or node.key != key or len(self.nodes) <= 1:
            return None
        return VoterSet(tuple(n for n in self.nodes if n.id != key.id))

    def update(self, node: VoterNode) -> "VoterSet | None":
        old = self.node(node.id)
        if old is None or not old.is_voter(node.key):
            return None
        return VoterSet(tuple(node if n.id == node.id else n for n in self.nodes))

    def overlapping_majority(self, other: "VoterSet") -> bool:
        """At most one voter added and at most one removed between the two sets (Kafka's hasOverlappingMajority)."""
        a, b = set(self.keys), set(other.keys)
        return len(a - b) <= 1 and len(b - a) <= 1

    def describe(self) -> str:
        return "{" + ", ".join(f"{n.id}" + (f":{n.key.directory_id}" if n.key.directory_id else "")
                               for n in self.nodes) + "}"


#: the base entry's offset when the set comes from before the log (static ids, the bootstrap checkpoint)
BEFORE_LOG = -1


@dataclass(slots=True)
class VoterHistory:
    """The voter set in force at each offset: ``base`` (at ``base_offset``), then one entry per VotersRecord."""

    base: VoterSet
    base_offset: int = BEFORE_LOG
    entries: list[tuple[int, VoterSet]] = field(default_factory=list)  # (offset, set), offsets increasing

    def last(self) -> VoterSet:
        return self.entries[-1][1] if self.entries else self.base

    def last_offset(self) -> int:
        """The offset of the record that made ``last()`` (``base_offset`` for the base)."""
        return self.entries[-1][0] if self.entries else self.base_offset

    def at(self, offset: int) -> VoterSet:
        """The set in force after the record at ``offset`` (the newest entry at or below it)."""
        found = self.base
        for at, value in self.entries:
            if at > offset:
                break
            found = value
        return found

    def add(self, offset: int, voters: VoterSet) -> None:
        if offset <= self.last_offset():
            raise ValueError(f"voter set at offset {offset} is not after the last one at {self.last_offset()}")
        self.entries.append((offset, voters))

    def truncate(self, end_offset: int) -> bool:
        """The log was truncated to ``end_offset``: entries at or past it are gone. True if the last set changed."""
        keep = [e for e in self.entries if e[0] < end_offset]
        changed = len(keep) != len(self.entries)
        self.entries = keep
        return changed

    def prune(self, start_offset: int) -> None:
        """The log starts at ``start_offset``: fold entries wholly before it into the base (keeping the newest)."""
        while len(self.entries) > 1 and self.entries[1][0] < start_offset:
            self.entries.pop(0)
