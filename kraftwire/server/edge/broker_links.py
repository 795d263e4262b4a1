"""``BrokerLinks``: a broker's own client connections to other brokers, on the inter-broker listener.

One connection per broker, opened on first use with the listener's TLS and SASL settings, and dropped (closed) after
any failure so the next call opens a new one. ``prepare(conn)``, when given, runs once on each new connection and
its result is kept with it (the transaction verifier learns the AddPartitionsToTxn version the broker's ApiVersions
allows). Requests to one broker go one at a time. Used by the transaction coordinator (WriteTxnMarkers to partition
leaders) and by partition leaders (AddPartitionsToTxn VerifyOnly to transaction coordinators).
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

from kraftwire.metadata import answers
from kraftwire.server.edge.client import KafkaConnection

CONNECT_TIMEOUT_S = 5.0


class BrokerLinks:
    def __init__(self, node, role: str, *, prepare: Callable[[object], Awaitable[object]] | None = None,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        self.node = node
        self.role = role  # the connections' client id is "<role>-<node id>"
        self.prepare = prepare
        self.connect_timeout_s = connect_timeout_s
        self.conns: dict[int, tuple[object, object]] = {}  # broker -> (connection, what prepare found)
        self.locks: dict[int, asyncio.Lock] = {}

    async def request(self, broker: int, send: Callable[[object, object], Awaitable[object]]):
        """``await send(connection, prepared)`` on the broker's connection, alone on it; a failure drops the
        connection and is raised."""
        async with self.locks.setdefault(broker, asyncio.Lock()):
            entry = self.conns.get(broker)
            if entry is None:
                entry = self.conns[broker] = await self._open(broker)
            conn, prepared = entry
            try:
                return await send(conn, prepared)
            except Exception:
                if self.conns.get(broker) is entry:
                    del self.conns[broker]
                await conn.close()
                raise

    async def _open(self, broker: int) -> tuple[object, object]:
        settings = self.node.settings
        ep = answers.broker_endpoint(self.node.metadata.image, broker, settings.inter_broker_listener)
        if ep is None:
            raise ConnectionError(f"broker {broker} has no inter-broker endpoint in the image")
        conn = await KafkaConnection.open(ep.host, ep.port, timeout=self.connect_timeout_s,
                                          client_id=f"{self.role}-{settings.node_id}",
                                          ssl_context=settings.inter_broker_ssl_context(),
                                          sasl=settings.inter_broker_sasl)
        if self.prepare is None:
            return conn, None
        try:
            return conn, await self.prepare(conn)
        except Exception:
            await conn.close()
            raise

    async def close(self) -> None:
        conns, self.conns = self.conns, {}
        for conn, _prepared in conns.values():
            await conn.close()
