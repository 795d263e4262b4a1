"""The group coordinator of one ``__consumer_offsets`` partition, pure (``shard.GroupShard``).

A broker that leads partition N of ``__consumer_offsets`` loads a shard by replaying the partition, then serves the
groups whose id hashes to N. Requests and timers become records (Kafka's ``OffsetCommit`` and ``GroupMetadata``
keys and values) and replies; the edge appends the records and sends the replies once the records are committed.
"""
