"""The node's Raft traffic: the quorum's RPCs in (``_raft_request``) and the core's messages out (``_route``, to
the peers or back to a waiting inbound request), and the voter set the edge follows (KIP-853: from the log,
the dialled endpoints, membership changes). A part of ``app.Node``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from kraftwire.raft import messages as m
from kraftwire.raft.membership import read_log_voters
from kraftwire.raft.voter_set import BEFORE_LOG
from kraftwire.server.edge import wire
from kraftwire.server.node.settings import Voter

log = logging.getLogger("kraftwire.node")


class RaftIO:
    """Raft requests in, responses out, and the voters the peers dial; a part of ``app.Node``."""

    # ================================================================================================================
    # raft requests in, responses out
    # ================================================================================================================
    def _raft_request(self, request, conn) -> None:
        api_key, version = request.api.key, request.version
        cid = next(self._ids)
        try:
            core = wire.request_to_core(api_key, version, request.body, self.settings.node_id, cid, self.topic)
        except wire.WireError as exc:
            log.warning("bad %s request from %s: %s", request.api.name, conn.peer, exc)
            body = request.api.response()
            if hasattr(body, "error_code"):
                body.error_code = exc.error
            conn.send_response(body, version, request.header.correlation_id)
            return
        self._inbound[cid] = (conn, request.header.correlation_id, api_key, version)
        assert self.driver is not None
        self.driver.received(core)

    def _deliver_response(self, response: m.Message) -> None:
        """A response from a peer, to the core (counting and logging refusals on the way)."""
        assert self.driver is not None
        if isinstance(response, m.Response) and response.error != m.NONE:
            self.metrics.inc("raft_response_errors_total", api=type(response).__name__.replace("Response", ""),
                             error=m.error_name(response.error), direction="received")
            if response.error == m.INCONSISTENT_CLUSTER_ID:
                kind = type(response).__name__.replace("Response", "Request")
                self._cluster_id_log("received", response.src, kind)(
                    "node %d refused our %s: its cluster id differs from ours (%s); check meta.properties",
                    response.src, kind, self.cluster_id)
        self.driver.received(response)

    def _cluster_id_log(self, direction: str, node: int, kind: str):
        """``log.warning`` for the first cluster-id refusal of ``kind`` to or from ``node``, ``log.debug`` after."""
        key = (direction, node, kind)
        if key in self._cluster_id_warned:
            return log.debug
        self._cluster_id_warned.add(key)
        return log.warning

    def _route(self, msg: m.Message) -> None:
        if m.is_request(msg):
            assert self.peers is not None
            self.peers.send(msg)
            return
        entry = self._inbound.pop(msg.correlation_id, None)
        started = self._voter_changes.pop(msg.correlation_id, None)
        if started is not None and msg.error == m.NONE:
            self.metrics.histogram("voter_change_commit_ms", "Add/RemoveRaftVoter: from the leader's core taking the "
                                   "change to its VotersRecord committed", api=type(msg).__name__[:-8]).record_ms(
                (time.perf_counter() - started) * 1000)
        if entry is None:
            return  # the asking connection is gone
        conn, wire_cid, api_key, version = entry
        if isinstance(msg, m.Response) and msg.error != m.NONE:
            self.metrics.inc("raft_response_errors_total", api=type(msg).__name__.replace("Response", ""),
                             error=m.error_name(msg.error), direction="sent")
        if isinstance(msg, m.Response) and msg.error == m.INCONSISTENT_CLUSTER_ID:
            kind = type(msg).__name__.replace("Response", "Request")
            self._cluster_id_log("sent", msg.dst, kind)(
                "refused a %s from %s (node %d): its cluster id differs from ours (%s)", kind, conn.peer, msg.dst,
                self.cluster_id)
            self.metrics.inc("inconsistent_cluster_id_total")
        if isinstance(msg, m.DescribeQuorumResponse):
            body = wire.describe_quorum_to_wire(msg, self.topic, self._voter_endpoints())
            self._name_topic(body, entry)
        else:
            leader = self._leader_endpoint(msg.leader_id) if isinstance(msg, m.Response) else None
            body = wire.with_leader_endpoint(wire.response_to_wire(msg, self.topic, leader_endpoint=leader), msg,
                                             version, leader)
        conn.send_response(body, version, wire_cid)

    def _leader_endpoint(self, leader_id: int) -> tuple[str, int] | None:
        """Where leader ``leader_id`` listens on the controller listener: where it said (BeginQuorumEpoch) when this
        node follows it, else its voter set entry; None when unknown."""
        told = self.raft.leader_endpoints() if self.raft is not None else None
        if told is not None and told[0] == leader_id:
            _, endpoints = told
            ep = next((e for e in endpoints if e[0] == self.settings.controller_listener), endpoints[0])
            return ep[1], ep[2]
        leader = self.settings.voter(leader_id)
        return (leader.host, leader.port) if leader is not None else None

    def _connection_closed(self, conn) -> None:
        for cid in [c for c, e in self._inbound.items() if e[0] is conn]:
            self._inbound.pop(cid, None)

    def _voters_from_log(self):
        """(kraft.version, VotersRecord, voters) of the newest voter set the metadata log names, or None (static
        voters, or a node still to be added that has fetched nothing yet). KIP-853: ``storage format
        --standalone``/``--initial-controllers`` wrote the set into the bootstrap checkpoint, kraft.version 1
        snapshots carry it on, and every AddRaftVoter/RemoveRaftVoter (and a leader's first epoch) appends a
        VotersRecord to the log: the newest snapshot naming one, then the log's records after it. The core follows
        the log from there (an uncommitted record truncated away takes the set back)."""
        kraft_version, history = read_log_voters(self.log)
        if history is None:
            return None
        voter_set, offset = history.last(), history.last_offset()
        if offset == BEFORE_LOG:
            where = "the bootstrap checkpoint"
        elif not history.entries:
            where = f"snapshot ending at offset {offset + 1}"
        else:
            where = f"the log at offset {offset}"
        voters = self._voters_of(voter_set)
        log.info("node %d: voters %s from %s (kraft.version %d)", self.settings.node_id,
                 ",".join(f"{v.node_id}@{v.host}:{v.port}" for v in voters), where, max(kraft_version, 1))
        return max(kraft_version, 1), voter_set.to_record(), voters

    def _voters_of(self, voter_set) -> tuple[Voter, ...]:
        """Each voter of a KIP-853 set at its endpoint on the controller listener (else its first); a voter the set
        knows no endpoint for keeps the one this node had."""
        listener = self.settings.controller_listener
        out = []
        for n in voter_set.nodes:
            ep = n.endpoint(listener)
            if ep is None:
                known = self.settings.voter(n.id)
                if known is None:
                    continue
                ep = (known.host, known.port)
            out.append(Voter(n.id, ep[0], ep[1]))
        return tuple(out)

    def _check_membership(self) -> None:
        """After each Ready: when the core's voter set may have moved (KIP-853), the voters this node dials (peers),
        forwards to and describes are the set's, at their controller listener."""
        raft = self.raft
        if raft is None or not raft.membership.dynamic:
            return
        if raft.membership.version != self._membership_seen:
            self._membership_seen = raft.membership.version
            voters = self._voters_of(raft.membership.voters())
            if voters and set(voters) != set(self.settings.voters):
                log.info("node %d: the voters are now %s (%s)", self.settings.node_id,
                         ",".join(f"{v.node_id}@{v.host}:{v.port}" for v in voters),
                         raft.membership.voters().describe())
                self.settings = self.roles.settings = replace(self.settings, voters=voters)
        self._dial_leader_where_it_listens(raft)

    def _dial_leader_where_it_listens(self, raft) -> None:
        """The peers dial each voter where the voter set says, except the leader this node follows when it said
        where it listens (BeginQuorumEpoch's LeaderEndpoints, as Kafka's follower does): a leader that moved is
        reached before its UpdateRaftVoter rewrites its entry. A leader the voter set no longer names (it is being
        removed: RemoveRaftVoter of the leader) is still dialed while this node follows it — the leader commits its
        own removal only once the remaining voters fetch past it, then resigns (Kafka's followers keep fetching from
        it too; dropping it left Kafka's leader to time the removal out)."""
        dialed = self.settings.voters
        told = raft.leader_endpoints()
        leader = raft.leader_and_epoch().leader_id
        kept = next((v for v in self._dialed if v.node_id == leader), None)
        if told is not None:
            leader, endpoints = told
            ep = next((e for e in endpoints if e[0] == self.settings.controller_listener), endpoints[0])
            moved = Voter(leader, ep[1], ep[2])
            if moved not in dialed:
                dialed = tuple(moved if v.node_id == leader else v for v in dialed)
                if all(v.node_id != leader for v in dialed):
                    dialed += (moved,)
                if moved not in self._dialed:
                    log.info("node %d: reaching leader %d at %s:%d, where it said it listens (the voter set names "
                             "another address)", self.settings.node_id, leader, moved.host, moved.port)
        elif kept is not None and leader != self.settings.node_id and all(v.node_id != leader for v in dialed):
            dialed += (kept,)
        if dialed == self._dialed:
            return
        self._dialed = dialed
        if self.peers is not None:
            self.peers.update(dialed)
