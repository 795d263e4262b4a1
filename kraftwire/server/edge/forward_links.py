"""``ForwardLinks``: a node's kept connections to the controllers it forwards admin requests to (Kafka's
``NodeToControllerChannelManager`` keeps one channel to the active controller rather than dialling per request).

A forwarded request takes an idle connection to that controller's listener if one is kept, else opens one (TCP, then
TLS and SASL as the quorum's own connections — paid once per connection, not per request); after the answer the
connection is kept for the next request (unless the controller closed it meanwhile). A failure or timeout closes that connection (its answer could still come
and would be read as the next one's), so the next request dials again. Requests in flight at once each have their
own connection; at most ``IDLE_PER_CONTROLLER`` are kept idle per controller.
"""

from __future__ import annotations

from kraftwire.server.edge.client import KafkaConnection

#: idle connections kept per controller endpoint (more are opened while that many requests are in flight at once)
IDLE_PER_CONTROLLER = 2


class ForwardLinks:
    """``ForwardLinks(client_id, ssl_context, sasl)``: the connection settings of every link (the sender marks
    forwarded requests by ``client_id``)."""

    def __init__(self, client_id: str, ssl_context=None, sasl=None) -> None:
        self.client_id = client_id
        self.ssl_context = ssl_context
        self.sasl = sasl
        self.idle: dict[tuple[str, int], list] = {}
        self.opened = 0  # connections opened so far (tests read it)
        self.closed = False

    async def request(self, host: str, port: int, body, version: int, *, timeout_s: float):
        """``body``'s answer from the controller at ``host``:``port``; raises what the connection raises."""
        key = (host, port)
        kept = self.idle.get(key) or []
        while kept and kept[-1].ended:  # closed by the controller while idle (connections.max.idle.ms)
            await kept.pop().close()
        if kept:
            conn = kept.pop()
        else:
            conn = await KafkaConnection.open(host, port, timeout=timeout_s, client_id=self.client_id,
                                              ssl_context=self.ssl_context, sasl=self.sasl)
            self.opened += 1
        try:
            answer = await conn.request(body, version, timeout=timeout_s)
        except BaseException:
            await conn.close()
            raise
        kept = self.idle.setdefault(key, [])
        if self.closed or len(kept) >= IDLE_PER_CONTROLLER:
            await conn.close()
        else:
            kept.append(conn)
        return answer

    async def close(self) -> None:
        """Close every kept connection; later requests still work but keep nothing."""
        self.closed = True
        idle, self.idle = self.idle, {}
        for conns in idle.values():
            for conn in conns:
                await conn.close()
