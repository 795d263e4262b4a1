"""The group coordinator's offset APIs on a KRaft broker: OffsetCommit, TxnOffsetCommit (the transactional
offsets and their KIP-890 verification, as ``group_apis`` describes them), OffsetFetch and OffsetDelete. A part of
``group_apis.GroupApis``.
"""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.shard import (TOPIC_IDS_SINCE, TXN_TOPIC_IDS_SINCE, fetch_requests,
                                               offset_fetch_response, refused_first)
from kraftwire.coordinator.partitioning import GROUP_TOPIC
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.runtime.clocks import wall_ms as _now_ms


def _txn_commit_code(code: int, version: int) -> int:
    """Kafka answers COORDINATOR_LOAD_IN_PROGRESS to TxnOffsetCommit v0-1 as COORDINATOR_NOT_AVAILABLE (clients
    before 2.0 could not handle it, KAFKA-7296)."""
    return ec.COORDINATOR_NOT_AVAILABLE if version < 2 and code == ec.COORDINATOR_LOAD_IN_PROGRESS else code


class GroupOffsetApis:
    """OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete; a part of ``group_apis.GroupApis``."""

    def _topic_keys(self, topics, version: int, by_id_since: int = TOPIC_IDS_SINCE) -> tuple[list, dict]:
        """The request's ``topics`` as keys to answer by: their names, or from ``by_id_since`` (by id) the name of
        each id the image knows and the id itself for one it does not; with {key: topic id} to answer by id with."""
        if version < by_id_since:
            return [t.name for t in topics], {}
        known = self.md.image.topics
        keys = [known[t.topic_id].name if t.topic_id in known else t.topic_id for t in topics]
        return keys, {k: t.topic_id for k, t in zip(keys, topics)}

    def offset_commit(self, request, conn) -> None:
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id, request.header.client_id)
        R = w.OffsetCommitResponse
        image = self.md.image
        refused: dict[tuple, int] = {}
        kept = []
        access = self.node.authorizer
        group_ok = self._may(conn, 0, body.group_id, Op.READ)
        names, ids = self._topic_keys(body.topics, version)
        for name, t in zip(names, body.topics):
            known = isinstance(name, str)
            topic = image.topic(name) if known else None
            parts = []
            topic_ok = known and (access is None or access.topic(conn, name, Op.READ))
            for part in t.partitions:
                if not group_ok:
                    refused[(name, part.partition_index)] = ec.GROUP_AUTHORIZATION_FAILED
                elif not known:
                    refused[(name, part.partition_index)] = ec.UNKNOWN_TOPIC_ID
                elif not topic_ok:
                    refused[(name, part.partition_index)] = ec.TOPIC_AUTHORIZATION_FAILED
                elif topic is None or part.partition_index not in topic.partitions:
                    refused[(name, part.partition_index)] = ec.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    parts.append(part)
            if parts:
                kept.append(type(t)(name=name, partitions=parts))
        p, shard = self._route(body.group_id)
        order = [(name, [part.partition_index for part in t.partitions]) for name, t in zip(names, body.topics)]
        if group_ok:
            order = refused_first(order, refused)

        def merged(codes: dict[tuple, int]):
            return R(throttle_time_ms=0, topics=[R.OffsetCommitResponseTopic(
                name=name if isinstance(name, str) else "", topic_id=ids.get(name), partitions=[
                R.OffsetCommitResponsePartition(partition_index=i, error_code=codes.get((name, i), 0))
                for i in idx]) for name, idx in order])

        if not group_ok:
            self._reply(token, merged(refused))
            return
        if shard is None:
            self._reply(token, merged({k: self.route_error for name, idx in order for k in
                                      ((name, i) for i in idx)}))
            return
        original = body.topics
        body.topics = kept
        try:
            result = shard.offset_commit(body, version, token, _now_ms())
        finally:
            body.topics = original
        reply = result.replies[-1]
        codes = dict(refused)
        for t in reply.body.topics:
            for part in t.partitions:
                codes[(t.name, part.partition_index)] = part.error_code
        full = merged(codes)
        result.replies[-1] = reply._replace(body=full)
        self._write(p, result)

    def txn_offset_commit(self, request, conn, verified=None, verified_on=None) -> None:
        """TxnOffsetCommit (Kafka: WRITE on the transactional id, READ on the group and on each topic).
        ``verified``: the transaction verification's outcome (``txn_verifier.Verified``) once the producer's
        transaction coordinator answered, for the partition ``verified_on`` (KIP-890: the group's
        ``__consumer_offsets`` partition must be in the producer's ongoing transaction, added by AddOffsetsToTxn)."""
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id, request.header.client_id)
        R = w.TxnOffsetCommitResponse
        names, ids = self._topic_keys(body.topics, version, TXN_TOPIC_IDS_SINCE)
        order = [(name, [part.partition_index for part in t.partitions]) for name, t in zip(names, body.topics)]
        answered = order  # the topics' order in the answer: the request's, until refusals come first

        def merged(codes: dict[tuple, int], default: int = 0):
            return R(throttle_time_ms=0, topics=[R.TxnOffsetCommitResponseTopic(
                name=name if isinstance(name, str) else "", topic_id=ids.get(name), partitions=[
                    R.TxnOffsetCommitResponsePartition(partition_index=i, error_code=_txn_commit_code(
                        codes.get((name, i), default), version)) for i in idx]) for name, idx in answered])

        access = self.node.authorizer
        if access is not None and not access.allows(conn, ResourceType.TRANSACTIONAL_ID, body.transactional_id,
                                                    Op.WRITE):
            self._reply(token, merged({}, ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
            return
        if not self._may(conn, 0, body.group_id, Op.READ):
            self._reply(token, merged({}, ec.GROUP_AUTHORIZATION_FAILED))
            return
        image = self.md.image
        refused: dict[tuple, int] = {}
        kept = []
        for name, t in zip(names, body.topics):
            known = isinstance(name, str)
            topic = image.topic(name) if known else None
            topic_ok = known and (access is None or access.topic(conn, name, Op.READ))
            parts = []
            for part in t.partitions:
                if not known:
                    refused[(name, part.partition_index)] = ec.UNKNOWN_TOPIC_ID
                elif not topic_ok:
                    refused[(name, part.partition_index)] = ec.TOPIC_AUTHORIZATION_FAILED
                elif topic is None or part.partition_index not in topic.partitions:
                    refused[(name, part.partition_index)] = ec.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    parts.append(part)
            if parts:
                kept.append(type(t)(name=name, partitions=parts))
        answered = refused_first(order, refused)  # Kafka's response builder, as OffsetCommit's
        p, shard = self._route(body.group_id)
        if shard is None:
            self._reply(token, merged(refused, self.route_error))
            return
        writer = self.shards[p].writer
        hp = writer.hp
        if verified is None and kept:  # KIP-890: the transaction coordinator confirms the partition first
            pid, epoch = body.producer_id, body.producer_epoch
            verified = self.replicas.verifier.txn_offset_commit(
                body.transactional_id, pid, epoch, hp, writer.next_sequence(pid, epoch), version,
                lambda v: self.txn_offset_commit(request, conn, v, hp))
            if verified is None:
                return  # runs again with the coordinator's answer
            verified_on = hp
        guard = None
        if verified is not None:
            if verified_on is not hp:  # the partition's leadership moved meanwhile: its verification is gone
                self._reply(token, merged(refused, ec.NOT_COORDINATOR))
                return
            error = verified.errors.get((GROUP_TOPIC, p))
            if error is not None:
                self._reply(token, merged(refused, error[0]))
                return
            guard = verified.guards.get((GROUP_TOPIC, p))
        original = body.topics
        body.topics = kept
        try:
            result = shard.txn_offset_commit(body, version, token, _now_ms())
        finally:
            body.topics = original
        reply = result.replies[-1]
        codes = dict(refused)
        for t in reply.body.topics:
            for part in t.partitions:
                codes[(t.name, part.partition_index)] = part.error_code
        result.replies[-1] = reply._replace(body=merged(codes))
        self._write(p, result, producer=(body.producer_id, body.producer_epoch), guard=guard)

    def offset_fetch(self, request, conn) -> None:
        out = []
        access = self.node.authorizer
        # v7+: a partition a transaction still holds an offset for answers UNSTABLE_OFFSET_COMMIT, as Kafka does
        stable = request.version >= 7 and request.body.require_stable
        by_id = request.version >= TOPIC_IDS_SINCE
        topic_ids: dict = {}  # v10: topic (name, or an id the image does not know) -> the id it is answered by
        for g, (gid, member_id, member_epoch, asked) in enumerate(fetch_requests(request.body, request.version)):
            if not self._may(conn, 0, gid, Op.DESCRIBE):
                out.append((gid, ec.GROUP_AUTHORIZATION_FAILED, []))
                continue
            unknown = []  # v10: the ids the image does not know, each partition UNKNOWN_TOPIC_ID after the others
            if by_id and asked is not None:
                keys, ids = self._topic_keys(request.body.groups[g].topics, request.version)
                topic_ids.update(ids)
                unknown = [(k, [(i, None, ec.UNKNOWN_TOPIC_ID) for i in idx])
                           for k, (_, idx) in zip(keys, asked) if not isinstance(k, str)]
                asked = [(k, idx) for k, (_, idx) in zip(keys, asked) if isinstance(k, str)]
            hidden = []  # the topics asked for that the principal may not describe: after the others, each of
            # their partitions TOPIC_AUTHORIZATION_FAILED (Kafka's KafkaApis.fetchOffsetsForGroup)
            if access is not None and asked is not None:
                allowed = [access.topic(conn, n, Op.DESCRIBE) for n, _ in asked]
                hidden = [(n, [(i, None, ec.TOPIC_AUTHORIZATION_FAILED) for i in idx])
                          for (n, idx), ok in zip(asked, allowed) if not ok]
                asked = [topic for topic, ok in zip(asked, allowed) if ok]
            _p, shard = self._route(gid)
            if shard is None:
                out.append((gid, self.route_error, [(n, [(i, None) for i in idx]) for n, idx in (asked or [])]))
                continue
            err = shard.fetch_error(gid, member_id, member_epoch)
            found = [] if err else shard.committed_offsets(gid, asked)
            if access is not None and asked is None:  # all of the group's topics: only those it may describe
                found = [(n, parts) for n, parts in found if access.topic(conn, n, Op.DESCRIBE, log_denied=False)]
            if by_id and asked is None:  # all of them by id: those the image still knows
                lookup = self.md.image.topic
                found = [(n, parts) for n, parts in found if lookup(n) is not None]
                topic_ids.update((n, lookup(n).id) for n, _ in found)
            if stable and shard.txn_offsets:
                found = [(n, [(i, None, ec.UNSTABLE_OFFSET_COMMIT) if shard.pending_txn_offset(gid, (n, i)) else (i, e)
                              for i, e in parts]) for n, parts in found]
            out.append((gid, err, found if err else found + hidden + unknown))
        conn.send_response(offset_fetch_response(request.version, out, topic_ids), request.version,
                           request.header.correlation_id)

    def offset_delete(self, request, conn) -> None:
        R = w.OffsetDeleteResponse
        body = request.body
        token = (conn, request.version, request.header.correlation_id, request.header.client_id)
        if not self._may(conn, 0, body.group_id, Op.DELETE):
            self._reply(token, R(error_code=ec.GROUP_AUTHORIZATION_FAILED, throttle_time_ms=0, topics=[]))
            return
        p, shard = self._route(body.group_id)
        if shard is None:
            self._reply(token, R(error_code=self.route_error, throttle_time_ms=0, topics=[]))
            return
        image = self.md.image
        access = self.node.authorizer
        # a topic the principal may not read keeps its offsets (Kafka answers it TOPIC_AUTHORIZATION_FAILED)
        unreadable = frozenset(t.name for t in body.topics
                               if access is not None and not access.topic(conn, t.name, Op.READ))
        known = [(t.name, part.partition_index) for t in body.topics for part in t.partitions
                 if image.topic(t.name) is not None and part.partition_index in image.topic(t.name).partitions
                 and t.name not in unreadable]
        self._write(p, shard.offset_delete(body, known, token, unreadable))
