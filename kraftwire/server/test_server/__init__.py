"""The test server's client-facing Kafka APIs: the quorum's log served as one topic (one partition), with what real
Kafka clients need. A KRaft node (``server-start``) serves ``kraft_apis`` instead.

* ``metadata.py``  — Metadata: the voters' endpoints as brokers, the Raft leader as partition leader
* ``produce.py``   — Produce (acks 0 / 1 / -1) through the core's raw-batch append; idempotence checks
* ``fetch.py``     — consumer Fetch (long polling, up to this node's high watermark) and ListOffsets
* ``producers.py`` — InitProducerId and the producer-state table rebuilt from data-batch headers
* ``groups.py``    — FindCoordinator, the classic group protocol and the group admin APIs: the leader runs the
  same pure group coordinator as a KRaft broker, with the Raft log as its partition
* ``configs.py``   — DescribeConfigs for this node and the topic (kafka-configs.sh --describe), read-only
* ``scan.py``      — one pass over the log feeding the state rebuilt from it (producers, the groups' shard)

``server.RaftTestServer`` is the node; its ``register_client_apis(node)`` runs when the node is built (before ``start()``); the handlers attach to the core and
the driver on first use. Fetch (api key 1) is shared with Raft replication: the node routes a Fetch with replica
id -1 (or a version without topic ids) to ``node.broker_fetch``, i.e. here.
"""
