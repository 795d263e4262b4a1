"""A connection answers its requests in the order they came, as Kafka does and clients check: an answer ready
before an earlier request's (a Heartbeat behind an OffsetCommit waiting for its replicas) waits its turn."""

from __future__ import annotations

import asyncio

from harness.wire import Transport, answered_ids
from harness.wire import request_frame as _frame
from kraftwire.protocol import messages as w
from kraftwire.server.edge.connection import InboundConnection
from kraftwire.server.edge.dispatcher import Dispatcher


def test_answers_leave_in_request_order_and_acks_0_produce_takes_no_turn():
    async def main():
        d = Dispatcher()
        parked = []
        d.serve("OffsetCommit", lambda req, conn: parked.append((req, conn)))
        d.serve("Heartbeat", lambda req, conn: conn.send_response(w.HeartbeatResponse(error_code=0), req.version,
                                                                   req.header.correlation_id))
        d.serve("Produce", lambda req, conn: None)  # acks=0: never answered
        conn = InboundConnection(d, 1 << 20)
        t = Transport()
        conn.connection_made(t)
        commit = w.OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="", topics=[])
        produce = w.ProduceRequest(acks=0, timeout_ms=1, topic_data=[])
        hb = w.HeartbeatRequest(group_id="g", generation_id=1, member_id="m")
        conn.data_received(_frame(commit, 8, 1) + _frame(produce, 9, 2) + _frame(hb, 4, 3) + _frame(hb, 4, 4))
        assert answered_ids(bytes(t.out)) == []  # both heartbeats wait behind the commit
        req, c = parked.pop()
        c.send_response(w.OffsetCommitResponse(throttle_time_ms=0, topics=[]), req.version,
                        req.header.correlation_id)
        assert answered_ids(bytes(t.out)) == [1, 3, 4]
        conn.data_received(_frame(hb, 4, 5))
        assert answered_ids(bytes(t.out)) == [1, 3, 4, 5]  # nothing pending: at once

    asyncio.run(main())


def test_answers_given_without_a_handler_wait_their_turn_too():
    """ApiVersions (served, or at a version it does not serve) is answered by the dispatcher itself — on a listener
    of a node with dedicated client listeners, by its listener view — and still leaves behind the answer owed to an
    earlier request. (A malformed request closes the connection, as Kafka does: tests/server/test_bad_input_node.py.) Found by the fuzzer (tests/fuzz): the probe it sends
    behind each request overtook a DeleteTopics waiting for the controller."""
    from kraftwire.server.node.roles import CONTROLLER_ONLY, ListenerDispatcher

    async def main():
        d = Dispatcher()
        parked = []
        d.serve("OffsetCommit", lambda req, conn: parked.append((req, conn)))
        commit = w.OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="", topics=[])
        versions = w.ApiVersionsRequest(client_software_name="t", client_software_version="1")
        for dispatcher in (d, ListenerDispatcher(d, CONTROLLER_ONLY, "BROKER")):
            conn = InboundConnection(dispatcher, 1 << 20)
            t = Transport()
            conn.connection_made(t)
            unsupported = bytearray(_frame(versions, 3, 3))
            unsupported[6:8] = (99).to_bytes(2, "big")
            conn.data_received(_frame(commit, 8, 1) + _frame(versions, 3, 2) + bytes(unsupported))
            assert answered_ids(bytes(t.out)) == []
            req, c = parked.pop()
            c.send_response(w.OffsetCommitResponse(throttle_time_ms=0, topics=[]), req.version,
                            req.header.correlation_id)
            assert answered_ids(bytes(t.out)) == [1, 2, 3]

    asyncio.run(main())
