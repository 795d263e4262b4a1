"""Idempotent producers: InitProducerId and the producer-state table.

The table is rebuilt deterministically from the data batches' headers (producer id, producer epoch, base sequence,
record count) by scanning the log in offset order, so every replica (and so every new leader) holds the same view
of what is in its log. A truncation (a follower dropping a diverging tail) makes the next scan start again from the
log start. On the leader a batch it has just appended is applied at once (the same rule, no re-read).

The sequence rules (Kafka's ``ProducerStateManager``) are ``kraftwire.replica.producers``'s.

Producer ids: ``epoch << 32 | node id << 24 | counter`` (24 bits, seeded from the clock), so nodes and epochs never
hand out the same id and a restarted node is unlikely to repeat one. Transactions are not supported: a
transactional InitProducerId gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED (a fatal error on every client) and the node
logs why.
"""

from __future__ import annotations

import logging
import time

from kraftwire.protocol import messages as w
from kraftwire.replica.producers import SequenceCheck
from kraftwire.server.test_server import context as c

log = logging.getLogger("kraftwire.broker.producers")


class ProducerStates:
    def __init__(self, ctx: c.BrokerContext, scan) -> None:
        self.ctx = ctx
        self.scan = scan
        self.table = scan.state.producers  # rebuilt from the log by the scan
        self._counter = int(time.time() * 1000) & 0xFFFFFF

    def appended(self, pid: int, epoch: int, first_seq: int, count: int, first_offset: int, last_offset: int) -> None:
        """The leader appended this batch at ``first_offset``: apply it now if the scan had reached it."""
        self.scan.appended(first_offset, last_offset, lambda: self.scan.state.apply_producer(
            pid, epoch, first_seq, count, first_offset, last_offset))

    # ---------------------------------------------------------------------------------------------------- checks
    def check(self, pid: int, epoch: int, first_seq: int, count: int) -> SequenceCheck:
        self.scan.catch_up()
        return self.table.check(pid, epoch, first_seq, count)

    # ---------------------------------------------------------------------------------------------------- ids
    def new_producer_id(self) -> int:
        self._counter = (self._counter + 1) & 0xFFFFFF
        return (max(self.ctx.epoch(), 0) << 32) | ((self.ctx.node_id & 0xFF) << 24) | self._counter


class InitProducerId:
    def __init__(self, ctx: c.BrokerContext, states: ProducerStates) -> None:
        self.ctx = ctx
        self.states = states

    def handle(self, request, conn) -> None:
        body = request.body
        R = w.InitProducerIdResponse
        if body.transactional_id is not None:
            log.warning("refused InitProducerId for transactional id %r from %s: transactions are not supported "
                        "by kraftwire (idempotent producers are)", body.transactional_id, conn.peer)
            resp = R(error_code=c.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producer_id=-1, producer_epoch=-1)
        elif body.producer_id >= 0 and body.producer_epoch >= 0:
            # KIP-360: a producer bumps its own epoch (after an unknown/out-of-order error); same id, next epoch
            epoch = body.producer_epoch + 1
            if epoch > 32767:
                resp = R(error_code=0, producer_id=self.states.new_producer_id(), producer_epoch=0)
            else:
                resp = R(error_code=0, producer_id=body.producer_id, producer_epoch=epoch)
        else:
            resp = R(error_code=0, producer_id=self.states.new_producer_id(), producer_epoch=0)
        conn.send_response(resp, request.version, request.header.correlation_id)


def register(ctx: c.BrokerContext, dispatcher, states: ProducerStates) -> None:
    dispatcher.serve("InitProducerId", InitProducerId(ctx, states).handle)
