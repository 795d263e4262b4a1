"""Envelope (KIP-590): a Kafka broker forwards an admin request to the active controller wrapped in an Envelope that
carries the client's principal and address; the controller handles the request inside as that client's, and answers
it wrapped in the Envelope's answer.

As Kafka's controller does it (``ControllerApis.handleEnvelopeRequest``, ``EnvelopeUtils``), an Envelope is refused
as a whole — an EnvelopeResponse with no response data and the error — when:

* the sender may not CLUSTER_ACTION the cluster: CLUSTER_AUTHORIZATION_FAILED;
* the principal does not deserialize (``DefaultPrincipalData`` v0): PRINCIPAL_DESERIALIZATION_FAILURE;
* the client address is not 4 or 16 bytes: INVALID_REQUEST;
* the request's header does not parse, or the request does not (an unknown version among them): UNSUPPORTED_VERSION;
* the API is not one Kafka forwards (``ApiKeys.forwardable``): INVALID_REQUEST.

Otherwise the request goes through the node's dispatcher like any other (the ACL gate, the handler), on a stand-in
connection whose principal and peer are the client's and whose listener is the Envelope's; whatever the handler
answers is encoded with its header and returned as the Envelope's ``response_data``. An enveloped request is never
forwarded again: a controller that is not active answers it NOT_CONTROLLER, and an answer that carries NOT_CONTROLLER
anywhere becomes the Envelope's own NOT_CONTROLLER without data (``forwarding.stale_controller``), as Kafka's
``RequestChannel`` does, for the broker to send it again to the new controller.
"""

from __future__ import annotations

import ipaddress
import logging

from kraftwire import error_codes as ec
from kraftwire.metadata.forwarding import stale_controller
from kraftwire.protocol import codec, framing
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.server.edge.client import FORWARD_CLIENT_ID

log = logging.getLogger("kraftwire.envelope")

#: the APIs a Kafka broker forwards (Kafka 4.4's ``ApiKeys.forwardable``)
FORWARDABLE = frozenset({19, 20, 30, 31, 33, 37, 38, 39, 40, 43, 44, 45, 46, 49, 51, 55, 57, 64, 67, 80, 81, 94})


def was_forwarded(request, conn) -> bool:
    """Whether a request reached this node forwarded by another — by a kraftwire node (its client id) or in a Kafka
    broker's Envelope — and so must be answered here, never forwarded again."""
    return request.header.client_id == FORWARD_CLIENT_ID or getattr(conn, "enveloped", False)


class Refused(Exception):
    def __init__(self, code: int, why: str) -> None:
        super().__init__(why)
        self.code = code


def principal_of(data: bytes | None) -> str:
    """``Type:Name`` from a serialized ``DefaultPrincipalData`` (an int16 version, then the message)."""
    if data is None or len(data) < 2:
        raise Refused(ec.PRINCIPAL_DESERIALIZATION_FAILURE, "Failed to deserialize client principal from envelope")
    version = int.from_bytes(data[:2], "big", signed=True)
    try:
        if version != 0:
            raise ValueError(f"unknown version {version}")
        principal = codec.decode(w.DefaultPrincipalData, memoryview(data)[2:], version)
    except Exception as exc:  # noqa: BLE001 - any undecodable principal is Kafka's one error
        raise Refused(ec.PRINCIPAL_DESERIALIZATION_FAILURE,
                      f"Failed to deserialize client principal from envelope: {exc}") from None
    return f"{principal.type}:{principal.name}"


def client_host(address: bytes) -> str:
    if len(address) not in (4, 16):
        raise Refused(ec.INVALID_REQUEST, "Failed to parse client address from envelope")
    return str(ipaddress.ip_address(bytes(address)))


class EnvelopedConnection:
    """The connection an enveloped request is handled on: the client's principal and address, the Envelope's
    listener; its answer goes back inside the Envelope's."""

    enveloped = True

    def __init__(self, outer, principal: str, host: str, answer) -> None:
        self.outer = outer
        self.principal = principal
        self.peer = f"{host}:0"
        self.listener = getattr(outer, "listener", None)
        self.closed = False
        self._answer = answer
        #: the request time the inner request owes its client (``client_quotas.Charge``), as Kafka's controller
        #: charges an Envelope's inner request; its throttle time goes back in the answer for the broker to apply
        self.charges: dict = {}

    def send_response(self, body, version: int, correlation_id: int) -> None:
        charge = self.charges.pop(correlation_id, None)
        if charge is not None:
            charge.settle(body)
        if stale_controller(body):
            if not self.closed:
                self.closed = True
                self._answer(w.EnvelopeResponse(response_data=None, error_code=ec.NOT_CONTROLLER))
            return
        self.send_chunks(framing.encode_response(body, version, correlation_id), correlation_id)

    def send_chunks(self, chunks: list, correlation_id: int | None = None) -> None:
        charge = self.charges.pop(correlation_id, None)
        if charge is not None:  # an answer encoded by its handler: its time recorded all the same
            charge.settle(None)
        if self.closed:
            return
        self.closed = True
        payload = b"".join(bytes(c) for c in chunks)[4:]  # the answer as Kafka serializes it: no size prefix
        self._answer(w.EnvelopeResponse(response_data=payload, error_code=ec.NONE))

    def close(self) -> None:
        """The dispatcher closes a connection whose request does not parse or is not served: UNSUPPORTED_VERSION,
        as Kafka answers a forwarded request it cannot parse."""
        if not self.closed:
            self.closed = True
            self._answer(w.EnvelopeResponse(response_data=None, error_code=ec.UNSUPPORTED_VERSION))


class EnvelopeApi:
    def __init__(self, node) -> None:
        self.node = node

    def register(self) -> None:
        self.node.dispatcher.serve("Envelope", self.envelope)

    def envelope(self, request, conn) -> None:
        version, cid = request.version, request.header.correlation_id

        def answer(body) -> None:
            conn.send_response(body, version, cid)

        try:
            inner = self._open(request.body, conn)
        except Refused as refused:
            log.info("refusing an Envelope from %s (%s): %s", conn.peer, getattr(conn, "principal", "?"), refused)
            answer(w.EnvelopeResponse(response_data=None, error_code=refused.code))
            return
        frame, principal, host = inner
        self.node.dispatcher.dispatch(frame, EnvelopedConnection(conn, principal, host, answer))

    def _open(self, body, conn) -> tuple[bytes, str, str]:
        access = self.node.authorizer
        if access is not None and not access.allows_cluster(conn, Op.CLUSTER_ACTION):
            raise Refused(ec.CLUSTER_AUTHORIZATION_FAILED,
                          f"Principal {conn.principal} does not have required CLUSTER_ACTION for envelope")
        principal = principal_of(body.request_principal)
        host = client_host(body.client_host_address)
        frame = bytes(body.request_data)
        if len(frame) < 8:
            raise Refused(ec.UNSUPPORTED_VERSION, "Failed to parse request header from envelope")
        api_key = int.from_bytes(frame[:2], "big", signed=True)
        if api_key not in FORWARDABLE:
            info = w.APIS.get(api_key)
            name = info.name if info is not None else str(api_key)
            raise Refused(ec.INVALID_REQUEST, f"API {name} is not enabled or is not eligible for forwarding")
        return frame, principal, host
