"""The core's own typed Raft RPC messages, for the single metadata partition.

Each carries exactly the semantic fields of Kafka's RPC (kraft-facts.md §4) with Kafka's integer error codes; the
network edge translates them to and from the wire (topic/partition wrappers, versions, endpoints). Every message names
its source and destination node ids and a correlation id: the core assigns correlation ids to the requests it sends and
copies the request's id into its response, so a response can be matched to its request and stale ones ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.ids import UUID, OffsetAndEpoch, ReplicaKey, SnapshotId

from kraftwire import error_codes as _codes
from kraftwire.error_codes import (  # Kafka's wire error codes (a data table in kraftwire.error_codes)
    BROKER_NOT_AVAILABLE,
    DUPLICATE_VOTER,
    FENCED_LEADER_EPOCH,
    INCONSISTENT_CLUSTER_ID,
    INVALID_REQUEST,
    INVALID_VOTER_KEY,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    POSITION_OUT_OF_RANGE,
    REQUEST_TIMED_OUT,
    SNAPSHOT_NOT_FOUND,
    UNKNOWN_LEADER_EPOCH,
    UNSUPPORTED_VERSION,
    VOTER_NOT_FOUND,
)


@dataclass(frozen=True, slots=True)
class Message:
    src: int
    dst: int
    correlation_id: int


@dataclass(frozen=True, slots=True)
class Request(Message):
    cluster_id: str


@dataclass(frozen=True, slots=True)
class Response(Message):
    error: int
    leader_id: int
    leader_epoch: int


# --- Vote (52), with KIP-996 PreVote -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class VoteRequest(Request):
    candidate_epoch: int
    candidate_key: ReplicaKey
    voter_id: int
    last_offset_epoch: int
    last_offset: int
    pre_vote: bool = False
    #: the directory id the candidate knows the receiving voter by (KIP-853; None: not known)
    voter_directory_id: UUID | None = None


@dataclass(frozen=True, slots=True)
class VoteResponse(Response):
    vote_granted: bool
    pre_vote: bool = False


# --- BeginQuorumEpoch (53) -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BeginQuorumEpochRequest(Request):
    voter_id: int
    # leader_id / leader_epoch of the new leader
    new_leader_id: int
    new_leader_epoch: int
    #: v1 LeaderEndpoints: where the leader listens now ((listener name, host, port), ...); () when not sent
    leader_endpoints: tuple = ()


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochResponse(Response):
    pass


# --- EndQuorumEpoch (54) -------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EndQuorumEpochRequest(Request):
    resigned_leader_id: int
    resigned_leader_epoch: int
    preferred_candidates: tuple[ReplicaKey, ...]


@dataclass(frozen=True, slots=True)
class EndQuorumEpochResponse(Response):
    pass


# --- Fetch (1), raft usage -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FetchRequest(Request):
    replica_id: int  # NO_ID for an anonymous observer
    replica_epoch: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_wait_ms: int
    max_bytes: int
    #: the fetching replica's metadata directory id (Fetch v17, KIP-853; None: not sent)
    replica_directory_id: UUID | None = None
    #: the high watermark the fetching replica knows (Fetch v18, KIP-1166; -1 unknown; None: not sent)
    high_watermark: int | None = None


@dataclass(frozen=True, slots=True)
class FetchResponse(Response):
    high_watermark: int = -1
    diverging_epoch: OffsetAndEpoch | None = None  # (end_offset, epoch) to truncate to
    snapshot_id: SnapshotId | None = None
    records: bytes = b""
    log_start_offset: int = 0


# --- FetchSnapshot (59) --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FetchSnapshotRequest(Request):
    replica_id: int
    current_leader_epoch: int
    snapshot_id: SnapshotId
    position: int
    max_bytes: int


@dataclass(frozen=True, slots=True)
class FetchSnapshotResponse(Response):
    snapshot_id: SnapshotId | None = None
    size: int = 0
    position: int = 0
    unaligned_records: bytes = b""


# --- DescribeQuorum (55) -------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ReplicaStateInfo:
    replica_id: int
    log_end_offset: int
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1
    directory_id: UUID | None = None


@dataclass(frozen=True, slots=True)
class DescribeQuorumRequest(Message):
    pass


@dataclass(frozen=True, slots=True)
class DescribeQuorumResponse(Response):
    high_watermark: int = -1
    current_voters: tuple[ReplicaStateInfo, ...] = field(default_factory=tuple)
    observers: tuple[ReplicaStateInfo, ...] = field(default_factory=tuple)


# --- AddRaftVoter (80), RemoveRaftVoter (81): KIP-853, answered by the leader once the change is committed ----------
@dataclass(frozen=True, slots=True)
class AddRaftVoterRequest(Request):
    voter_key: ReplicaKey
    endpoints: tuple[tuple[str, str, int], ...]  # (listener name, host, port)
    timeout_ms: int
    #: the kraft.version range the new voter supports (Kafka asks it with ApiVersions; the edge does)
    kraft_version_min: int = 0
    kraft_version_max: int = 1
    #: AddRaftVoter v1: False answers once the VotersRecord is appended, before it commits
    ack_when_committed: bool = True


@dataclass(frozen=True, slots=True)
class AddRaftVoterResponse(Response):
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class RemoveRaftVoterRequest(Request):
    voter_key: ReplicaKey


@dataclass(frozen=True, slots=True)
class RemoveRaftVoterResponse(Response):
    error_message: str | None = None


# --- UpdateRaftVoter (82): a voter tells the leader its current endpoints and kraft.version range ------------------
@dataclass(frozen=True, slots=True)
class UpdateRaftVoterRequest(Request):
    current_leader_epoch: int
    voter_key: ReplicaKey
    endpoints: tuple[tuple[str, str, int], ...]
    kraft_version_min: int = 0
    kraft_version_max: int = 1


@dataclass(frozen=True, slots=True)
class UpdateRaftVoterResponse(Response):
    pass


REQUEST_TYPES = (
    VoteRequest,
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    DescribeQuorumRequest,
    AddRaftVoterRequest,
    RemoveRaftVoterRequest,
    UpdateRaftVoterRequest,
)


def is_request(message: Message) -> bool:
    return isinstance(message, REQUEST_TYPES)


def error_name(code: int) -> str:
    return _codes.name_of(code)


