"""Admin requests a broker forwards to the active controller go over a kept connection (Kafka's
``NodeToControllerChannelManager``): one TCP connection (and TLS and SASL handshake) for many requests, dialled
again once it fails or the controller closes it."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.errors import ProtocolError
from kraftwire.server.edge.client import KafkaConnection
from tests.server.test_replication import CT, Cluster


def _create(name: str):
    return CT(topics=[CT.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=[],
                                        configs=[])], timeout_ms=5000, validate_only=False)


def test_forwarded_requests_share_one_kept_connection(tmp_path):
    async def scenario():
        cluster = Cluster(tmp_path, brokers=(1,))
        await cluster.start()
        try:
            broker = cluster.nodes[1]
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                for name in ("a", "b", "c"):
                    created = await conn.request(_create(name), 7)
                    assert created.topics[0].error_code == ec.NONE, created
                links = broker.forward_links
                assert links.opened == 1
                # the controller closes the kept connection: the next forward dials again and succeeds
                [kept] = [c for conns in links.idle.values() for c in conns]
                for peer in list(cluster.controller.dispatcher.connections):
                    peer.close()
                for _ in range(200):
                    if kept.ended:
                        break
                    await asyncio.sleep(0.01)
                assert kept.ended
                created = await conn.request(_create("d"), 7)
                assert created.topics[0].error_code == ec.NONE, created
                assert links.opened == 2
            finally:
                await conn.close()
        finally:
            await cluster.stop()

    asyncio.run(scenario())


def test_a_connection_closed_before_its_first_request_fails_at_once():
    """A link that accepts and closes at once (a cut proxy) ends the request with an error, not a wait for the
    timeout: the close may reach the stream before the connection's reader takes over."""
    async def scenario():
        async def accept_and_close(reader, writer):
            writer.close()

        server = await asyncio.start_server(accept_and_close, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            for early in (True, False):
                if early:  # the close reaches the stream before the connection's reader takes over
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                    await asyncio.sleep(0.05)
                    conn = KafkaConnection(reader, writer, "test")
                else:  # it arrives while nothing is asked
                    conn = await KafkaConnection.open("127.0.0.1", port)
                    await asyncio.sleep(0.05)
                try:
                    try:
                        await conn.request(_create("x"), 7, timeout=20)
                        raise AssertionError("a closed connection answered")
                    except (ProtocolError, OSError) as exc:
                        # the close is noticed, not waited out: a hang ends in the request's own timeout
                        assert not isinstance(exc, TimeoutError), "a closed connection was waited on until the timeout"
                finally:
                    await conn.close()
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())
