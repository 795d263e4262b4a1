"""The test server's roles: the legacy broker lifecycle (``lifecycle``: registrations and states as kraftwire control
records, folded into a registry that shares the broker APIs' snapshot image; progress as the high watermark),
plugged into the node's ``Roles``."""

from __future__ import annotations

from kraftwire.protocol import messages as w
from kraftwire.server.node.roles import Roles
from kraftwire.server.test_server import lifecycle as lc


class LegacyRoles(Roles):
    """The test server's broker states: folded from kraftwire's control records (``lifecycle``)."""

    def _install(self) -> None:
        """The legacy lifecycle (the test server): registrations and states as kraftwire control records, folded
        into a registry that shares the broker APIs' snapshot image."""
        node = self.node
        self.scan = lc.RegistryScan()
        self.controller = lc.Controller(self) if self.settings.is_controller else None
        listeners = node.raft_listeners
        for i, listener in enumerate(listeners):
            if hasattr(listener, "snapshot_records"):
                listeners[i] = lc.ImageListener(listener, node)
                break
        else:
            listeners.append(lc.ImageListener(None, node))
        if self.controller is not None:
            node.dispatcher.serve("BrokerRegistration", self._guard(self.controller.registration))
            node.dispatcher.serve("BrokerHeartbeat", self._guard(self.controller.heartbeat))

    def _guard(self, fn):
        def handler(request, conn) -> None:
            if self.node.driver is None or self.node.log is None:
                conn.close()
                return
            self.catch_up()
            fn(request, conn)
        return handler

    @property
    def registry(self) -> lc.BrokerRegistry:
        return self.scan.registry

    def catch_up(self) -> None:
        if self.node.log is not None:
            self.scan.catch_up(self.node.log)

    def serving_brokers(self, listener: str | None = None) -> list[tuple[int, str, int]]:
        """``(id, host, port)`` of each node serving clients. With ``listener`` (the one a request arrived on) each
        registered broker is listed at its endpoint of that name and left out if it has none, as Kafka's Metadata
        does; a client bootstrapping from a SASL_SSL listener must not be sent to a PLAINTEXT one."""
        self.catch_up()
        if listener in self.settings.controller_listener_names:
            listener = None  # admin clients bootstrapping from a controller: the brokers' first listeners
        brokers = self.registry.brokers
        out = []
        for v in self.settings.voters:
            if v.node_id not in brokers:
                out.append((v.node_id, v.host, v.port))
        for info in self.registry.online():
            if not info.endpoints:
                continue
            if listener is None:
                _, host, port = info.endpoints[0]
            else:
                match = next((ep for ep in info.endpoints if ep[0] == listener), None)
                if match is None:
                    continue
                _, host, port = match
            out.append((info.broker_id, host, port))
        out.sort()
        return out

    def _controller_tick(self) -> None:
        # the registry is read lazily (Metadata, DescribeCluster, registration and heartbeat handlers) except where
        # something must happen without a request: the active controller's session expiry and a broker watching
        # its own state
        if self.settings.is_broker or (self.controller is not None and self.controller.leading()):
            self.catch_up()
        if self.controller is not None:
            self.controller.tick()

    def _my_state(self):
        """(broker epoch, lifecycle state) of this broker as the log says, None before it registered."""
        info = self.registry.brokers.get(self.settings.node_id)
        return (info.epoch, info.state) if info is not None and info.epoch == self.broker_epoch else None

    def _registration(self):
        R = w.BrokerRegistrationRequest
        return R(broker_id=self.settings.node_id, cluster_id=self.node.cluster_id, incarnation_id=self.incarnation,
                 listeners=[R.Listener(name=ep.name, host=ep.host or "localhost", port=ep.port, security_protocol=0)
                            for ep in self._advertised()], features=[], rack=None), 0

    def _heartbeat(self):
        lg = self.node.log
        return w.BrokerHeartbeatRequest(broker_id=self.settings.node_id, broker_epoch=self.broker_epoch,
                                        current_metadata_offset=lg.high_watermark() if lg is not None else -1,
                                        want_fence=False, want_shut_down=self._shutting), 0
