"""The node's own quorum APIs, answered by every node: DescribeQuorum (forwarded to the leader once), AddRaftVoter
and RemoveRaftVoter (KIP-853: checked as Kafka's raft client checks them, then decided by the core; an add first
asks the new voter its kraft.version range with ApiVersions), and the test server's DescribeCluster and Metadata.
A part of ``node.app.Node``.
"""

from __future__ import annotations

import asyncio
import logging
import time

from kraftwire.config import METADATA_TOPIC
from kraftwire.error_codes import UNKNOWN_TOPIC_OR_PARTITION, default_message
from kraftwire.errors import KraftwireError
from kraftwire.ids import NO_ID, replica_key_text
from kraftwire.protocol import messages as w
from kraftwire.raft import messages as m
from kraftwire.raft.handlers.reconfig import precheck_add
from kraftwire.server.edge import wire
from kraftwire.server.edge.client import FORWARD_CLIENT_ID, request_once
from kraftwire.server.edge.envelope import was_forwarded
from kraftwire.server.edge.forward_links import ForwardLinks

log = logging.getLogger("kraftwire.node")


class _Entry(tuple):
    """An inbound request waiting for the core's answer (conn, wire correlation id, api key, version, topic)."""

    def __new__(cls, conn, wire_cid, api_key, version, topic_name):
        self = super().__new__(cls, (conn, wire_cid, api_key, version))
        self.topic_name = topic_name
        return self


