"""Offsets of a KRaft broker's topic partitions.

* **ListOffsets**: -2 earliest (and -4 earliest local) = log start, -1 latest = high watermark (the last stable
  offset for READ_COMMITTED; the log end for a follower), -3 max timestamp, t ≥ 0 the first record at or after t
  (``kraftwire.log.lookup``; one at or past what a client may read is not found: -1); a client (never a follower)
  gets OFFSET_NOT_AVAILABLE while a new leader has not reached its epoch's start with its high watermark
  (``kraftwire.replica.list_offsets``).
* **OffsetForLeaderEpoch** (KIP-320, clients validate their position after a leader change): the partition's end
  offset for the asked epoch from its leader-epoch cache, (-1, -1) when undefined.
"""

from __future__ import annotations

import logging

from kraftwire import error_codes as ec
from kraftwire.errors import KraftwireError
from kraftwire.log import lookup
from kraftwire.protocol import messages as w
from kraftwire.replica import list_offsets as offsets
from kraftwire.security.authorizer import AclOperation as Op

log = logging.getLogger("kraftwire.partitions")


class OffsetApis:
    """ListOffsets and OffsetForLeaderEpoch, a part of ``partition_apis.PartitionApis``."""

    # ------------------------------------------------------------------------------------------------ ListOffsets
    def list_offsets(self, request, conn) -> None:
        R = w.ListOffsetsResponse
        version = request.version
        topics = []
        access = self.node.authorizer
        twice = offsets.duplicate_partitions(request.body.topics)
        isolation = request.body.isolation_level if version >= 2 else 0
        answered, refused = set(), set()
        for t in request.body.topics:
            parts = []
            described = access is None or access.topic(conn, t.name, Op.DESCRIBE)
            if not described:
                refused.add(t.name)
            for p in t.partitions:
                if (t.name, p.partition_index) in answered:
                    continue  # a partition named twice is answered once
                answered.add((t.name, p.partition_index))
                pr = R.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=0, timestamp=-1,
                                                    offset=-1, leader_epoch=-1)
                parts.append(pr)
                if not described:
                    pr.error_code = ec.TOPIC_AUTHORIZATION_FAILED
                elif (t.name, p.partition_index) in twice:
                    pr.error_code = ec.INVALID_REQUEST
                elif not offsets.known_isolation(isolation):
                    pr.error_code = ec.UNKNOWN_SERVER_ERROR
                else:
                    self._list_one(t.name, p, pr, version, request.body.replica_id, isolation)
            topics.append((t.name, parts))
        responses = {(name, pr.partition_index): pr for name, parts in topics for pr in parts}
        topics = [R.ListOffsetsTopicResponse(name=name, partitions=[responses[name, i] for i in indexes])
                  for name, indexes in offsets.in_kafka_order(
                      [(name, [pr.partition_index for pr in parts]) for name, parts in topics], refused.__contains__)]
        conn.send_response(R(throttle_time_ms=0, topics=topics), version, request.header.correlation_id)

    def _list_one(self, name, p, pr, version: int, replica: int, isolation: int = 0) -> None:
        hp = self.replicas.get(name, p.partition_index)
        if hp is None:
            pr.error_code = self._unhosted_error(name, p.partition_index)
            return
        if hp.failed:
            pr.error_code = ec.KAFKA_STORAGE_ERROR
            return
        error = hp.state.epoch_error(p.current_leader_epoch if version >= 4 else -1)
        if error:
            pr.error_code = error
            return
        lg = hp.log
        ts = p.timestamp
        hw, epoch_start = lg.high_watermark(), hp.state.epoch_start_offset
        if ts == offsets.LATEST:
            pr.error_code = offsets.lagging_error(ts, replica, version, epoch_start, hw)
            if pr.error_code:
                return
        pr.leader_epoch = hp.state.leader_epoch
        try:
            fetchable = offsets.last_fetchable_offset(replica, isolation, hw, hp.last_stable_offset, lg.end_offset())
            if ts in (offsets.EARLIEST, offsets.EARLIEST_LOCAL):
                pr.offset = lg.start_offset()
                pr.leader_epoch = lg.epoch_for_offset(pr.offset)
            elif ts == offsets.LATEST:
                pr.offset = fetchable  # a follower asks for the log end, a client for what it may read
            elif ts == offsets.MAX_TIMESTAMP:
                pr.offset, pr.timestamp, pr.leader_epoch = lookup.max_timestamp(lg)
            elif ts in offsets.NOTHING_TIERED and offsets.timestamp_supported(ts, version):
                pr.offset, pr.leader_epoch = -1, -1  # nothing is tiered: there is no remote log
            elif ts >= 0:
                pr.offset, pr.timestamp, pr.leader_epoch = lookup.offset_for_timestamp(lg, ts)
            else:
                pr.error_code, pr.leader_epoch = ec.UNSUPPORTED_VERSION, -1
                return
            if ts == offsets.MAX_TIMESTAMP or ts >= 0:
                pr.error_code = offsets.lagging_error(ts, replica, version, epoch_start, hw, pr.offset, fetchable)
                if pr.error_code or pr.offset >= fetchable:  # not readable yet: not found (Kafka's rule)
                    pr.offset, pr.timestamp, pr.leader_epoch = -1, -1, -1
        except (KraftwireError, OSError) as exc:
            log.warning("ListOffsets on %s-%d: %s", hp.topic, hp.index, exc)
            pr.error_code = ec.KAFKA_STORAGE_ERROR

    # ------------------------------------------------------------------------------------------------ KIP-320
    def offset_for_leader_epoch(self, request, conn) -> None:
        R = w.OffsetForLeaderEpochResponse
        version = request.version
        topics = []
        access = self.node.authorizer
        replica = request.body.replica_id if version >= 3 else -1
        if access is not None and replica >= 0:  # a follower's request needs CLUSTER_ACTION, as its Fetch does
            cluster_ok = access.allows_cluster(conn, Op.CLUSTER_ACTION)
        for t in request.body.topics:
            parts = []
            if access is None:
                allowed = True
            else:
                allowed = cluster_ok if replica >= 0 else access.topic(conn, t.topic, Op.DESCRIBE)
            for p in t.partitions:
                e = R.EpochEndOffset(error_code=0, partition=p.partition, leader_epoch=-1, end_offset=-1)
                parts.append(e)
                if not allowed:
                    e.error_code = ec.TOPIC_AUTHORIZATION_FAILED
                    continue
                hp = self.replicas.get(t.topic, p.partition)
                if hp is None:
                    e.error_code = self._unhosted_error(t.topic, p.partition)
                    continue
                if hp.failed:
                    e.error_code = ec.KAFKA_STORAGE_ERROR
                    continue
                e.error_code = hp.state.epoch_error(p.current_leader_epoch if version >= 2 else -1)
                if e.error_code == ec.NONE:
                    e.leader_epoch, e.end_offset = hp.log.leader_epoch_end(p.leader_epoch)
            topics.append(R.OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
        conn.send_response(R(throttle_time_ms=0, topics=topics), version, request.header.correlation_id)
