"""kraftwire's own documentation of Kafka's topic keys: what DescribeConfigs answers with IncludeDocumentation for a
topic (Kafka's prose is not copied; these are our words, and the conformance run compares the field's presence,
not its text: ``tests/conformance/runner.py`` PROSE). One line each, saying what the key does here."""

from __future__ import annotations

TOPIC_DOCS: dict[str, str] = {
    "cleanup.policy": "How old segments go: 'delete' removes them by retention, 'compact' keeps the latest record of "
                      "each key; both may be listed.",
    "compression.gzip.level": "The gzip level used when the topic recompresses batches with gzip.",
    "compression.lz4.level": "The lz4 level used when the topic recompresses batches with lz4.",
    "compression.type": "The codec batches are stored with: 'producer' keeps the producer's, 'uncompressed' or a "
                        "codec name recompresses.",
    "compression.zstd.level": "The zstd level used when the topic recompresses batches with zstd.",
    "delete.retention.ms": "How long a compacted topic keeps tombstones (and transaction markers) readable before "
                           "the cleaner may remove them.",
    "errors.deadletterqueue.group.enable": "Whether share and streams groups may use this topic as their dead letter "
                                           "queue.",
    "file.delete.delay.ms": "How long a segment removed from the log waits before its files are deleted.",
    "flush.messages": "Force an fsync of the log after this many records (the default leaves it to replication "
                      "and the OS).",
    "flush.ms": "Force an fsync of the log when this long has passed since the last one.",
    "follower.replication.throttled.replicas": "The partition:broker replicas whose follower fetches are throttled, "
                                               "or '*' for all.",
    "index.interval.bytes": "How many bytes of records lie between two entries of the offset index.",
    "leader.replication.throttled.replicas": "The partition:broker replicas whose leader side of replication is "
                                             "throttled, or '*' for all.",
    "local.retention.bytes": "With tiered storage, the bytes a partition keeps on local disk (-2: retention.bytes).",
    "local.retention.ms": "With tiered storage, how long segments stay on local disk (-2: retention.ms).",
    "max.compaction.lag.ms": "The longest a record may stay uncompacted once it can be compacted.",
    "max.decompressed.message.bytes": "The largest size a compressed batch may reach once decompressed.",
    "max.message.bytes": "The largest record batch the topic accepts, after compression.",
    "message.timestamp.after.max.ms": "How far in the future a CreateTime timestamp may be, relative to the "
                                      "broker's clock.",
    "message.timestamp.before.max.ms": "How far in the past a CreateTime timestamp may be, relative to the "
                                       "broker's clock.",
    "message.timestamp.type": "Whether records keep the producer's timestamp (CreateTime) or get the broker's "
                              "(LogAppendTime).",
    "min.cleanable.dirty.ratio": "The share of a compacted log that must be uncompacted before the cleaner works "
                                 "on it.",
    "min.compaction.lag.ms": "The shortest time a record stays uncompacted.",
    "min.insync.replicas": "With acks=all, how many in-sync replicas must hold a write before it is acknowledged.",
    "preallocate": "Whether a new segment's file is allocated at its full size up front.",
    "remote.copy.lag.bytes": "With tiered storage, how many bytes of a segment may wait before it is copied to remote "
                             "storage.",
    "remote.copy.lag.ms": "With tiered storage, how long a segment may wait before it is copied to remote storage.",
    "remote.log.copy.disable": "With tiered storage, stop copying new segments to remote storage.",
    "remote.log.delete.on.disable": "With tiered storage, delete the remote segments when it is turned off.",
    "remote.storage.enable": "Keep old segments in remote (tiered) storage; kraftwire has none and refuses true.",
    "retention.bytes": "The largest size a partition may grow to before its oldest segments are deleted (-1: no "
                       "limit).",
    "retention.ms": "How long records are kept before their segment may be deleted (-1: forever).",
    "segment.bytes": "The size at which a partition rolls to a new segment file.",
    "segment.index.bytes": "The size of a segment's offset and time indexes.",
    "segment.jitter.ms": "A random delay subtracted from segment.ms, so partitions do not all roll at once.",
    "segment.ms": "The age, counted from its first record's timestamp, at which a segment is rolled.",
    "unclean.leader.election.enable": "Whether a replica outside the in-sync set may become leader when no in-sync "
                                      "one is left (losing records).",
}
