"""The broker side of KIP-590: an admin request a broker does not decide goes to the active controller inside an
Envelope, and the Envelope's answer is turned back into the client's answer.

The rules, as Kafka 4.4's broker and controller apply them (``ForwardingManager``, ``DefaultKafkaPrincipalBuilder``,
``RequestChannel.buildResponseSend``, ``NodeToControllerRequestThread``):

* the Envelope carries the client's principal as ``DefaultPrincipalData`` v0 behind its int16 version, the client's
  IP address as its 4 or 16 bytes, and the request with its header (the client's own correlation and client id);
* a controller whose answer to the inner request carries NOT_CONTROLLER (NOT_LEADER_OR_FOLLOWER for DescribeQuorum)
  answers the Envelope itself with NOT_CONTROLLER and no data, so that the broker sends it again to the new
  controller (``RETRY``);
* an Envelope answered UNSUPPORTED_VERSION closes the client's connection (``CLOSE``: the client learns the versions
  again); any other Envelope error is the client's UNKNOWN_SERVER_ERROR, as is an inner answer that does not parse;
* no answer before the broker's deadline is the client's REQUEST_TIMED_OUT.
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

from kraftwire import error_codes as ec
from kraftwire.metadata.controller.refusals import refusal
from kraftwire.protocol import codec, framing
from kraftwire.protocol import messages as w

#: what the broker does with an Envelope's answer
ANSWER, RETRY, CLOSE = "answer", "retry", "close"

_DESCRIBE_QUORUM = 55


def principal_data(principal: str, token_authenticated: bool = False) -> bytes:
    """``Type:Name`` serialized as Kafka's ``DefaultKafkaPrincipalBuilder.serialize``: int16 version 0, then the
    ``DefaultPrincipalData`` v0."""
    kind, _, name = principal.partition(":")
    data = w.DefaultPrincipalData(type=kind, name=name, token_authenticated=token_authenticated)
    return (0).to_bytes(2, "big") + b"".join(bytes(c) for c in codec.encode_chunks(data, 0))


def request_bytes(header, body, version: int) -> bytes:
    """The request as Kafka's ``serializeWithHeader`` writes it (no size prefix): the client's header, then
    ``body`` (the original, or what is left of it once the broker decided its own part)."""
    info = w.APIS[header.request_api_key]
    chunks = codec.encode_chunks(header, info.request_header_version(version)) + codec.encode_chunks(body, version)
    return b"".join(bytes(c) for c in chunks)


def envelope(header, body, version: int, principal: str, host: str, token_authenticated: bool = False):
    """The EnvelopeRequest a broker sends for a client's request (``host``: the client's IP address)."""
    return w.EnvelopeRequest(request_data=request_bytes(header, body, version),
                             request_principal=principal_data(principal, token_authenticated),
                             client_host_address=ipaddress.ip_address(host).packed)


def carries(message, code: int) -> bool:
    """Whether any ``error_code`` in ``message`` (at any depth) is ``code`` — Kafka's ``errorCounts`` test."""
    if getattr(message, "error_code", None) == code:
        return True
    for field in message._info.fields:
        value = getattr(message, field.attr)
        if isinstance(value, list):
            if any(isinstance(v, w.Base) and carries(v, code) for v in value):
                return True
        elif isinstance(value, w.Base) and carries(value, code):
            return True
    return False


def stale_controller(response) -> bool:
    """Whether a controller's answer to an enveloped request means that it is no longer the active one (Kafka's
    ``RequestChannel.shouldReturnNotController``)."""
    if response.API_KEY == _DESCRIBE_QUORUM:
        return carries(response, ec.NOT_LEADER_OR_FOLLOWER)
    return carries(response, ec.NOT_CONTROLLER)


class Outcome(NamedTuple):
    action: str  # ANSWER, RETRY or CLOSE
    response: object = None  # the client's answer, for ANSWER


def unwrap(answer, api: str, body, version: int) -> Outcome:
    """What the broker does with the EnvelopeResponse ``answer`` to the request ``api`` (``body`` at ``version``)."""
    if answer.error_code == ec.NOT_CONTROLLER:
        return Outcome(RETRY)
    if answer.error_code == ec.UNSUPPORTED_VERSION:
        return Outcome(CLOSE)
    if answer.error_code != ec.NONE or answer.response_data is None:
        return Outcome(ANSWER, refusal(api, body, version, ec.UNKNOWN_SERVER_ERROR))
    try:
        _, response = framing.decode_response(memoryview(bytes(answer.response_data)), body.API_KEY, version)
    except Exception:  # noqa: BLE001 - any answer that does not parse is Kafka's one error
        return Outcome(ANSWER, refusal(api, body, version, ec.UNKNOWN_SERVER_ERROR))
    return Outcome(ANSWER, response)


def timed_out(api: str, body, version: int):
    """The client's answer when the controller did not answer in time (``ForwardingManager.onTimeout``)."""
    return refusal(api, body, version, ec.REQUEST_TIMED_OUT)
