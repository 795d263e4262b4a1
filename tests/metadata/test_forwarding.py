"""The broker side of KIP-590, pure (``kraftwire.metadata.forwarding``): the Envelope a broker builds and what it does
with the Envelope's answer, as Kafka's ``ForwardingManagerTest`` (``testForwardingTimeout``, ``testUnsupportedVersions``,
the envelope-error cases) and ``RequestChannelTest`` (a NOT_CONTROLLER answer becomes the Envelope's own) pin them."""

from __future__ import annotations

import pytest

from kraftwire import error_codes as ec
from kraftwire.metadata import forwarding as fw
from kraftwire.protocol import framing
from kraftwire.protocol import messages as w
from kraftwire.protocol.messages import RequestHeader
from kraftwire.server.edge.envelope import principal_of

CT = w.CreateTopicsRequest
BODY = CT(topics=[CT.CreatableTopic(name="t", num_partitions=3, replication_factor=1, assignments=[], configs=[])],
          timeout_ms=5000, validate_only=False)
HEADER = RequestHeader(request_api_key=19, request_api_version=7, correlation_id=42, client_id="adminclient-1")


def _answer(body, version: int, error: int = ec.NONE):
    payload = b"".join(bytes(c) for c in framing.encode_response(body, version, 42))[4:]
    return w.EnvelopeResponse(response_data=payload, error_code=error)


@pytest.mark.parametrize("token, expected", [(False, "0000055573657206616c6963650000"),
                                             (True, "0000055573657206616c6963650100")])
def test_the_principal_is_serialized_as_kafkas_default_principal_builder(token, expected):
    # the bytes Kafka 4.4's DefaultKafkaPrincipalBuilder.serialize(new KafkaPrincipal("User", "alice", token)) gives
    assert fw.principal_data("User:alice", token).hex() == expected
    assert principal_of(fw.principal_data("User:CN=a:b,O=c")) == "User:CN=a:b,O=c"  # a colon in the name stays


@pytest.mark.parametrize("host, address", [("127.0.0.1", bytes([127, 0, 0, 1])), ("::1", bytes(15) + b"\x01")])
def test_the_envelope_carries_the_request_with_the_clients_header_and_address(host, address):
    envelope = fw.envelope(HEADER, BODY, 7, "User:alice", host)
    assert bytes(envelope.client_host_address) == address
    inner = framing.decode_request(bytes(envelope.request_data), exact=True)
    assert (inner.header.correlation_id, inner.header.client_id, inner.version) == (42, "adminclient-1", 7)
    assert inner.body == BODY


def test_an_answer_is_relayed_with_its_throttle_time():
    R = w.CreateTopicsResponse
    sent = R(throttle_time_ms=250, topics=[R.CreatableTopicResult(name="t", error_code=ec.THROTTLING_QUOTA_EXCEEDED,
                                                                  error_message="quota")])
    outcome = fw.unwrap(_answer(sent, 7), "CreateTopics", BODY, 7)
    assert outcome.action == fw.ANSWER and outcome.response == sent


def test_envelope_errors_map_as_kafkas_forwarding_manager_maps_them():
    assert fw.unwrap(w.EnvelopeResponse(error_code=ec.NOT_CONTROLLER), "CreateTopics", BODY, 7).action == fw.RETRY
    assert fw.unwrap(w.EnvelopeResponse(error_code=ec.UNSUPPORTED_VERSION), "CreateTopics", BODY, 7).action == fw.CLOSE
    for refused in (w.EnvelopeResponse(error_code=ec.CLUSTER_AUTHORIZATION_FAILED),
                    w.EnvelopeResponse(error_code=ec.PRINCIPAL_DESERIALIZATION_FAILURE),
                    w.EnvelopeResponse(response_data=b"\x00\x00", error_code=ec.NONE)):  # an answer cut short
        outcome = fw.unwrap(refused, "CreateTopics", BODY, 7)
        assert outcome.action == fw.ANSWER
        assert [(t.name, t.error_code) for t in outcome.response.topics] == [("t", ec.UNKNOWN_SERVER_ERROR)]
    timed_out = fw.timed_out("CreateTopics", BODY, 7)
    assert [(t.name, t.error_code) for t in timed_out.topics] == [("t", ec.REQUEST_TIMED_OUT)]


def test_not_controller_anywhere_in_an_answer_marks_a_stale_controller():
    R = w.CreateTopicsResponse
    ok = R.CreatableTopicResult(name="a", error_code=ec.NONE)
    stale = R.CreatableTopicResult(name="b", error_code=ec.NOT_CONTROLLER)
    assert fw.stale_controller(R(topics=[ok, stale]))
    assert not fw.stale_controller(R(topics=[ok]))
    Q = w.DescribeQuorumResponse
    quorum = Q(error_code=ec.NONE, topics=[Q.TopicData(topic_name="__cluster_metadata", partitions=[
        Q.PartitionData(partition_index=0, error_code=ec.NOT_LEADER_OR_FOLLOWER)])])
    assert fw.stale_controller(quorum)  # DescribeQuorum's stale leader is NOT_LEADER_OR_FOLLOWER


def test_a_controller_answers_a_stale_enveloped_request_with_the_envelopes_own_not_controller():
    """``RequestChannel.buildResponseSend``: no inner answer, for the broker to retry on the new controller."""
    from types import SimpleNamespace

    from kraftwire.server.edge.envelope import EnvelopedConnection

    answers: list = []
    conn = EnvelopedConnection(SimpleNamespace(listener="CONTROLLER"), "User:alice", "10.0.0.1", answers.append)
    R = w.CreateTopicsResponse
    conn.send_response(R(topics=[R.CreatableTopicResult(name="t", error_code=ec.NOT_CONTROLLER)]), 7, 42)
    assert answers == [w.EnvelopeResponse(response_data=None, error_code=ec.NOT_CONTROLLER)]
