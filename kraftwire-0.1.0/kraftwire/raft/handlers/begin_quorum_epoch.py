"""BeginQuorumEpoch (API 53): the new leader tells every voter; resent to voters that have not acknowledged (by a
response or by fetching in the new epoch). With kraft.version 1 it says where the leader listens (v1
LeaderEndpoints); the follower fetches there, as Kafka's does, so a leader that moved is reachable before the voter
set names its new address."""

from __future__ import annotations

from kraftwire.raft import messages as m
from kraftwire.raft.leader import LeaderState
from kraftwire.raft.states import FollowerState, ResignedState


def handle_request(node, req: m.BeginQuorumEpochRequest, now_ms: int) -> None:
    def answer(error: int) -> None:
        node.reply(
            m.BeginQuorumEpochResponse(
                node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id, node.epoch
            )
        )

    if req.voter_id != node.local_id:
        return answer(m.INVALID_VOTER_KEY)
    if req.new_leader_epoch < node.epoch:
        return answer(m.FENCED_LEADER_EPOCH)
    if req.new_leader_id == node.local_id or req.new_leader_id < 0:  # (< 0: Kafka's validateVoterOnlyRequest)
        return answer(m.INVALID_REQUEST)
    state = node.quorum.state
    if req.new_leader_epoch == node.epoch:
        if isinstance(state, (LeaderState, ResignedState)):
            return answer(m.INVALID_REQUEST)
        if isinstance(state, FollowerState) and state.leader_id != req.new_leader_id:
            return answer(m.INVALID_REQUEST)
    node.become_follower(req.new_leader_epoch, req.new_leader_id, now_ms)
    if req.leader_endpoints:
        node.quorum.state.leader_endpoints = tuple(req.leader_endpoints)
    answer(m.NONE)


def handle_response(node, resp: m.BeginQuorumEpochResponse, out, now_ms: int) -> None:
    state = node.quorum.state
    if isinstance(state, LeaderState) and resp.error == m.NONE:
        state.acknowledge(resp.src)
    elif resp.error != m.NONE:
        node.retry_after[resp.src] = now_ms + node.config.retry_backoff_ms


def send_begin_quorum_epoch(node, leader: LeaderState, now_ms: int) -> None:
    endpoints = tuple(node.config.local_endpoints) if node.membership.dynamic else ()
    for voter in sorted(leader.unacknowledged):
        if node.has_outstanding(m.BeginQuorumEpochRequest, voter) or node.retry_after.get(voter, 0) > now_ms:
            continue
        node.send_request(
            lambda cid, voter=voter: m.BeginQuorumEpochRequest(
                node.local_id, voter, cid, node.config.cluster_id, voter_id=voter,
                new_leader_id=node.local_id, new_leader_epoch=leader.epoch, leader_endpoints=endpoints,
            ),
            voter, now_ms,
        )
