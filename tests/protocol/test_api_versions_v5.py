"""ApiVersions v5 (KIP-1242), ``kraftwire.protocol.api_versions``: a client names the cluster and node it means to
reach; Kafka's ``ApiVersionsRequest.isValid`` (both or neither) and ``KafkaApis.handleApiVersionsRequest``
(REBOOTSTRAP_REQUIRED from a broker that is not that node; a controller listener does not check). The same requests
against Kafka 4.4 are in ``tests/kafka/test_api_levels_oracle.py``."""

from __future__ import annotations

import pytest

from kraftwire.error_codes import INVALID_REQUEST, NONE, REBOOTSTRAP_REQUIRED
from kraftwire.protocol import codec
from kraftwire.protocol import messages as w
from kraftwire.protocol.api_versions import Identity, api_versions_response

REGISTERED = {0: (3, 13), 18: (0, 5)}
ME = Identity("Uc70e1ZARn6UM4iJHeByUw", 3)


def _answer(cluster_id, node_id, version=5, identity=ME):
    request = w.ApiVersionsRequest(client_software_name="c", client_software_version="1", cluster_id=cluster_id,
                                   node_id=node_id)
    body, at = api_versions_response(REGISTERED, version, request=request, identity=identity)
    return body.error_code, [k.api_key for k in body.api_keys], at


@pytest.mark.parametrize("cluster_id, node_id, expected", [
    (None, -1, NONE),  # the client does not know yet
    (ME.cluster_id, ME.node_id, NONE),
    ("another-cluster", ME.node_id, REBOOTSTRAP_REQUIRED),
    (ME.cluster_id, 4, REBOOTSTRAP_REQUIRED),
    (ME.cluster_id, -1, INVALID_REQUEST),  # one without the other
    (None, ME.node_id, INVALID_REQUEST),
])
def test_a_broker_checks_whom_the_client_means(cluster_id, node_id, expected):
    error, keys, at = _answer(cluster_id, node_id)
    assert (error, at) == (expected, 5)
    assert keys == ([0, 18] if expected == NONE else [])  # a refusal lists no api keys (getErrorResponse)


def test_a_controller_listener_and_older_versions_do_not_check():
    assert _answer("another-cluster", 4, identity=None)[0] == NONE
    assert _answer(ME.cluster_id, -1, identity=None)[0] == INVALID_REQUEST  # isValid holds on every listener
    assert _answer("another-cluster", 4, version=4)[0] == NONE  # v4 carries neither field


def test_the_fields_round_trip_at_v5_only():
    request = w.ApiVersionsRequest(client_software_name="c", client_software_version="1", cluster_id="x", node_id=7)
    assert codec.decode(w.ApiVersionsRequest, codec.encode(request, 5), 5).to_dict() == request.to_dict()
    assert codec.decode(w.ApiVersionsRequest, codec.encode(request, 4), 4).node_id == -1
