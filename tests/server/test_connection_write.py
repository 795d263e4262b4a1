"""How an encoded answer is written: chunk by chunk where asyncio's generic ``writelines`` would join them first."""

from __future__ import annotations

import asyncio

from kraftwire.server.edge.connection import write_chunks


class GenericTransport(asyncio.WriteTransport):
    """Inherits asyncio's writelines (which joins the list into one new bytes)."""

    def __init__(self):
        super().__init__()
        self.writes = []

    def write(self, data):
        self.writes.append(data)


class OwnWritelines(GenericTransport):
    def writelines(self, list_of_data):
        self.writes.append(("writelines", list(list_of_data)))


def test_a_generic_transport_gets_each_chunk_as_it_is():
    big = memoryview(bytes(1 << 20))
    t = GenericTransport()
    write_chunks(t, [b"head", big, b"tail"])
    assert t.writes == [b"head", big, b"tail"] and t.writes[1] is big  # the large chunk is not copied


def test_a_transport_with_its_own_writelines_gets_the_list():
    t = OwnWritelines()
    write_chunks(t, [b"a", b"b"])
    assert t.writes == [("writelines", [b"a", b"b"])]


def test_a_real_socket_receives_the_chunks_in_order():
    async def main():
        received = asyncio.Queue()

        async def handle(reader, writer):
            await received.put(await reader.readexactly(3 + (1 << 20)))
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        host, port = server.sockets[0].getsockname()[:2]
        reader, writer = await asyncio.open_connection(host, port)
        payload = bytes(range(256)) * 4096
        write_chunks(writer.transport, [b"a", memoryview(payload), b"bc"])
        await writer.drain()
        data = await asyncio.wait_for(received.get(), 10)
        writer.close()
        server.close()
        await server.wait_closed()
        return data, payload

    data, payload = asyncio.run(main())
    assert data == b"a" + payload + b"bc"