class QuorumApis:
    """DescribeQuorum, AddRaftVoter, RemoveRaftVoter, DescribeCluster, Metadata; a part of ``node.app.Node``."""

    # ================================================================================================================
    # DescribeQuorum, DescribeCluster, Metadata
    # ================================================================================================================
    def _voter_endpoints(self) -> dict:
        """DescribeQuorum's Nodes: each voter's endpoints — all its listeners, as its VotersRecord names them, in a
        KIP-853 quorum; its controller listener from the configuration in a static one."""
        raft = self.raft
        if raft is not None and raft.membership.dynamic:
            known = {n.id: list(n.endpoints) for n in raft.membership.voters().nodes if n.endpoints}
            if known:
                return known
        name = self.settings.controller_listener
        return {v.node_id: [(name, v.host, v.port)] for v in self.settings.voters}

    def _name_topic(self, body, entry) -> None:
        requested = getattr(entry, "topic_name", None)
        if requested:
            for t in body.topics:
                t.topic_name = requested

    def _describe_quorum(self, request, conn) -> None:
        assert self.raft is not None and self.driver is not None
        version = request.version
        wire_cid = request.header.correlation_id
        topics = request.body.topics
        if not (len(topics) == 1 and topics[0].topic_name in (self.topic.name, METADATA_TOPIC)
                and len(topics[0].partitions) == 1 and topics[0].partitions[0].partition_index == 0):
            # Kafka's answer to anything but the quorum's one partition. Kafka's tools always name __cluster_metadata;
            # a test server's quorum log has another name, so both names are this quorum's. Only the error and its
            # default message are set: the leader, epoch and high watermark are 0 (the conformance run's
            # DescribeQuorum-v2-unknown-partition).
            R = w.DescribeQuorumResponse
            body = R(error_code=0, topics=[R.TopicData(topic_name=t.topic_name, partitions=[
                R.PartitionData(partition_index=p.partition_index, error_code=UNKNOWN_TOPIC_OR_PARTITION,
                                error_message=default_message(UNKNOWN_TOPIC_OR_PARTITION)) for p in t.partitions])
                for t in topics])
            conn.send_response(body, version, wire_cid)
            return
        names = [topics[0].topic_name]
        if self.raft.is_leader():
            cid = next(self._ids)
            self._inbound[cid] = _Entry(conn, wire_cid, wire.DESCRIBE_QUORUM, version, names[0])
            self.driver.received(m.DescribeQuorumRequest(NO_ID, self.settings.node_id, cid))
            return
        leader = self.raft.quorum.leader_id
        voter = self.settings.voter(leader) if leader not in (NO_ID, self.settings.node_id) else None
        if was_forwarded(request, conn):
            voter = None  # views differ (an election is under way): answer, do not forward in a circle
        if voter is None:
            R = w.DescribeQuorumResponse
            body = R(error_code=0, topics=[R.TopicData(topic_name=names[0], partitions=[R.PartitionData(
                partition_index=0, error_code=m.NOT_LEADER_OR_FOLLOWER, leader_id=NO_ID,
                leader_epoch=self.raft.epoch, high_watermark=-1)])])
            conn.send_response(body, version, wire_cid)
            return
        asyncio.get_running_loop().create_task(self._forward_describe_quorum(request, conn, voter))

    # ================================================================================================================
    # AddRaftVoter, RemoveRaftVoter (KIP-853)
    # ================================================================================================================
    def _voter_change(self, request, conn) -> None:
        """Kafka's order: the cluster id; the leadership (a node that does not lead forwards to the leader, as a
        Kafka broker forwards to the active controller; a request forwarded once is answered
        NOT_LEADER_OR_FOLLOWER); the voter key and, for an add, an endpoint on the controller listener; then the
        core's own checks. An add asks the new voter for its kraft.version range first (Kafka's step 5); the core
        answers once the change is committed."""
        assert self.raft is not None and self.driver is not None
        add = request.api.key == wire.ADD_RAFT_VOTER
        body, version, wire_cid = request.body, request.version, request.header.correlation_id

        def answer(error: int, message: str | None = None) -> None:
            conn.send_response(wire.voter_change_response(add, error, message), version, wire_cid)

        refused = wire.cluster_refusal(body, self.cluster_id)
        if refused is not None:
            return answer(*refused)
        if not self.raft.is_leader():
            leader = self.raft.quorum.leader_id
            voter = self.settings.voter(leader) if leader not in (NO_ID, self.settings.node_id) else None
            if voter is None or was_forwarded(request, conn):
                return answer(m.NOT_LEADER_OR_FOLLOWER)
            timeout_s = self.settings.config.controller_quorum_request_timeout_ms / 1000
            if add:
                timeout_s += max(0, body.timeout_ms) / 1000
            asyncio.get_running_loop().create_task(self._forward_voter_change(add, request, conn, voter, timeout_s))
            return
        s = self.settings
        refused = wire.check_add_voter(body, s.controller_listener) if add else wire.check_remove_voter(body)
        if refused is not None:
            return answer(*refused)
        if not add:
            cid = next(self._ids)
            self._inbound[cid] = _Entry(conn, wire_cid, wire.REMOVE_RAFT_VOTER, version, None)
            self._voter_changes[cid] = time.perf_counter()
            self.driver.received(wire.remove_voter_to_core(body, s.node_id, cid))
            return
        refused = precheck_add(self.raft, wire.add_voter_to_core(body, s.node_id, 0, (0, 0)))
        if refused is not None:
            return answer(*refused)
        asyncio.get_running_loop().create_task(self._add_voter(body, version, wire_cid, conn))

    async def _add_voter(self, body, version: int, wire_cid: int, conn) -> None:
        """Kafka's AddVoterHandler step 5: ApiVersions to the new voter's controller listener, for the kraft.version
        range it supports; then the core decides."""
        s = self.settings
        key = replica_key_text(body.voter_id, body.voter_directory_id)
        ep = next(ep for ep in body.listeners if ep.name == s.controller_listener)

        def answer(error: int, message: str | None = None) -> None:
            conn.send_response(wire.voter_change_response(True, error, message), version, wire_cid)

        asked = time.perf_counter()
        try:
            versions = await request_once(ep.host, ep.port, w.ApiVersionsRequest(
                client_software_name="kraftwire", client_software_version="1"), 4,
                timeout=s.config.controller_quorum_request_timeout_ms / 1000, client_id=f"kraftwire-{s.node_id}",
                ssl_context=self.controller_tls, sasl=s.controller_sasl)
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            log.info("AddRaftVoter %s: ApiVersions to %s:%d failed: %s", key, ep.host, ep.port,
                     exc or type(exc).__name__)
            return answer(m.REQUEST_TIMED_OUT, f"New voter {key} is not ready to receive requests")
        if versions.error_code:
            return answer(m.REQUEST_TIMED_OUT, "Aborted add voter operation for since API_VERSIONS returned an error "
                                               f"{m.error_name(versions.error_code)}")
        feature = next((f for f in versions.supported_features or () if f.name == "kraft.version"), None)
        supported = (feature.min_version, feature.max_version) if feature is not None else (0, 0)
        driver = self.driver
        if driver is None or driver.stopped or conn.closed:
            return
        cid = next(self._ids)
        self._inbound[cid] = _Entry(conn, wire_cid, wire.ADD_RAFT_VOTER, version, None)
        now = time.perf_counter()
        self.metrics.histogram("voter_change_api_versions_ms", "AddRaftVoter: the ApiVersions call to the new "
                               "voter (Kafka's step 5)").record_ms((now - asked) * 1000)
        self._voter_changes[cid] = now
        driver.received(wire.add_voter_to_core(body, s.node_id, cid, supported))

    async def _forward_voter_change(self, add: bool, request, conn, voter, timeout_s: float) -> None:
        version, wire_cid = request.version, request.header.correlation_id
        try:
            body = await self.forward(voter, request.body, version, timeout_s=timeout_s)
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            log.info("could not forward %s to leader %d: %s", request.api.name, voter.node_id, exc)
            body = wire.voter_change_response(add, m.NOT_LEADER_OR_FOLLOWER)
        conn.send_response(body, version, wire_cid)

    async def forward(self, voter, body, version: int, *, timeout_s: float | None = None):
        """``body`` sent to ``voter``'s controller listener (TLS and SASL as the quorum's own connections), marked as
        forwarded so that the receiver never forwards it again; its answer. Raises what the connection raises."""
        s = self.settings
        if self.forward_links is None:
            self.forward_links = ForwardLinks(FORWARD_CLIENT_ID, self.controller_tls, s.controller_sasl)
        return await self.forward_links.request(
            voter.host, voter.port, body, version,
            timeout_s=timeout_s or s.config.controller_quorum_request_timeout_ms / 1000)

    async def _forward_describe_quorum(self, request, conn, voter) -> None:
        version, wire_cid = request.version, request.header.correlation_id
        try:
            body = await self.forward(voter, request.body, version)
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            log.info("could not forward DescribeQuorum to leader %d: %s", voter.node_id, exc)
            R = w.DescribeQuorumResponse
            body = R(error_code=0, topics=[R.TopicData(topic_name=t.topic_name, partitions=[R.PartitionData(
                partition_index=0, error_code=m.NOT_LEADER_OR_FOLLOWER, leader_id=voter.node_id,
                leader_epoch=self.raft.epoch if self.raft else -1, high_watermark=-1)])
                for t in request.body.topics])
        conn.send_response(body, version, wire_cid)

    def _describe_cluster(self, request, conn) -> None:
        assert self.raft is not None
        R = w.DescribeClusterResponse
        leader = self.raft.quorum.leader_id
        body = R(error_code=0, cluster_id=self.cluster_id, endpoint_type=getattr(request.body, "endpoint_type", 1),
                 controller_id=leader,
                 brokers=[R.DescribeClusterBroker(broker_id=i, host=h, port=p)
                          for i, h, p in self.roles.serving_brokers(getattr(conn, "listener", None))])
        conn.send_response(body, request.version, request.header.correlation_id)

    def _metadata(self, request, conn) -> None:
        """Enough Metadata for admin clients to bootstrap: the voters as brokers, the leader as controller."""
        assert self.raft is not None
        R = w.MetadataResponse
        body = R(brokers=[R.MetadataResponseBroker(node_id=i, host=h, port=p) for i, h, p in
                          self.roles.serving_brokers(getattr(conn, "listener", None))],
                 cluster_id=self.cluster_id, controller_id=self.raft.quorum.leader_id, topics=[])
        conn.send_response(body, request.version, request.header.correlation_id)
