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

``register_client_apis(node)`` runs when the node is built (before ``start()``); the handlers attach to the core and
the driver on first use. Fetch (api key 1) is shared with Raft replication: the node routes a Fetch with replica
id -1 (or a version without topic ids) to ``node.broker_fetch``, i.e. here.
"""

from __future__ import annotations

from kraftwire.protocol import served
from kraftwire.server.broker.context import BrokerContext


def register_client_apis(node) -> BrokerContext:
    """Register every client API on ``node.dispatcher``; call before ``node.start()`` (the handlers attach to the
    core and the driver on first use)."""
    from kraftwire.server.broker import configs, fetch, groups, metadata, produce, producers, scan

    ctx = BrokerContext(node)
    d = node.dispatcher
    log_scan = scan.LogScan(ctx)
    node.raft_listeners.append(scan.StateImage(ctx))  # broker state in the snapshots
    states = producers.ProducerStates(ctx, log_scan)

    def attached(fn):
        def handler(request, conn) -> None:
            if not ctx.attach():
                conn.close()  # the node is not started (or already stopped)
                return
            fn(request, conn)
        return handler

    node.broker_fetch = (served.versions("Fetch")[0], attached(fetch.ConsumerFetch(ctx).handle))
    d.serve("Metadata", attached(metadata.Metadata(ctx).handle))
    d.serve("Produce", attached(produce.Produce(ctx, states).handle))
    d.serve("ListOffsets", attached(fetch.ListOffsets(ctx).handle))
    ctx.groups = groups.register(ctx, d, log_scan, attached)
    d.serve("DescribeConfigs", attached(configs.DescribeConfigs(ctx).handle))
    d.serve("InitProducerId", attached(producers.InitProducerId(ctx, states).handle))
    node.broker = ctx
    return ctx
