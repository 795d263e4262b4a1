"""Log start and log directories of a KRaft broker's topic partitions.

* **DeleteRecords** (``kafka-delete-records.sh``, ``AdminClient.delete_records``): on the leader, the log start moves
  to the offset (-1: the high watermark); an offset past the high watermark or negative is OFFSET_OUT_OF_RANGE, a
  topic whose cleanup.policy lacks ``delete`` POLICY_VIOLATION. The answer's low watermark is the leader's new log
  start (Kafka waits for every live replica's; followers move theirs on their next fetch). Segments wholly below it
  go at once; the rest of a segment stays unreadable.
* **DescribeLogDirs** (``kafka-log-dirs.sh``): each log directory of this broker with the partitions it holds
  (all, or the topics and partitions asked), their sizes, offset lag 0, a future replica (a move under way) with
  ``is_future_key`` and how far its log end is behind, and the file system's total and usable bytes (v4); an
  offline directory answers KAFKA_STORAGE_ERROR.
* **AlterReplicaLogDirs** (``kafka-reassign-partitions.sh`` with ``log_dirs``): moves partitions between this
  broker's log directories (``kraftwire.replica.log_dir_moves``).
"""

from __future__ import annotations

import os

from kraftwire import error_codes as ec
from kraftwire.java_order import topics_in_hashmap_order, topics_in_scala_groupby_order
from kraftwire.protocol import messages as w
from kraftwire.replica.log_dir_moves import future_offset_lag
from kraftwire.replica.partition import LEADER
from kraftwire.security.authorizer import AclOperation as Op


class LogDirApis:
    """DeleteRecords, AlterReplicaLogDirs and DescribeLogDirs, a part of ``partition_apis.PartitionApis``."""

    # ------------------------------------------------------------------------------------------------ DeleteRecords
    def delete_records(self, request, conn) -> None:
        R = w.DeleteRecordsResponse
        outcome: dict[tuple[str, int], tuple[int, int]] = {}
        access = self.node.authorizer
        for t in request.body.topics:
            deletable = access is None or access.topic(conn, t.name, Op.DELETE)
            for p in t.partitions:
                if not deletable:
                    outcome[(t.name, p.partition_index)] = ec.TOPIC_AUTHORIZATION_FAILED, -1
                else:
                    outcome[(t.name, p.partition_index)] = self._delete_one(t.name, p.partition_index, p.offset)
        # Kafka answers from hash maps: topics and partitions in their iteration order (java_order)
        topics = [R.DeleteRecordsTopicResult(name=name, partitions=[R.DeleteRecordsPartitionResult(
            partition_index=index, error_code=outcome[(name, index)][0], low_watermark=outcome[(name, index)][1])
            for index in indexes]) for name, indexes in topics_in_hashmap_order(outcome)]
        conn.send_response(R(throttle_time_ms=0, topics=topics), request.version, request.header.correlation_id)

    def _delete_one(self, name: str, index: int, offset: int) -> tuple[int, int]:
        hp = self.replicas.get(name, index)
        if hp is None:
            return self._unhosted_error(name, index), -1
        if hp.failed:
            return ec.KAFKA_STORAGE_ERROR, -1
        if hp.state.role != LEADER:
            return ec.NOT_LEADER_OR_FOLLOWER, -1
        error = self.replicas.delete_records(hp, offset)
        return error, -1 if error else hp.log.start_offset()  # Kafka: no low watermark with an error

    # ------------------------------------------------------------------------------------------------ AlterReplicaLogDirs
    def alter_replica_log_dirs(self, request, conn) -> None:
        """Move partitions between this broker's log directories (``replica.log_dir_moves`` answers and decides,
        ``runtime.log_dir_moves`` copies and swaps). A partition named under two paths goes to the last, as Kafka's
        map of them keeps it; without ALTER on the cluster every partition named answers CLUSTER_AUTHORIZATION_FAILED."""
        R = w.AlterReplicaLogDirsResponse
        wanted: dict[tuple[str, int], str] = {}
        for d in request.body.dirs:
            for t in d.topics:
                for index in t.partitions:
                    wanted[(t.name, index)] = d.path
        access = self.node.authorizer
        if access is not None and not access.allows_cluster(conn, Op.ALTER):
            # Kafka's error response: one result per topic entry of each path, as the request lists them
            results = [R.AlterReplicaLogDirTopicResult(topic_name=t.name, partitions=[
                R.AlterReplicaLogDirPartitionResult(partition_index=index, error_code=ec.CLUSTER_AUTHORIZATION_FAILED)
                for index in t.partitions]) for d in request.body.dirs for t in d.topics]
        else:
            outcome = self.replicas.alter_log_dirs(wanted, self.md.image)
            # Kafka groups the answers with Scala's groupBy: topics and partitions in its maps' order (java_order)
            results = [R.AlterReplicaLogDirTopicResult(topic_name=name, partitions=[
                R.AlterReplicaLogDirPartitionResult(partition_index=index, error_code=outcome[(name, index)])
                for index in indexes]) for name, indexes in topics_in_scala_groupby_order(outcome)]
        conn.send_response(R(throttle_time_ms=0, results=results), request.version, request.header.correlation_id)

    # ------------------------------------------------------------------------------------------------ DescribeLogDirs
    def describe_log_dirs(self, request, conn) -> None:
        R = w.DescribeLogDirsResponse
        asked = None
        if request.body.topics is not None:
            asked = {(t.topic, p) for t in request.body.topics for p in t.partitions}
        results = []
        for root in self.replicas.roots:
            offline = root in self.replicas.offline_roots
            by_topic: dict[str, list] = {}
            if not offline:
                for (name, index), hp in sorted(self.replicas.partitions.items()):
                    if asked is not None and (name, index) not in asked:
                        continue
                    if hp.root == root:
                        by_topic.setdefault(name, []).append(R.DescribeLogDirsPartition(
                            partition_index=index, partition_size=hp.log.size_in_bytes(), offset_lag=0,
                            is_future_key=False))
                    move = self.replicas.future_of(hp)
                    if move is not None and move.root == root:
                        by_topic.setdefault(name, []).append(R.DescribeLogDirsPartition(
                            partition_index=index, partition_size=move.log.size_in_bytes(),
                            offset_lag=future_offset_lag(hp.log.end_offset(), move.log.end_offset()),
                            is_future_key=True))
            total = usable = -1
            if not offline:
                try:
                    st = os.statvfs(root)
                    total, usable = st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize
                except OSError:
                    pass
            results.append(R.DescribeLogDirsResult(
                error_code=ec.KAFKA_STORAGE_ERROR if offline else ec.NONE, log_dir=root,
                topics=[R.DescribeLogDirsTopic(name=n, partitions=ps) for n, ps in by_topic.items()],
                total_bytes=total, usable_bytes=usable))
        conn.send_response(R(throttle_time_ms=0, error_code=ec.NONE, results=results), request.version,
                           request.header.correlation_id)
