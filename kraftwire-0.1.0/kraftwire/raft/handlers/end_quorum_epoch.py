"""EndQuorumEpoch (API 54): sent only by a resigning leader, naming its preferred successors (most up to date
first). A follower of that leader lets the n-th preferred candidate start an election after a strict exponential
backoff (0 for the first) and from then on grants pre-votes, since its leader is gone."""

from __future__ import annotations

from kraftwire.ids import ReplicaKey
from kraftwire.raft import messages as m
from kraftwire.raft.states import FollowerState, ResignedState, UnattachedState


def handle_request(node, req: m.EndQuorumEpochRequest, now_ms: int) -> None:
    def answer(error: int) -> None:
        node.reply(
            m.EndQuorumEpochResponse(node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id, node.epoch)
        )

    if req.resigned_leader_epoch < node.epoch:
        return answer(m.FENCED_LEADER_EPOCH)
    if req.resigned_leader_id < 0:  # Kafka's validateVoterOnlyRequest: no leader resigns as "nobody"
        return answer(m.INVALID_REQUEST)
    if req.resigned_leader_epoch > node.epoch and req.resigned_leader_id != node.local_id:
        node.become_follower(req.resigned_leader_epoch, req.resigned_leader_id, now_ms)
    state = node.quorum.state
    ids = [k.id for k in req.preferred_candidates]
    position = ids.index(node.local_id) if node.local_id in ids else len(ids)
    delay = node.quorum.strict_exponential_backoff_ms(position)
    if isinstance(state, FollowerState) and state.leader_id == req.resigned_leader_id:
        state.leader_resigned = True
        state.fetch_deadline_ms = min(state.fetch_deadline_ms, now_ms + delay)
    elif isinstance(state, UnattachedState):
        state.election_deadline_ms = min(state.election_deadline_ms, now_ms + delay)
    answer(m.NONE)


def handle_response(node, resp: m.EndQuorumEpochResponse, out, now_ms: int) -> None:
    state = node.quorum.state
    if isinstance(state, ResignedState) and resp.error == m.NONE:
        state.unacknowledged.discard(resp.src)


def send_end_quorum_epoch(node, state: ResignedState, now_ms: int) -> None:
    preferred = tuple(ReplicaKey(v) for v in state.preferred_successors)
    for voter in sorted(state.unacknowledged):
        if node.has_outstanding(m.EndQuorumEpochRequest, voter) or node.retry_after.get(voter, 0) > now_ms:
            continue
        node.send_request(
            lambda cid, voter=voter: m.EndQuorumEpochRequest(
                node.local_id, voter, cid, node.config.cluster_id, resigned_leader_id=node.local_id,
                resigned_leader_epoch=state.epoch, preferred_candidates=preferred,
            ),
            voter, now_ms,
        )
