"""The API handlers: decode a request, call the pure layer through a runtime, encode the answer; one module per API
family. A KRaft broker's partitions: ``partition_apis`` (over ``produce_apis``, ``fetch_apis``, ``offset_apis``,
``marker_apis``, ``log_dir_apis``, ``producer_ids``); its coordinators: ``group_apis`` (with ``group_offset_apis``),
``txn_apis``, ``txn_broker_apis``; what the active controller decides and a node forwards: ``kraft_apis`` (with
``broker_configs``, the node's own configs and logger levels); every node's quorum APIs: ``quorum_apis``."""
