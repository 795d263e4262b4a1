"""Translation between the core's Raft messages (``kraftwire.raft.messages``) and Kafka's wire messages.

Every Raft RPC on the wire wraps one topic / one partition (the Raft topic, partition 0). Requests name their
sender in different fields (Vote: CandidateId, BeginQuorumEpoch: LeaderId, EndQuorumEpoch: LeaderId,
Fetch/FetchSnapshot: ReplicaId); the edge fills the core's ``src``/``dst``/``correlation_id`` from those and from its
own bookkeeping. Versions used when this node sends: the highest the project declares (Vote v2 carries PreVote).

AddRaftVoter and RemoveRaftVoter (KIP-853) come from admin clients, not from peers: ``check_add_voter`` /
``check_remove_voter`` make the checks Kafka's ``KafkaRaftClient`` makes before its handlers (cluster id, a voter key
with a directory id, an endpoint on the controller listener), with Kafka's messages, and ``add_voter_to_core`` /
``remove_voter_to_core`` build the core's requests; the core's answers go back with their ErrorMessage.

Pure functions only: no sockets here, so tests can round-trip every message.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from kraftwire.error_codes import UNKNOWN_TOPIC_ID
from kraftwire.ids import NO_ID, ZERO_UUID, OffsetAndEpoch, ReplicaKey, SnapshotId
from kraftwire.protocol import messages as w
from kraftwire.protocol import served
from kraftwire.raft import messages as m
from kraftwire.raft.handlers import RESPONSE_OF

_NAMES = ("Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "Fetch", "FetchSnapshot", "DescribeQuorum", "UpdateRaftVoter")
VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, FETCH, FETCH_SNAPSHOT, DESCRIBE_QUORUM, UPDATE_RAFT_VOTER = (
    served.key(n) for n in _NAMES)
ADD_RAFT_VOTER, REMOVE_RAFT_VOTER = served.key("AddRaftVoter"), served.key("RemoveRaftVoter")
RAFT_KEYS = (VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, FETCH, FETCH_SNAPSHOT, UPDATE_RAFT_VOTER)

#: versions this node accepts for each Raft request (a replica's Fetch needs topic ids)
ACCEPT = {served.key(n): served.versions(n) for n in _NAMES}
ACCEPT[FETCH] = (served.RAFT_FETCH_MIN_VERSION, served.versions("Fetch")[1])
#: version this node sends each Raft request at: the highest it serves
SEND_VERSION = {k: hi for k, (_lo, hi) in ACCEPT.items()}


#: the lowest version of each Raft request that carries what the core needs (Fetch: topic ids)
MIN_SEND_VERSION = {FETCH: served.RAFT_FETCH_MIN_VERSION}
#: a pre-vote (KIP-996) exists from Vote v2
PRE_VOTE_MIN_VERSION = 2


def negotiated_version(msg, api_key: int, ours: int, theirs: int | None) -> int | None:
    """The version to send ``msg`` at to a peer whose highest version of ``api_key`` is ``theirs`` (None: it does
    not serve it); None when no common version carries what the request needs (then the core is told
    UNSUPPORTED_VERSION, as Kafka's NetworkClient tells its raft client)."""
    if theirs is None:
        return None
    version = min(ours, theirs)
    lowest = MIN_SEND_VERSION.get(api_key, 0)
    if isinstance(msg, m.VoteRequest) and msg.pre_vote:
        lowest = max(lowest, PRE_VOTE_MIN_VERSION)
    return version if version >= lowest else None


def unsupported_response(msg: m.Request):
    """The core response to ``msg`` saying the peer cannot take it (UNSUPPORTED_VERSION, no leader named)."""
    cls = RESPONSE_OF[type(msg)]
    extra = {"vote_granted": False, "pre_vote": msg.pre_vote} if cls is m.VoteResponse else {}
    return cls(msg.dst, msg.src, msg.correlation_id, m.UNSUPPORTED_VERSION, NO_ID, -1, **extra)


#: Fetch v18's HighWatermark when the replica sends none (its default, Long.MAX_VALUE)
_NO_HIGH_WATERMARK = 2**63 - 1


class WireError(Exception):
    """A Raft request whose shape is wrong (no partition, another topic): answered with ``error``."""

    def __init__(self, error: int, why: str) -> None:
        super().__init__(why)
        self.error = error


@dataclass(frozen=True, slots=True)
class Topic:
    """The Raft topic this node replicates."""

    name: str
    topic_id: uuid.UUID


def _dir(key: ReplicaKey | None) -> uuid.UUID:
    return key.directory_id if key is not None and key.directory_id is not None else ZERO_UUID


def _key(replica_id: int, directory_id: uuid.UUID | None) -> ReplicaKey:
    return ReplicaKey(replica_id, None if directory_id in (None, ZERO_UUID) else directory_id)


def _uuid(value: uuid.UUID | None) -> uuid.UUID | None:
    return None if value in (None, ZERO_UUID) else value


def _one(items, what: str):
    if len(items) != 1:
        raise WireError(m.INVALID_REQUEST, f"{what}: expected exactly one topic partition, got {len(items)}")
    return items[0]


def _quorum_partition(body, topic: Topic, what: str):
    """The one partition a Vote, BeginQuorumEpoch or EndQuorumEpoch names, which must be this quorum's: Kafka's
    hasValidTopicPartition answers any other INVALID_REQUEST (one Raft partition per quorum)."""
    t = _one(body.topics, what)
    p = _one(t.partitions, what)
    if t.topic_name != topic.name or p.partition_index != 0:
        raise WireError(m.INVALID_REQUEST, f"{what} for {t.topic_name}-{p.partition_index}; this quorum replicates "
                                           f"{topic.name}-0")
    return p


# ===================================================================================================================
# requests: core -> wire (this node sends)
# ===================================================================================================================
def request_to_wire(msg: m.Request | m.DescribeQuorumRequest, topic: Topic, local_dir: uuid.UUID | None = None):
    """Returns (api_key, version, wire body)."""
    if isinstance(msg, m.VoteRequest):
        R = w.VoteRequest
        body = R(cluster_id=msg.cluster_id, voter_id=msg.voter_id, topics=[R.TopicData(topic_name=topic.name, partitions=[
            R.PartitionData(partition_index=0, replica_epoch=msg.candidate_epoch, replica_id=msg.candidate_key.id,
                            replica_directory_id=local_dir or _dir(msg.candidate_key),
                            voter_directory_id=msg.voter_directory_id or ZERO_UUID,
                            last_offset_epoch=msg.last_offset_epoch, last_offset=msg.last_offset,
                            pre_vote=msg.pre_vote)])])
        return VOTE, SEND_VERSION[VOTE], body
    if isinstance(msg, m.BeginQuorumEpochRequest):
        R = w.BeginQuorumEpochRequest
        body = R(cluster_id=msg.cluster_id, voter_id=msg.voter_id, topics=[R.TopicData(topic_name=topic.name, partitions=[
            R.PartitionData(partition_index=0, voter_directory_id=ZERO_UUID, leader_id=msg.new_leader_id,
                            leader_epoch=msg.new_leader_epoch)])],
            leader_endpoints=[R.LeaderEndpoint(name=n, host=h, port=p) for n, h, p in msg.leader_endpoints])
        return BEGIN_QUORUM_EPOCH, SEND_VERSION[BEGIN_QUORUM_EPOCH], body
    if isinstance(msg, m.EndQuorumEpochRequest):
        R = w.EndQuorumEpochRequest
        body = R(cluster_id=msg.cluster_id, topics=[R.TopicData(topic_name=topic.name, partitions=[
            R.PartitionData(partition_index=0, leader_id=msg.resigned_leader_id, leader_epoch=msg.resigned_leader_epoch,
                            preferred_successors=[k.id for k in msg.preferred_candidates],
                            preferred_candidates=[R.ReplicaInfo(candidate_id=k.id, candidate_directory_id=_dir(k))
                                                  for k in msg.preferred_candidates])])])
        return END_QUORUM_EPOCH, SEND_VERSION[END_QUORUM_EPOCH], body
    if isinstance(msg, m.FetchRequest):
        R = w.FetchRequest
        body = R(cluster_id=msg.cluster_id, replica_id=msg.replica_id,
                 replica_state=R.ReplicaState(replica_id=msg.replica_id, replica_epoch=msg.replica_epoch),
                 max_wait_ms=msg.max_wait_ms, min_bytes=0, max_bytes=msg.max_bytes,
                 topics=[R.FetchTopic(topic=topic.name, topic_id=topic.topic_id, partitions=[
                     R.FetchPartition(partition=0, current_leader_epoch=msg.current_leader_epoch,
                                      fetch_offset=msg.fetch_offset, last_fetched_epoch=msg.last_fetched_epoch,
                                      log_start_offset=-1, partition_max_bytes=msg.max_bytes,
                                      replica_directory_id=local_dir or ZERO_UUID,
                                      high_watermark=_NO_HIGH_WATERMARK if msg.high_watermark is None
                                      else msg.high_watermark)])])
        return FETCH, SEND_VERSION[FETCH], body
    if isinstance(msg, m.FetchSnapshotRequest):
        R = w.FetchSnapshotRequest
        body = R(cluster_id=msg.cluster_id, replica_id=msg.replica_id, max_bytes=msg.max_bytes,
                 topics=[R.TopicSnapshot(name=topic.name, partitions=[R.PartitionSnapshot(
                     partition=0, current_leader_epoch=msg.current_leader_epoch,
                     snapshot_id=R.SnapshotId(end_offset=msg.snapshot_id.end_offset, epoch=msg.snapshot_id.epoch),
                     position=msg.position, replica_directory_id=local_dir or ZERO_UUID)])])
        return FETCH_SNAPSHOT, SEND_VERSION[FETCH_SNAPSHOT], body
    if isinstance(msg, m.UpdateRaftVoterRequest):
        R = w.UpdateRaftVoterRequest
        body = R(cluster_id=msg.cluster_id, current_leader_epoch=msg.current_leader_epoch, voter_id=msg.voter_key.id,
                 voter_directory_id=_dir(msg.voter_key),
                 listeners=[R.Listener(name=n, host=h, port=p) for n, h, p in msg.endpoints],
                 kraft_version_feature=R.KRaftVersionFeature(min_supported_version=msg.kraft_version_min,
                                                              max_supported_version=msg.kraft_version_max))
        return UPDATE_RAFT_VOTER, SEND_VERSION[UPDATE_RAFT_VOTER], body
    if isinstance(msg, m.DescribeQuorumRequest):
        R = w.DescribeQuorumRequest
        body = R(topics=[R.TopicData(topic_name=topic.name, partitions=[R.PartitionData(partition_index=0)])])
        return DESCRIBE_QUORUM, SEND_VERSION[DESCRIBE_QUORUM], body
    raise TypeError(f"not a request: {msg!r}")


# ===================================================================================================================
# requests: wire -> core (this node receives)
# ===================================================================================================================
def request_to_core(api_key: int, version: int, body, local_id: int, cid: int, topic: Topic):
    """Translate an inbound Raft request. ``cid`` is the edge's id for this request (used to route the answer)."""
    if api_key == VOTE:
        p = _quorum_partition(body, topic, "Vote")
        return m.VoteRequest(p.replica_id, local_id, cid, body.cluster_id, candidate_epoch=p.replica_epoch,
                             candidate_key=_key(p.replica_id, p.replica_directory_id),
                             voter_id=body.voter_id if version >= 1 else local_id,
                             last_offset_epoch=p.last_offset_epoch, last_offset=p.last_offset,
                             pre_vote=bool(getattr(p, "pre_vote", False)) if version >= 2 else False,
                             voter_directory_id=_uuid(p.voter_directory_id) if version >= 1 else None)
    if api_key == BEGIN_QUORUM_EPOCH:
        p = _quorum_partition(body, topic, "BeginQuorumEpoch")
        return m.BeginQuorumEpochRequest(p.leader_id, local_id, cid, body.cluster_id,
                                         voter_id=body.voter_id if version >= 1 else local_id,
                                         new_leader_id=p.leader_id, new_leader_epoch=p.leader_epoch,
                                         leader_endpoints=tuple((ep.name, ep.host, ep.port)
                                                                for ep in body.leader_endpoints) if version >= 1 else ())
    if api_key == END_QUORUM_EPOCH:
        p = _quorum_partition(body, topic, "EndQuorumEpoch")
        if version >= 1:
            preferred = tuple(_key(c.candidate_id, c.candidate_directory_id) for c in p.preferred_candidates)
        else:
            preferred = tuple(ReplicaKey(i) for i in p.preferred_successors)
        return m.EndQuorumEpochRequest(p.leader_id, local_id, cid, body.cluster_id, resigned_leader_id=p.leader_id,
                                       resigned_leader_epoch=p.leader_epoch, preferred_candidates=preferred)
    if api_key == FETCH:
        t = _one(body.topics, "Fetch")
        if t.topic_id != topic.topic_id:
            raise WireError(UNKNOWN_TOPIC_ID, f"Fetch for topic id {t.topic_id}, this quorum replicates {topic.topic_id}")
        p = _one(t.partitions, "Fetch")
        if p.partition != 0:
            raise WireError(3, f"Fetch for partition {p.partition}")
        if version >= 15:
            replica_id, replica_epoch = body.replica_state.replica_id, body.replica_state.replica_epoch
        else:
            replica_id, replica_epoch = body.replica_id, -1
        return m.FetchRequest(replica_id, local_id, cid, body.cluster_id, replica_id=replica_id,
                              replica_epoch=replica_epoch, current_leader_epoch=p.current_leader_epoch,
                              fetch_offset=p.fetch_offset, last_fetched_epoch=p.last_fetched_epoch,
                              max_wait_ms=body.max_wait_ms, max_bytes=min(body.max_bytes, p.partition_max_bytes),
                              replica_directory_id=_uuid(p.replica_directory_id) if version >= 17 else None,
                              high_watermark=p.high_watermark if version >= 18 and p.high_watermark !=
                              _NO_HIGH_WATERMARK else None)
    if api_key == FETCH_SNAPSHOT:
        p = _one(_one(body.topics, "FetchSnapshot").partitions, "FetchSnapshot")
        return m.FetchSnapshotRequest(body.replica_id, local_id, cid, body.cluster_id, replica_id=body.replica_id,
                                      current_leader_epoch=p.current_leader_epoch,
                                      snapshot_id=SnapshotId(p.snapshot_id.end_offset, p.snapshot_id.epoch),
                                      position=p.position, max_bytes=body.max_bytes)
    if api_key == DESCRIBE_QUORUM:
        return m.DescribeQuorumRequest(NO_ID, local_id, cid)
    if api_key == UPDATE_RAFT_VOTER:
        if body.voter_directory_id in (None, ZERO_UUID):
            raise WireError(m.INVALID_REQUEST, "Update voter request didn't include a valid voter")
        feature = body.kraft_version_feature
        return m.UpdateRaftVoterRequest(body.voter_id, local_id, cid, body.cluster_id,
                                        current_leader_epoch=body.current_leader_epoch,
                                        voter_key=_key(body.voter_id, body.voter_directory_id),
                                        endpoints=tuple((ep.name, ep.host, ep.port) for ep in body.listeners),
                                        kraft_version_min=feature.min_supported_version,
                                        kraft_version_max=feature.max_supported_version)
    raise WireError(m.INVALID_REQUEST, f"api key {api_key} is not a Raft request")


# ===================================================================================================================
# responses: core -> wire (this node answers)
# ===================================================================================================================
def response_to_wire(msg: m.Response, topic: Topic, *, voter_endpoints=None, observer_endpoints=None,
                     leader_endpoint: tuple[str, int] | None = None):
    """Returns the wire body for a core response (the version is the request's)."""
    if isinstance(msg, m.VoteResponse):
        R = w.VoteResponse
        return R(error_code=0, topics=[R.TopicData(topic_name=topic.name, partitions=[R.PartitionData(
            partition_index=0, error_code=msg.error, leader_id=msg.leader_id, leader_epoch=msg.leader_epoch,
            vote_granted=msg.vote_granted)])])
    if isinstance(msg, m.BeginQuorumEpochResponse):
        R = w.BeginQuorumEpochResponse
        return R(error_code=0, topics=[R.TopicData(topic_name=topic.name, partitions=[R.PartitionData(
            partition_index=0, error_code=msg.error, leader_id=msg.leader_id, leader_epoch=msg.leader_epoch)])])
    if isinstance(msg, m.EndQuorumEpochResponse):
        R = w.EndQuorumEpochResponse
        return R(error_code=0, topics=[R.TopicData(topic_name=topic.name, partitions=[R.PartitionData(
            partition_index=0, error_code=msg.error, leader_id=msg.leader_id, leader_epoch=msg.leader_epoch)])])
    if isinstance(msg, m.FetchResponse):
        R = w.FetchResponse
        P = R.PartitionData
        part = P(partition_index=0, error_code=msg.error, high_watermark=msg.high_watermark,
                 log_start_offset=msg.log_start_offset,
                 current_leader=R.LeaderIdAndEpoch(leader_id=msg.leader_id, leader_epoch=msg.leader_epoch),
                 records=msg.records)
        if msg.diverging_epoch is not None:
            part.diverging_epoch = R.EpochEndOffset(epoch=msg.diverging_epoch.epoch,
                                                    end_offset=msg.diverging_epoch.offset)
        if msg.snapshot_id is not None:
            part.snapshot_id = R.SnapshotId(end_offset=msg.snapshot_id.end_offset, epoch=msg.snapshot_id.epoch)
        return R(error_code=0, responses=[R.FetchableTopicResponse(topic=topic.name, topic_id=topic.topic_id,
                                                                     partitions=[part])])
    if isinstance(msg, m.FetchSnapshotResponse):
        R = w.FetchSnapshotResponse
        P = R.PartitionSnapshot
        sid = msg.snapshot_id or SnapshotId(-1, -1)
        return R(error_code=0, topics=[R.TopicSnapshot(name=topic.name, partitions=[P(
            index=0, error_code=msg.error, snapshot_id=R.SnapshotId(end_offset=sid.end_offset, epoch=sid.epoch),
            current_leader=R.LeaderIdAndEpoch(leader_id=msg.leader_id, leader_epoch=msg.leader_epoch),
            size=msg.size, position=msg.position, unaligned_records=msg.unaligned_records)])])
    if isinstance(msg, m.DescribeQuorumResponse):
        return describe_quorum_to_wire(msg, topic, voter_endpoints or {}, observer_endpoints or {})
    if isinstance(msg, m.UpdateRaftVoterResponse):
        R = w.UpdateRaftVoterResponse
        host, port = leader_endpoint or ("", -1)
        return R(error_code=msg.error, current_leader=R.CurrentLeader(leader_id=msg.leader_id,
                                                                      leader_epoch=msg.leader_epoch,
                                                                      host=host, port=port))
    if isinstance(msg, (m.AddRaftVoterResponse, m.RemoveRaftVoterResponse)):
        return voter_change_response(type(msg) is m.AddRaftVoterResponse, msg.error, msg.error_message)
    raise TypeError(f"not a response: {msg!r}")


def fetches_the_quorum_log(body, topic: Topic) -> bool:
    """Whether a replica's Fetch (v13+, topic ids) is for this quorum's log: it names the log's topic and no other.
    A Fetch naming no topic is an incremental fetch session's with nothing changed (a Kafka broker's replica
    fetcher sends one whenever its partitions have nothing new to say) — a broker's, never Raft's, whose Fetch
    always names its one partition and uses no session."""
    return bool(body.topics) and all(t.topic_id == topic.topic_id for t in body.topics)


#: the first version of each Raft response that carries the leader's endpoint (NodeEndpoints); Fetch has the field
#: from v16 for clients, but Kafka's Raft fills it only from v17
NODE_ENDPOINTS_FROM = {m.VoteResponse: 1, m.BeginQuorumEpochResponse: 1, m.EndQuorumEpochResponse: 1,
                       m.FetchResponse: 17, m.FetchSnapshotResponse: 1}


def with_leader_endpoint(body, msg: m.Response, version: int, endpoint: tuple[str, int] | None):
    """``body`` (a Raft response on the wire) naming where its leader listens, as Kafka's Raft responses do: the
    leader's endpoint on the listener the request came in on, when the response names a leader (``leader_id`` >= 0),
    the responder knows that endpoint and ``version`` has the field. A Kafka observer that joined through
    ``controller.quorum.bootstrap.servers`` knows no voter yet and needs it to follow the leader (without it Kafka's
    raft thread fails: "Unknown leader endpoints")."""
    first = NODE_ENDPOINTS_FROM.get(type(msg))
    if first is not None and version >= first and endpoint is not None and msg.leader_id >= 0:
        body.node_endpoints = [type(body).NodeEndpoint(node_id=msg.leader_id, host=endpoint[0], port=endpoint[1])]
    return body


def describe_quorum_to_wire(msg: m.DescribeQuorumResponse, topic: Topic, endpoints: dict):
    """``endpoints``: node id -> list of (listener name, host, port). Directory ids are the core's: a voter's as its
    voter set records it (none for static voters, as Kafka reports them), an observer's as it last fetched."""
    R = w.DescribeQuorumResponse
    P = R.PartitionData

    def replica(s: m.ReplicaStateInfo):
        return R.ReplicaState(replica_id=s.replica_id, replica_directory_id=s.directory_id or ZERO_UUID,
                              log_end_offset=s.log_end_offset, last_fetch_timestamp=s.last_fetch_timestamp,
                              last_caught_up_timestamp=s.last_caught_up_timestamp)

    part = P(partition_index=0, error_code=msg.error, leader_id=msg.leader_id, leader_epoch=msg.leader_epoch,
             high_watermark=msg.high_watermark, current_voters=[replica(s) for s in msg.current_voters],
             observers=[replica(s) for s in msg.observers])
    nodes = [R.Node(node_id=nid, listeners=[R.Listener(name=n, host=h, port=p) for n, h, p in eps])
             for nid, eps in sorted(endpoints.items())] if msg.error == 0 else []
    return R(error_code=0, topics=[R.TopicData(topic_name=topic.name, partitions=[part])], nodes=nodes)


def error_response_body(api_key: int, version: int, error: int, topic: Topic):
    """A wire response of ``api_key`` carrying ``error`` at the top level (for malformed Raft requests)."""
    info = w.api(api_key)
    body = info.response()
    if hasattr(body, "error_code"):
        body.error_code = error
    return body


# ===================================================================================================================
# AddRaftVoter (80), RemoveRaftVoter (81): an admin client's request, Kafka's checks before the leader's handlers
# ===================================================================================================================
def endpoints_text(listeners) -> str:
    """Kafka's ``Endpoints.toString()`` of a request's listeners (a map of listener name to unresolved address)."""
    items = ", ".join(f"ListenerName({ep.name})={ep.host}/<unresolved>:{ep.port}" for ep in listeners)
    return f"Endpoints(endpoints={{{items}}})"


def cluster_refusal(body, cluster_id: str) -> tuple[int, str] | None:
    """Kafka's first check of an Add/RemoveRaftVoter: INCONSISTENT_CLUSTER_ID when it names another cluster (one
    naming none is not checked, as Kafka's hasValidClusterId). (error, message) or None."""
    if body.cluster_id is not None and body.cluster_id != cluster_id:
        return (m.INCONSISTENT_CLUSTER_ID,
                f'The given id "{body.cluster_id}" doesn\'t match the cluster id "{cluster_id}"')
    return None


def check_add_voter(body, listener: str) -> tuple[int, str] | None:
    """Kafka's checks of an AddRaftVoter once the cluster id and the leadership are checked: a voter key with a
    directory id, an endpoint on the controller listener (``listener``). (error, message) or None."""
    if body.voter_id < 0 or body.voter_directory_id in (None, ZERO_UUID):
        return m.INVALID_REQUEST, "Add voter request didn't include a valid voter"
    if not any(ep.name == listener for ep in body.listeners):
        return (m.INVALID_REQUEST, f"Add voter request didn't include the endpoint ({endpoints_text(body.listeners)}) "
                                   f"for the default listener {listener}")
    return None


def check_remove_voter(body) -> tuple[int, str] | None:
    if body.voter_id < 0 or body.voter_directory_id in (None, ZERO_UUID):
        return m.INVALID_REQUEST, "Remove voter request didn't include a valid voter"
    return None


def add_voter_to_core(body, local_id: int, cid: int, kraft_versions: tuple[int, int]) -> m.AddRaftVoterRequest:
    """The core's request, ``kraft_versions`` the (min, max) kraft.version the new voter said it supports (a
    request naming no cluster id keeps None: the core checks only one that is named)."""
    return m.AddRaftVoterRequest(NO_ID, local_id, cid, body.cluster_id,
                                 voter_key=ReplicaKey(body.voter_id, _uuid(body.voter_directory_id)),
                                 endpoints=tuple((ep.name, ep.host, ep.port) for ep in body.listeners),
                                 timeout_ms=body.timeout_ms, kraft_version_min=kraft_versions[0],
                                 kraft_version_max=kraft_versions[1], ack_when_committed=body.ack_when_committed)


def remove_voter_to_core(body, local_id: int, cid: int) -> m.RemoveRaftVoterRequest:
    return m.RemoveRaftVoterRequest(NO_ID, local_id, cid, body.cluster_id,
                                    voter_key=ReplicaKey(body.voter_id, _uuid(body.voter_directory_id)))


def voter_change_response(add: bool, error: int, message: str | None = None):
    """The AddRaftVoter / RemoveRaftVoter wire response (ErrorMessage null when there is none, as Kafka's)."""
    R = w.AddRaftVoterResponse if add else w.RemoveRaftVoterResponse
    return R(throttle_time_ms=0, error_code=error, error_message=message)


# ===================================================================================================================
# responses: wire -> core (this node sent the request)
# ===================================================================================================================
def response_to_core(api_key: int, body, src: int, dst: int, cid: int, request=None):
    """Translate a response from peer ``src`` to the request the core sent with correlation id ``cid``
    (``request``: that core request; a Vote response carries no PreVote flag on the wire, it is the request's)."""
    if api_key == VOTE:
        pre_vote = bool(getattr(request, "pre_vote", False))
        parts = [p for t in body.topics for p in t.partitions]
        if body.error_code or not parts:
            return m.VoteResponse(src, dst, cid, body.error_code or m.INVALID_REQUEST, NO_ID, -1, vote_granted=False,
                                  pre_vote=pre_vote)
        p = parts[0]
        return m.VoteResponse(src, dst, cid, p.error_code, p.leader_id, p.leader_epoch, vote_granted=p.vote_granted,
                              pre_vote=pre_vote)
    if api_key in (BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH):
        cls = m.BeginQuorumEpochResponse if api_key == BEGIN_QUORUM_EPOCH else m.EndQuorumEpochResponse
        parts = [p for t in body.topics for p in t.partitions]
        if body.error_code or not parts:
            return cls(src, dst, cid, body.error_code or m.INVALID_REQUEST, NO_ID, -1)
        p = parts[0]
        return cls(src, dst, cid, p.error_code, p.leader_id, p.leader_epoch)
    if api_key == FETCH:
        parts = [p for t in body.responses for p in t.partitions]
        if body.error_code or not parts:
            return m.FetchResponse(src, dst, cid, body.error_code or m.INVALID_REQUEST, NO_ID, -1)
        p = parts[0]
        diverging = None
        if p.diverging_epoch is not None and p.diverging_epoch.epoch >= 0 and p.diverging_epoch.end_offset >= 0:
            diverging = OffsetAndEpoch(p.diverging_epoch.end_offset, p.diverging_epoch.epoch)
        snapshot = None
        if p.snapshot_id is not None and p.snapshot_id.end_offset >= 0 and p.snapshot_id.epoch >= 0:
            snapshot = SnapshotId(p.snapshot_id.end_offset, p.snapshot_id.epoch)
        leader = p.current_leader
        return m.FetchResponse(src, dst, cid, p.error_code, leader.leader_id, leader.leader_epoch,
                               high_watermark=p.high_watermark, diverging_epoch=diverging, snapshot_id=snapshot,
                               records=p.records if p.records is not None else b"",
                               log_start_offset=p.log_start_offset)
    if api_key == FETCH_SNAPSHOT:
        parts = [p for t in body.topics for p in t.partitions]
        if body.error_code or not parts:
            return m.FetchSnapshotResponse(src, dst, cid, body.error_code or m.INVALID_REQUEST, NO_ID, -1)
        p = parts[0]
        sid = SnapshotId(p.snapshot_id.end_offset, p.snapshot_id.epoch) if p.snapshot_id.end_offset >= 0 else None
        return m.FetchSnapshotResponse(src, dst, cid, p.error_code, p.current_leader.leader_id,
                                       p.current_leader.leader_epoch, snapshot_id=sid, size=p.size,
                                       position=p.position, unaligned_records=bytes(p.unaligned_records or b""))
    if api_key == UPDATE_RAFT_VOTER:
        leader = body.current_leader
        return m.UpdateRaftVoterResponse(src, dst, cid, body.error_code,
                                         leader.leader_id if leader is not None else NO_ID,
                                         leader.leader_epoch if leader is not None else -1)
    raise TypeError(f"api key {api_key} has no core response")
