"""The raft test server as a node: the KRaft node's ``Node`` with its log served to clients as a topic (the seeds'
workload, ``kraftwire test-server``). It plugs the test server's client APIs (``register_client_apis``) and its
legacy broker lifecycle (``roles.LegacyRoles``) into the node's hook; the node never imports this package."""

from __future__ import annotations

import socket

from kraftwire.protocol import served
from kraftwire.replica.produce_answer import TOPIC_IDS_SINCE
from kraftwire.server.node.app import PERFORMANCE_TEST_TOPIC, Node
from kraftwire.server.node.settings import NodeSettings
from kraftwire.server.test_server import configs, fetch, groups, metadata, produce, producers, scan
from kraftwire.server.test_server.context import BrokerContext
from kraftwire.server.test_server.roles import LegacyRoles


def register_client_apis(node) -> BrokerContext:
    """Register every client API on ``node.dispatcher``; call before ``node.start()`` (the handlers attach to the
    core and the driver on first use)."""
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
    # the served topic has no id a client could name: Produce stops below v13 (topics by id)
    d.serve("Produce", attached(produce.Produce(ctx, states).handle), max_version=TOPIC_IDS_SINCE - 1)
    d.serve("ListOffsets", attached(fetch.ListOffsets(ctx).handle))
    ctx.groups = groups.register(ctx, d, log_scan, attached)
    d.serve("DescribeConfigs", attached(configs.DescribeConfigs(ctx).handle))
    d.serve("InitProducerId", attached(producers.InitProducerId(ctx, states).handle))
    node.broker = ctx
    return ctx


class RaftTestServer(Node):
    def __init__(self, settings: NodeSettings, *, listen_sockets: dict[str, socket.socket] | None = None,
                 topic: str = PERFORMANCE_TEST_TOPIC, listeners=()) -> None:
        super().__init__(settings, listen_sockets=listen_sockets, topic=topic, listeners=listeners)

    def _serve_log_as_topic(self) -> None:
        register_client_apis(self)  # the log as a client topic (issue 7)
        self.roles = LegacyRoles(self)  # process.roles, listeners, the legacy lifecycle (issue 9)
