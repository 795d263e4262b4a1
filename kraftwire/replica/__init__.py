"""Partition replication on a broker, pure (no I/O): one partition's replica state and the rules a leader applies
(``partition``), and the idempotent producers' state of a partition (``producers``). The asyncio edge that executes
them is ``kraftwire.server.runtime.replicas``."""
