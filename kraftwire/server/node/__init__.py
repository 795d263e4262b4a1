"""The node's assembly: ``settings`` (Kafka properties → ``NodeSettings``), ``app`` (``Node``: log, quorum-state,
core, driver, peers, listeners, metrics, graceful shutdown; its Raft traffic in ``raft_io``) and the roles
(``roles``: listeners and the broker's registration loop; ``kraft_roles``: the KRaft node's broker states)."""
