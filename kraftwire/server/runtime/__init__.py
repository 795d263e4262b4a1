"""The runtimes that execute the pure layers' decisions: the Raft driver (``driver``), the metadata node
(``metadata_node``), the hosted topic partitions (``replicas``, ``hosted``, ``log_dirs``, ``partition_runtime``,
``partition_cleaning``, ``fetcher``), the coordinator runtime (``coordinator_runtime``, ``coordinator_log``,
``txn_markers``, ``txn_verifier``), the waits (``purgatory``, ``waits``) and the clocks (``clocks``)."""
