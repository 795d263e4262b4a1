"""The node's assembly: ``settings`` (Kafka properties → ``NodeSettings``), ``app`` (``Node``: log, quorum-state,
core, driver, peers, listeners, metrics, graceful shutdown) and ``roles`` (listeners and the broker role)."""
