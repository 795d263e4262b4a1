"""Producer ids on a KRaft broker.

* **InitProducerId** without a transactional id: the next id of a block of 1,000 the active controller allocates
  (AllocateProducerIds with this broker's epoch), epoch 0 — also for a producer naming its own id and epoch (KIP-360:
  Kafka bumps epochs of transactional producers only). With a transactional id it goes to the transaction
  coordinator (``txn_apis``).
"""

from __future__ import annotations

import logging

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.runtime.replicas import ReplicaManager

log = logging.getLogger("kraftwire.partitions")
PRODUCER_ID_BLOCK = 1000


class ProducerIdBlocks:
    """InitProducerId on a broker: ids come from blocks the active controller allocates (``ProducerIdsRecord``)."""

    def __init__(self, node, kraft, replicas: ReplicaManager) -> None:
        self.node = node
        self.kraft = kraft
        self.replicas = replicas
        self.next_id = 0
        self.end = 0
        self.waiting: list = []
        self.asking = False

    def handle(self, request, conn) -> None:
        body = request.body
        R = w.InitProducerIdResponse
        version, cid = request.version, request.header.correlation_id
        if body.transactional_id is not None and getattr(self.node, "txn_apis", None) is not None:
            self.node.txn_apis.init_producer_id(request, conn)  # the transaction coordinator (txn_apis)
            return
        if body.transactional_id is not None:
            log.warning("refused InitProducerId for transactional id %r from %s: the transaction coordinator is not "
                        "running on this node yet (idempotent producers are served)", body.transactional_id,
                        conn.peer)
            conn.send_response(R(throttle_time_ms=0, error_code=ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                                 producer_id=-1, producer_epoch=-1), version, cid)
            return
        access = self.node.authorizer
        if access is not None and not (access.allows_cluster(conn, Op.IDEMPOTENT_WRITE)
                                       or access.allows_any(conn, ResourceType.TOPIC, Op.WRITE)):
            conn.send_response(R(throttle_time_ms=0, error_code=ec.CLUSTER_AUTHORIZATION_FAILED, producer_id=-1,
                                 producer_epoch=-1), version, cid)
            return
        # an idempotent producer naming its id and epoch (KIP-360) gets a new id too: Kafka's coordinator "blindly"
        # hands a new one to any request without a transactional id
        self.waiting.append((conn, version, cid))
        self._serve()

    def _serve(self) -> None:
        R = w.InitProducerIdResponse
        while self.waiting and self.next_id < self.end:
            conn, version, cid = self.waiting.pop(0)
            pid, self.next_id = self.next_id, self.next_id + 1
            conn.send_response(R(throttle_time_ms=0, error_code=0, producer_id=pid, producer_epoch=0), version, cid)
        if self.waiting and not self.asking:
            self._allocate()

    def _allocate(self) -> None:
        epoch = self.replicas.broker_epoch()
        if epoch < 0:
            self._fail(ec.COORDINATOR_LOAD_IN_PROGRESS)
            return
        self.asking = True
        body = w.AllocateProducerIdsRequest(broker_id=self.node.settings.node_id, broker_epoch=epoch)

        def done(response) -> None:
            self.asking = False
            if response.error_code:
                log.info("AllocateProducerIds: %s", ec.name_of(response.error_code))
                self._fail(ec.COORDINATOR_LOAD_IN_PROGRESS if response.error_code == ec.NOT_CONTROLLER
                           else response.error_code)
                return
            self.next_id = response.producer_id_start
            self.end = response.producer_id_start + response.producer_id_len
            self._serve()

        self.kraft.call("AllocateProducerIds", body, 0, done)

    def _fail(self, error: int) -> None:
        R = w.InitProducerIdResponse
        waiting, self.waiting = self.waiting, []
        for conn, version, cid in waiting:
            conn.send_response(R(throttle_time_ms=0, error_code=error, producer_id=-1, producer_epoch=-1), version,
                               cid)
