"""The transaction coordinator of one ``__transaction_state`` partition, pure (``coordinator.TxnShard``).

Kafka's transaction state machine (KIP-98) as requests + state -> records + replies + marker requests, with
``replay`` folding ``TransactionLog`` records back into state, so a coordinator that takes the partition over knows
every transaction, including those half-way through a commit or an abort (whose markers it sends again).
"""
