"""The state gauges of a KRaft node's metrics endpoint, set from the node before every collection (on the event
loop's thread): the Raft core's state, epoch, offsets and flushes, and Kafka's FetchSessionCache gauges."""

from __future__ import annotations

from kraftwire.server.runtime.clocks import monotonic_ms


def refresh(node) -> None:
    """The state gauges, set from the node before every collection (on the event loop's thread)."""
    reg = node.metrics
    if node.raft is not None and node.log is not None:
        for name in ("Unattached", "Prospective", "Candidate", "Voted", "Follower", "Leader", "Resigned"):
            reg.set("raft_state", 1.0 if node.raft.state_name == name else 0.0, "current Raft state", state=name)
        reg.set("raft_epoch", node.raft.epoch, "current epoch")
        reg.set("raft_leader_id", node.raft.quorum.leader_id, "current leader id (-1: unknown)")
        reg.set("raft_high_watermark", node.log.high_watermark(), "high watermark")
        reg.set("raft_log_end_offset", node.log.end_offset(), "log end offset")
        reg.set("raft_log_start_offset", node.log.start_offset(), "log start offset")
        if node.driver is not None:
            reg.set("raft_flushes", node.driver.flushes, "log flushes (fsync) completed")
            reg.set("raft_flushes_inline", node.driver.flushes_inline,
                    "log flushes run on the event loop thread (the disk was quick)")
            reg.set("raft_flush_ms_average", round(node.driver.flush_ms_average, 3),
                    "moving average of a log flush in milliseconds")
        for key, value in node.raft.counters.items():
            reg.set("raft_core_events", value, "Raft core counters", event=key)
    if node.partition_apis is not None:  # Kafka's FetchSessionCache gauges and eviction count
        sessions = node.partition_apis.sessions
        reg.set("fetch_sessions", sessions.size, "incremental fetch sessions kept (NumIncrementalFetchSessions)")
        reg.set("fetch_session_partitions", sessions.total_partitions,
                "partitions in the fetch sessions (NumIncrementalFetchPartitionsCached)")
        reg.set("fetch_session_evictions", sessions.evictions, "fetch sessions evicted")
    if node.partition_apis is not None and node.replicas is not None:  # replication throttles (KIP-73)
        now = monotonic_ms()
        for direction, quota in (("leader", node.partition_apis.replication), ("follower",
                                                                             node.replicas.fetchers.replication)):
            reg.set("replication_throttled_bytes", quota.total_bytes,
                    "bytes of throttled replicas sent (leader) or received (follower)", direction=direction)
            reg.set("replication_throttled_byte_rate", round(quota.rate.measure(now), 1),
                    "throttled replication bytes per second (Kafka's LeaderReplication/FollowerReplication byte-rate)",
                    direction=direction)
            reg.set("replication_throttled_reads_held_back", quota.held_back,
                    "reads of a throttled partition held back while over its rate", direction=direction)
