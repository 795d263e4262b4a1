"""The share coordinator (KIP-932): the state of every share-partition, kept in ``__share_group_state``
(``shard``: the pure state machine of one partition; ``batches``: how state batches combine; ``hosting``: the
shard kind the coordinator runtime hosts)."""
