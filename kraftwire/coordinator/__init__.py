"""The coordinators' pure parts: which internal-topic partition owns a key, the records of ``__consumer_offsets``,
``__transaction_state`` and ``__share_group_state``, and the state machines of the group coordinator (``group/``),
the transaction coordinator (``txn/``) and the share coordinator (``share/``).

Like the Raft core and the controller, nothing here touches the clock, sockets, files or randomness: time and new
ids are passed in, and every change of state is a record that ``replay`` folds, so a shard loaded from its
partition equals the one that wrote it.
"""
