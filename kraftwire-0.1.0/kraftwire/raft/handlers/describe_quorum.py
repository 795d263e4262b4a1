"""DescribeQuorum (API 55): the leader reports the high watermark and every replica's end offset, fetch times and
(KIP-853) directory id; the voters are the set in force. A voter's directory id is the one its voter set records, so
static voters (kraft.version 0) report none, the leader included, as Kafka's leader does."""

from __future__ import annotations

from kraftwire.raft import messages as m
from kraftwire.raft.leader import LeaderState


def handle_request(node, req: m.DescribeQuorumRequest, now_ms: int) -> None:
    state = node.quorum.state
    if not isinstance(state, LeaderState):
        node.reply(
            m.DescribeQuorumResponse(
                node.local_id, req.src, req.correlation_id, m.NOT_LEADER_OR_FOLLOWER, node.quorum.leader_id, node.epoch
            )
        )
        return

    def info(s):
        if s.replica_id == node.local_id:  # the leader is caught up with itself now (Kafka's describeQuorum)
            return m.ReplicaStateInfo(s.replica_id, s.end_offset, now_ms, now_ms, s.directory_id)
        return m.ReplicaStateInfo(s.replica_id, s.end_offset, s.last_fetch_ms, s.last_caught_up_ms, s.directory_id)

    node.reply(
        m.DescribeQuorumResponse(
            node.local_id, req.src, req.correlation_id, m.NONE, node.local_id, state.epoch,
            high_watermark=-1 if state.high_watermark is None else state.high_watermark,
            current_voters=tuple(info(s) for s in state.voter_states.values()),
            observers=tuple(info(s) for _, s in sorted(state.observers(now_ms).items())),
        )
    )
