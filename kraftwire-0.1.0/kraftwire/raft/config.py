"""The Raft core's configuration: Kafka's ``controller.quorum.*`` settings plus test-only mutation switches.

The core never reads a file or the environment: the server (or the simulator) builds one ``RaftConfig`` and hands it
to ``RaftNode``. Defaults of the keys come from ``kraftwire.config.KEYS`` (Kafka's ``QuorumConfig``); the rest are
``KafkaRaftClient`` constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.config import default
from kraftwire.errors import ConfigError
from kraftwire.ids import NO_ID

#: Kafka's MAX_BATCH_SIZE_BYTES (= MAX_FETCH_SIZE_BYTES): 8 MiB.
MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Mutations:
    """Planted bugs, for mutation tests of the simulation only. Every flag defaults to off.

    Each flag breaks exactly one rule; ``tests/sim/test_mutations.py`` asserts the seeded simulation catches it.
    Never set one outside tests.
    """

    reply_vote_before_persist: bool = False  # vote granted in a Ready whose persist is deferred to the next one
    hw_before_truncate: bool = False  # follower applies the leader HW computed on its pre-truncation log end
    fetch_past_flush: bool = False  # follower sends its next Fetch before its appended data is durable
    restart_as_leader: bool = False  # a node that was the recorded leader restarts as Leader in the same epoch
    count_unflushed_toward_hw: bool = False  # the leader counts its own unflushed log end toward the HW
    epoch_filter_off: bool = False  # fetched batches are appended without the KAFKA-18723 epoch filter
    grant_two_votes: bool = False  # a voter forgets whom it voted for when asked again in the same epoch
    snapshot_off_boundary: bool = False  # snapshots are taken one record inside a batch
    replicate_past_flush: bool = False  # the leader serves fetches beyond its own flushed offset
    concurrent_voter_changes: bool = False  # the leader accepts a voter change while another is uncommitted
    majority_on_old_set: bool = False  # the leader keeps computing its HW on its epoch's first voter set

    def any(self) -> bool:
        return any(getattr(self, name) for name in self.__slots__)


@dataclass(frozen=True, slots=True)
class RaftConfig:
    """Settings of one node. ``node_id`` is ``NO_ID`` (-1) for an anonymous observer; a node whose id is not in
    ``voters`` is an observer with an id. ``voters`` are the static voter ids (``controller.quorum.voters``)."""

    node_id: int
    voters: frozenset[int]
    cluster_id: str = "kraftwire"
    election_timeout_ms: int = default("controller.quorum.election.timeout.ms")
    election_backoff_max_ms: int = default("controller.quorum.election.backoff.max.ms")
    fetch_timeout_ms: int = default("controller.quorum.fetch.timeout.ms")
    request_timeout_ms: int = default("controller.quorum.request.timeout.ms")
    retry_backoff_ms: int = default("controller.quorum.retry.backoff.ms")
    append_linger_ms: int = default("controller.quorum.append.linger.ms")
    fetch_max_wait_ms: int = 500  # MaxWaitMs of a follower Fetch
    #: how long the leader holds a parked fetch whose only news is a new high watermark, waiting for data to carry
    #: it (0: answer at once, as Kafka does)
    high_watermark_linger_ms: int = default("kraftwire.quorum.high.watermark.linger.ms")
    max_batch_size_bytes: int = MAX_BATCH_SIZE_BYTES
    max_fetch_bytes: int = MAX_BATCH_SIZE_BYTES
    fetch_snapshot_max_bytes: int = MAX_BATCH_SIZE_BYTES
    pre_vote: bool = True  # KIP-996
    #: metadata.log.max.record.bytes.between.snapshots (0 disables the byte trigger)
    snapshot_max_bytes_between: int = default("metadata.log.max.record.bytes.between.snapshots")
    #: metadata.log.max.snapshot.interval.ms (0 disables the time trigger)
    snapshot_interval_ms: int = default("metadata.log.max.snapshot.interval.ms")
    #: False (Kafka's way): the log start moves only by retention (``metadata.max.retention.bytes/.ms``), which the
    #: driver applies with ``ReplicatedLog.maybe_clean``. True: the core moves it to each new snapshot as soon as that
    #: snapshot is durable (the simulation does this to exercise snapshot installs).
    advance_log_start_on_snapshot: bool = False
    #: kraft.version 1 (KIP-853: the voter set came from the log's bootstrap snapshot): every snapshot this node
    #: writes carries the KRaftVersionRecord and ``voters_record`` (a ``VotersRecord``) in its header batch, so the
    #: set outlives the bootstrap checkpoint when retention deletes it
    kraft_version: int = 0
    voters_record: object = None
    #: this node's metadata directory id (meta.properties ``directory.id``): with kraft.version 1 a voter is an id
    #: *and* a directory id, so a node whose disk was wiped is not the voter it was
    directory_id: object = None
    #: kraft.version 1, a node with no voter set in its log yet (``--no-initial-controllers``): the set the quorum
    #: answered with (a ``kraftwire.raft.voter_set.VoterSet``), until the log's own records replace it
    voter_set: object = None
    #: this node's endpoints on its controller listener(s), ``(name, host, port)``: a voter whose entry in the voter
    #: set differs sends UpdateRaftVoter (KIP-853); empty: never
    local_endpoints: tuple = ()
    mutations: Mutations = field(default_factory=Mutations)

    @property
    def is_voter(self) -> bool:
        return self.node_id != NO_ID and self.node_id in self.voters

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def validate(self) -> "RaftConfig":
        if not self.voters:
            raise ConfigError("controller.quorum.voters", sorted(self.voters), "at least one voter is required")
        for key, value in (
            ("controller.quorum.election.timeout.ms", self.election_timeout_ms),
            ("controller.quorum.fetch.timeout.ms", self.fetch_timeout_ms),
            ("controller.quorum.request.timeout.ms", self.request_timeout_ms),
        ):
            if value <= 0:
                raise ConfigError(key, value, "must be positive")
        if self.append_linger_ms < 0:
            raise ConfigError("controller.quorum.append.linger.ms", self.append_linger_ms, "must not be negative")
        return self
