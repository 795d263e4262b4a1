"""The KIP-500 roles of a KRaft node (``process.roles``): the node's ``Roles`` with the broker states Kafka's metadata
records give (``runtime.metadata_node``'s image), as ``test_server.roles.LegacyRoles`` fills them from kraftwire's
control records for the test server."""

from __future__ import annotations

import asyncio
import logging
import random

from kraftwire import error_codes as ec
from kraftwire.errors import KraftwireError
from kraftwire.metadata.controller.controllers import RegistrationSender
from kraftwire.protocol import messages as w
from kraftwire.protocol import served
from kraftwire.raft.dynamic_voters import KRAFT_VERSION_RANGE
from kraftwire.server.node.roles import FENCED, ONLINE, STOPPING, TICK_S, Roles
from kraftwire.server.runtime.clocks import monotonic_ms
from kraftwire.server.runtime.metadata_node import supported_features

log = logging.getLogger("kraftwire.roles")

#: Kafka's security protocol ids, as BrokerRegistration lists them
_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


class MetadataRoles(Roles):
    """The KIP-500 roles of a KRaft node: a broker registers with Kafka's BrokerRegistration (its listeners, rack,
    log directory and the metadata.version range it supports) and heartbeats with the offset of its metadata image;
    its state (Fenced, Online, controlled shutdown) is what the image says of its registration. The active
    controller's answers and session expiry come from ``MetadataNode``."""

    def _install(self) -> None:
        self.controller = None  # the legacy controller; the KRaft one is ``node.metadata``
        #: a controller's own registration (KIP-919), None on a broker-only node
        self.controller_registration = (RegistrationSender(self.settings.node_id, self.incarnation)
                                        if self.settings.is_controller else None)

    def start(self) -> None:
        super().start()
        if self.controller_registration is not None:
            self._tasks.append(asyncio.get_running_loop().create_task(self._controller_registration_loop()))

    async def _controller_registration_loop(self) -> None:
        """A controller registers itself with the active controller (ControllerRegistration, on the controller
        listener) whenever its image does not hold this process's registration; ``RegistrationSender`` decides when."""
        sender, jitter = self.controller_registration, random.Random()
        while not self._stopping:
            await asyncio.sleep(TICK_S)
            if not sender.due(self.node.metadata.image, monotonic_ms()):
                continue
            voter = self._leader_endpoint()
            if voter is None:
                continue
            sender.sent()
            code = None
            try:
                answer = await self.node.forward(voter, self._controller_registration_request(), 0)
                code = answer.error_code
                if code != ec.NONE:
                    log.info("controller %d: ControllerRegistration refused with %s (%s)", self.settings.node_id,
                             ec.name_of(code), answer.error_message)
            except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
                log.debug("controller %d: ControllerRegistration failed: %s", self.settings.node_id, exc)
            sender.answered(code, monotonic_ms(), jitter.random())

    def _controller_registration_request(self):
        s = self.settings
        names = s.controller_listener_names or (s.controller_listener,)
        listeners = [(ep.name, ep.host or "localhost", ep.port, s.protocol_of(ep.name))
                     for ep in s.advertised if ep.name in names]
        return self.controller_registration.request(
            listeners, {**supported_features(), "kraft.version": KRAFT_VERSION_RANGE})

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
                 log_dirs=dirs, previous_broker_epoch=-1)
        return body, served.versions("BrokerRegistration")[1]

    def _heartbeat(self):
        replicas = self.node.replicas
        body = w.BrokerHeartbeatRequest(broker_id=self.settings.node_id, broker_epoch=self.broker_epoch,
                                        current_metadata_offset=self.node.metadata.image.offset,
                                        want_fence=False, want_shut_down=self._shutting,
                                        offline_log_dirs=replicas.offline_dir_ids() if replicas is not None else [])
        return body, 1  # v1: OfflineLogDirs (KIP-858)
