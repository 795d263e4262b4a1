"""The KIP-500 roles of a KRaft node (``process.roles``): the node's ``Roles`` with the broker states Kafka's metadata
records give (``runtime.metadata_node``'s image), as ``test_server.roles.LegacyRoles`` fills them from kraftwire's
control records for the test server."""

from __future__ import annotations

from kraftwire.protocol import messages as w
from kraftwire.protocol import served
from kraftwire.server.node.roles import FENCED, ONLINE, STOPPING, Roles
from kraftwire.server.runtime.metadata_node import supported_features

#: Kafka's security protocol ids, as BrokerRegistration lists them
_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


class MetadataRoles(Roles):
    """The KIP-500 roles of a KRaft node: a broker registers with Kafka's BrokerRegistration (its listeners, rack,
    log directory and the metadata.version range it supports) and heartbeats with the offset of its metadata image;
    its state (Fenced, Online, controlled shutdown) is what the image says of its registration. The active
    controller's answers and session expiry come from ``MetadataNode``."""

    def _install(self) -> None:
        self.controller = None  # the legacy controller; the KRaft one is ``node.metadata``

    def catch_up(self) -> None:
        pass  # the image is folded as batches commit

    def _controller_tick(self) -> None:
        self.node.metadata.tick()

    def _my_state(self):
        b = self.node.metadata.image.brokers.get(self.settings.node_id)
        if b is None or b.epoch != self.broker_epoch:
            return None
        state = STOPPING if b.in_controlled_shutdown else FENCED if b.fenced else ONLINE
        return b.epoch, state

    def _registration(self):
        s = self.settings
        R = w.BrokerRegistrationRequest
        directory = self.node.directory_id
        dirs = [directory] if directory is not None else []
        replicas = self.node.replicas
        if replicas is not None:  # every online log directory (KIP-858), the metadata one among them
            dirs = list(dict.fromkeys(dirs + replicas.online_dir_ids()))
        body = R(broker_id=s.node_id, cluster_id=self.node.cluster_id, incarnation_id=self.incarnation,
                 listeners=[R.Listener(name=ep.name, host=ep.host or "localhost", port=ep.port,
                                       security_protocol=_PROTOCOL_IDS.get(s.protocol_of(ep.name), 0))
                            for ep in self._advertised()],
                 features=[R.Feature(name=name, min_supported_version=low, max_supported_version=high)
                           for name, (low, high) in supported_features().items()],
                 rack=s.config.broker_rack, is_migrating_zk_broker=False,
                 log_dirs=dirs,
                 previous_broker_epoch=replicas.previous_broker_epoch if replicas is not None else -1)
        return body, served.versions("BrokerRegistration")[1]

    def _heartbeat(self):
        replicas = self.node.replicas
        body = w.BrokerHeartbeatRequest(broker_id=self.settings.node_id, broker_epoch=self.broker_epoch,
                                        current_metadata_offset=self.node.metadata.image.offset,
                                        want_fence=False, want_shut_down=self._shutting,
                                        offline_log_dirs=replicas.offline_dir_ids() if replicas is not None else [])
        return body, 1  # v1: OfflineLogDirs (KIP-858)
