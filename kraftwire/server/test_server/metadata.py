"""Metadata: the quorum's one topic with one partition. Brokers are the voters' client endpoints, the partition
leader is the Raft leader, replicas are the voters and the ISR the voters that are caught up (as the leader sees
them; a non-leader lists every voter). Other topics: UNKNOWN_TOPIC_OR_PARTITION, never auto-created. Topics are
named, and requests refused, as a KRaft broker's are (``metadata.answers``: by id from v12)."""

from __future__ import annotations

from kraftwire.ids import ZERO_UUID
from kraftwire.metadata import answers
from kraftwire.protocol import messages as w
from kraftwire.server.test_server import context as c


class Metadata:
    def __init__(self, ctx: c.BrokerContext) -> None:
        self.ctx = ctx

    def isr(self) -> list[int]:
        ctx = self.ctx
        voters = sorted(v.node_id for v in ctx.voters)
        state = ctx.raft.quorum.state
        if not ctx.is_leader() or not hasattr(state, "voter_states"):
            return voters
        hw = ctx.log.high_watermark()
        out = []
        for vid in voters:
            if vid == ctx.node_id:
                out.append(vid)
                continue
            rs = state.voter_states.get(vid)
            if rs is not None and rs.end_offset >= hw:
                out.append(vid)
        return out

    def partition(self):
        ctx = self.ctx
        P = w.MetadataResponse.MetadataResponsePartition
        leader = ctx.leader_id()
        voters = sorted(v.node_id for v in ctx.voters)
        return P(error_code=c.NONE if leader >= 0 else c.LEADER_NOT_AVAILABLE, partition_index=0, leader_id=leader,
                 leader_epoch=ctx.epoch(), replica_nodes=voters, isr_nodes=self.isr(), offline_replicas=[])

    def handle(self, request, conn) -> None:
        ctx = self.ctx
        R = w.MetadataResponse
        T = R.MetadataResponseTopic
        version = request.version
        requested = request.body.topics
        if requested is not None and version == 0 and not requested:
            requested = None  # v0: an empty list means all topics
        refused = None if requested is None else answers.refused_metadata(requested, version)
        if refused is not None:
            conn.send_response(refused, version, request.header.correlation_id)
            return
        topics = []
        if requested is None:
            topics.append(T(error_code=0, name=ctx.topic_name, topic_id=ctx.topic_id, is_internal=False,
                            partitions=[self.partition()]))
        else:
            for name, topic_id in answers.wanted_topics(requested, version):
                if name == ctx.topic_name or name is None and topic_id == ctx.topic_id:
                    topics.append(T(error_code=0, name=ctx.topic_name, topic_id=ctx.topic_id, is_internal=False,
                                    partitions=[self.partition()]))
                else:
                    topics.append(T(error_code=c.UNKNOWN_TOPIC_OR_PARTITION if name is not None
                                    else c.UNKNOWN_TOPIC_ID, name=name, topic_id=topic_id or ZERO_UUID,
                                    is_internal=False, partitions=[]))
        roles = getattr(ctx.node, "roles", None)  # serving nodes: voters serving clients + Online brokers (issue 9)
        listed = roles.serving_brokers(getattr(conn, "listener", None)) if roles is not None else [(v.node_id, v.host, v.port) for v in ctx.voters]
        body = R(brokers=[R.MetadataResponseBroker(node_id=i, host=h, port=p) for i, h, p in listed],
                 cluster_id=ctx.node.cluster_id, controller_id=ctx.leader_id(), topics=topics)
        conn.send_response(body, version, request.header.correlation_id)
