"""An answer that cannot be encoded never escapes from ``send_response`` as an exception: the request gets Kafka's
error answer with UNKNOWN_SERVER_ERROR (``protocol.error_answers``), or, where none is declared, the connection is
closed — one log line, no traceback, and later answers of the connection still go out. On real sockets:
``test_bad_input_node.py``."""

from __future__ import annotations

import asyncio
import logging

from harness.wire import answered_ids

from kraftwire import error_codes as ec
from kraftwire.protocol import framing, messages as w
from kraftwire.server.edge.connection import InboundConnection

TOO_LONG = "m" * 40_000


class Transport(asyncio.WriteTransport):
    def __init__(self):
        super().__init__()
        self.out = bytearray()
        self.closed = False

    def write(self, data):
        self.out += data

    def close(self):
        self.closed = True

    def get_write_buffer_size(self):
        return 0


class Dispatcher:
    connections: set = set()


def _connection():
    conn = InboundConnection(Dispatcher(), 1 << 20)
    conn.transport = conn_transport = Transport()
    conn.peer = "127.0.0.1:1"
    return conn, conn_transport


def _errors(caplog):
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_an_answer_with_a_top_level_error_code_becomes_unknown_server_error(caplog):
    conn, transport = _connection()
    conn.expect(5)
    conn.expect(6)
    conn.send_response(w.JoinGroupResponse(error_code=0, member_id=TOO_LONG, leader=TOO_LONG), 5, 5)
    conn.send_response(w.HeartbeatResponse(error_code=0), 3, 6)
    assert answered_ids(bytes(transport.out)) == [5, 6] and not transport.closed
    first = bytes(transport.out)[4:4 + int.from_bytes(transport.out[:4], "big")]
    _, answer = framing.decode_response(first, w.JoinGroupResponse.API_KEY, 5)
    assert (answer.error_code, answer.member_id, answer.leader) == (ec.UNKNOWN_SERVER_ERROR, "", "")
    (record,) = _errors(caplog)
    assert record.levelno == logging.ERROR and record.exc_info is None
    assert record.getMessage() == (
        "cannot encode JoinGroupResponse v5 for 127.0.0.1:1 (JoinGroupResponse.leader: a string of 40000 bytes is "
        "too long to be written (at most 32767)); answering UNKNOWN_SERVER_ERROR")


def test_an_answer_listing_items_gets_each_item_refused():
    conn, transport = _connection()
    R = w.DescribeGroupsResponse
    body = R(groups=[R.DescribedGroup(group_id="g", group_state="Stable", members=[
        R.DescribedGroupMember(member_id=TOO_LONG)]), R.DescribedGroup(group_id="h")])
    conn.send_response(body, 5, 9)
    _, answer = framing.decode_response(bytes(transport.out)[4:], R.API_KEY, 5)
    assert [(g.group_id, g.error_code, g.group_state, g.members) for g in answer.groups] == [
        ("g", ec.UNKNOWN_SERVER_ERROR, "", []), ("h", ec.UNKNOWN_SERVER_ERROR, "", [])]


def test_an_answer_without_an_error_answer_closes_the_connection(caplog):
    conn, transport = _connection()
    R = w.ListOffsetsResponse
    body = R(topics=[R.ListOffsetsTopicResponse(name=TOO_LONG)])
    conn.send_response(body, 7, 3)
    assert transport.out == b"" and transport.closed and conn.closed
    (record,) = _errors(caplog)
    assert record.exc_info is None and record.getMessage().endswith("; closing the connection")
