"""One module per Raft RPC: the receiver's request handler and the sender's response handler live together.

``dispatch`` routes an inbound message. Common rules applied here, before any handler runs:

* a request from another cluster is answered with INCONSISTENT_CLUSTER_ID and nothing else happens;
* any response that shows a higher epoch (or names a leader for the current epoch while this node has none) moves
  the node there first — an epoch is a fact, whichever request it answers;
* a response whose correlation id, peer or type does not match an outstanding request, or that answers a request
  sent in an older epoch, is otherwise ignored (KAFKA-18723).
"""

from __future__ import annotations

from kraftwire.raft import messages as m
from kraftwire.raft.handlers import (
    begin_quorum_epoch,
    describe_quorum,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    reconfig,
    vote,
)

RESPONSE_OF = {
    m.VoteRequest: m.VoteResponse,
    m.BeginQuorumEpochRequest: m.BeginQuorumEpochResponse,
    m.EndQuorumEpochRequest: m.EndQuorumEpochResponse,
    m.FetchRequest: m.FetchResponse,
    m.FetchSnapshotRequest: m.FetchSnapshotResponse,
    m.DescribeQuorumRequest: m.DescribeQuorumResponse,
    m.AddRaftVoterRequest: m.AddRaftVoterResponse,
    m.RemoveRaftVoterRequest: m.RemoveRaftVoterResponse,
    m.UpdateRaftVoterRequest: m.UpdateRaftVoterResponse,
}

_REQUESTS = {
    m.VoteRequest: vote.handle_request,
    m.BeginQuorumEpochRequest: begin_quorum_epoch.handle_request,
    m.EndQuorumEpochRequest: end_quorum_epoch.handle_request,
    m.FetchRequest: fetch.handle_request,
    m.FetchSnapshotRequest: fetch_snapshot.handle_request,
    m.DescribeQuorumRequest: describe_quorum.handle_request,
    m.AddRaftVoterRequest: reconfig.handle_add,
    m.RemoveRaftVoterRequest: reconfig.handle_remove,
    m.UpdateRaftVoterRequest: reconfig.handle_update,
}

_RESPONSES = {
    m.VoteResponse: vote.handle_response,
    m.BeginQuorumEpochResponse: begin_quorum_epoch.handle_response,
    m.EndQuorumEpochResponse: end_quorum_epoch.handle_response,
    m.FetchResponse: fetch.handle_response,
    m.FetchSnapshotResponse: fetch_snapshot.handle_response,
    m.UpdateRaftVoterResponse: reconfig.handle_update_response,
}


def error_response(node, request: m.Message, error: int) -> m.Response:
    """The response type of ``request`` carrying only an error and what this node knows of the leader."""
    cls = RESPONSE_OF[type(request)]
    extra = {"vote_granted": False, "pre_vote": request.pre_vote} if cls is m.VoteResponse else {}
    return cls(node.local_id, request.src, request.correlation_id, error, node.quorum.leader_id, node.epoch, **extra)


def dispatch(node, message: m.Message, now_ms: int) -> None:
    handler = _REQUESTS.get(type(message))
    if handler is not None:
        cluster_id = getattr(message, "cluster_id", None)
        if cluster_id is not None and cluster_id != node.config.cluster_id:
            node.reply(error_response(node, message, m.INCONSISTENT_CLUSTER_ID))
            return
        handler(node, message, now_ms)
        return
    handler = _RESPONSES.get(type(message))
    if handler is None:
        raise TypeError(f"no handler for {type(message).__name__}")
    if message.leader_epoch > node.epoch and node.observe_epoch(message.leader_epoch, message.leader_id, now_ms):
        node.counters["epoch_learned_from_response"] += 1
        return
    out = node.match_response(message)
    if out is None:
        return
    if node.observe_epoch(message.leader_epoch, message.leader_id, now_ms):
        return
    handler(node, message, out, now_ms)
