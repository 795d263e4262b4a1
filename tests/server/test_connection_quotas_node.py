"""Connection quotas on a real node (KIP-402, KIP-612), as Kafka's ConnectionQuotas applies them, set dynamically
the way an operator does (IncrementalAlterConfigs on the cluster-wide broker resource, AlterClientQuotas on an ip):

* ``max.connections.per.ip``: the connection beyond it is closed at once; one closing makes room again;
* ``max.connections``: the connection beyond it waits unread (Kafka's acceptor blocks) and is answered once another
  closes;
* IP ``connection_creation_rate``: past the rate, a new connection is held unread and then closed.

Real sockets speaking the Kafka protocol (ApiVersions); bounded waits only."""

from __future__ import annotations

import asyncio

from harness import processes, roles

from kraftwire.errors import ProtocolError
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection, request_once

IAC, AQ = w.IncrementalAlterConfigsRequest, w.AlterClientQuotasRequest
VERSIONS = w.ApiVersionsRequest(client_software_name="t", client_software_version="1")
HOST = "127.0.0.1"


def _broker_config(port: int, key: str, value: str | None) -> None:
    """Set (or, with None, delete) a cluster-wide dynamic broker config."""
    answer = asyncio.run(request_once(HOST, port, IAC(resources=[IAC.AlterConfigsResource(
        resource_type=4, resource_name="", configs=[IAC.AlterableConfig(
            name=key, config_operation=0 if value is not None else 1, value=value)])], validate_only=False), 1))
    assert [(r.error_code, r.error_message) for r in answer.responses] == [(0, None)]


async def _answered(conn, timeout: float) -> bool:
    """Whether ApiVersions is answered on ``conn`` within ``timeout`` (False: closed — seen as a reset, an end of
    stream or the client's "connection closed by the server", depending on when the close lands — or no answer
    yet)."""
    try:
        answer = await conn.request(VERSIONS, 3, timeout=timeout)
        return answer.error_code == 0
    except (OSError, ConnectionError, asyncio.TimeoutError, asyncio.IncompleteReadError, EOFError, ProtocolError):
        return False


async def _per_ip(port: int) -> None:
    held = [await KafkaConnection.open(HOST, port) for _ in range(3)]
    try:
        for conn in held:
            assert await _answered(conn, 10)
        extra = await KafkaConnection.open(HOST, port)
        assert not await _answered(extra, 10)  # closed at once: the answer never comes
        await extra.close()
        await held.pop().close()
        for _ in range(50):  # the close reaches the node in its own time
            again = await KafkaConnection.open(HOST, port)
            ok = await _answered(again, 10)
            await again.close()
            if ok:
                break
            await asyncio.sleep(0.1)
        assert ok
    finally:
        for conn in held:
            await conn.close()


async def _broker_wide(port: int) -> None:
    held = [await KafkaConnection.open(HOST, port) for _ in range(2)]
    try:
        for conn in held:
            assert await _answered(conn, 10)
        waiting = await KafkaConnection.open(HOST, port)
        pending = asyncio.ensure_future(waiting.request(VERSIONS, 3, timeout=20))
        await asyncio.sleep(1.0)
        assert not pending.done()  # held unread while the node is at max.connections
        await held.pop().close()
        assert (await pending).error_code == 0  # answered once a slot is free
        await waiting.close()
    finally:
        for conn in held:
            await conn.close()


async def _ip_rate(port: int) -> list[bool]:
    """New connections one after the other (each closed once answered), until one is not answered."""
    seen = []
    for _ in range(40):
        conn = await KafkaConnection.open(HOST, port)
        seen.append(await _answered(conn, 5))
        await conn.close()
        if not seen[-1]:
            break
    return seen


def test_connection_quotas(tmp_path):
    with processes.CombinedNode(tmp_path) as node:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
        _broker_config(node.port, "max.connections.per.ip", "3")
        asyncio.run(_per_ip(node.port))
        _broker_config(node.port, "max.connections.per.ip", None)

        _broker_config(node.port, "max.connections", "2")
        asyncio.run(_broker_wide(node.port))
        _broker_config(node.port, "max.connections", None)

        answer = asyncio.run(request_once(HOST, node.port, AQ(entries=[AQ.EntryData(
            entity=[AQ.EntityData(entity_type="ip", entity_name=HOST)],
            ops=[AQ.OpData(key="connection_creation_rate", value=2.0, remove=False)])], validate_only=False), 1))
        assert [e.error_code for e in answer.entries] == [0]
        seen = asyncio.run(_ip_rate(node.port))
        # 2/s over the quota's ten-window span lets about twenty through, then one is closed unanswered
        assert seen[-1] is False and len(seen) >= 10, seen
