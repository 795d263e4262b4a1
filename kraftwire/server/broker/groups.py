"""FindCoordinator. Consumer groups are not coordinated yet: every lookup answers COORDINATOR_NOT_AVAILABLE, which
clients treat as retriable. The API is advertised anyway because librdkafka enables LZ4 only when FindCoordinator
is, and confluent-kafka's consumer sends it even when it only uses ``assign()``."""

from __future__ import annotations

from kraftwire.protocol import messages as w
from kraftwire.server.broker import context as c

FIND_COORDINATOR = 10
FIND_COORDINATOR_MAX = 4
MESSAGE = "consumer groups are not supported by this kraftwire version"


class FindCoordinator:
    def __init__(self, ctx: c.BrokerContext) -> None:
        self.ctx = ctx

    def handle(self, request, conn) -> None:
        R = w.FindCoordinatorResponse
        version = request.version
        if version >= 4:
            body = R(throttle_time_ms=0, coordinators=[
                R.Coordinator(key=k, node_id=-1, host="", port=-1, error_code=c.COORDINATOR_NOT_AVAILABLE,
                              error_message=MESSAGE) for k in request.body.coordinator_keys])
        else:
            body = R(throttle_time_ms=0, error_code=c.COORDINATOR_NOT_AVAILABLE, error_message=MESSAGE,
                     node_id=-1, host="", port=-1)
        conn.send_response(body, version, request.header.correlation_id)
