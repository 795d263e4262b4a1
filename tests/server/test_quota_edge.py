"""The quota glue of a broker (``server.apis.client_quotas``) with the pure managers: who a request is from, the
larger of the bandwidth and request-time throttles, and a throttled fetch's bytes taken back. No clock assertion:
the values recorded are chosen so that the outcome does not depend on when the calls run."""

from __future__ import annotations

from types import SimpleNamespace

from kraftwire.server.apis import client_quotas as glue


def _request(client_id: str):
    return SimpleNamespace(header=SimpleNamespace(client_id=client_id), size=0)


def _edge(quotas: dict):
    return glue.QuotaEdge(SimpleNamespace(image=SimpleNamespace(client_quotas=quotas)))


def test_the_user_is_the_principals_name():
    assert glue.user_of(SimpleNamespace(principal="User:alice")) == "alice"
    assert glue.user_of(SimpleNamespace()) == "ANONYMOUS"


def test_a_request_time_quota_throttles_a_fetch_and_its_bytes_are_taken_back():
    """request_percentage 1 % of a thread: a fetch whose handling took 500 ms of it is throttled (capped at one
    window, above the 500 ms its 10500 bytes alone would give); those bytes are then taken back, so the next answer
    is measured as if the throttled one carried none (Kafka's unrecordQuotaSensor) — they would throttle it."""
    quotas = {(("client-id", "c"),): {"request_percentage": 1.0, "consumer_byte_rate": 1000.0}}
    edge, conn = _edge(quotas), SimpleNamespace(principal="User:ANONYMOUS")
    assert edge.fetch(_request("c"), conn, 10_500, 500_000_000) == 1000
    assert edge.managers.fetch.record(quotas, "ANONYMOUS", "c", 0, glue.now_ms()) == 0


def test_no_quota_no_throttle():
    edge, conn = _edge({}), SimpleNamespace(principal="User:ANONYMOUS")
    assert edge.fetch(_request("c"), conn, 10**9, 10**9) == 0
    assert edge.request_time(_request("c"), conn, 10**12) == 0
    assert edge.fetch_limit(_request("c"), conn) == float("inf")


def test_the_window_comes_from_the_nodes_config():
    """quota.window.num and quota.window.size.seconds reach every manager (4 x 2 s: one span is 3 windows, 6 s)."""
    config = SimpleNamespace(quota_window_num=4, quota_window_size_seconds=2, controller_quota_window_num=5,
                             controller_quota_window_size_seconds=3)
    edge = glue.QuotaEdge(SimpleNamespace(image=SimpleNamespace(client_quotas={})), config)
    for manager in (edge.managers.produce, edge.managers.fetch, edge.managers.request):
        assert (manager.samples, manager.window_ms) == (4, 2000)
    assert edge.managers.request.max_throttle_ms == 2000
    quotas = {(("user", None),): {"consumer_byte_rate": 10.0}}
    assert edge.managers.fetch.max_value_in_window(quotas, "u", "c") == 60
    assert (edge.mutations.samples, edge.mutations.window_s) == (5, 3)  # controller.quota.window.*


def _api_request(name: str, client_id: str):
    return SimpleNamespace(api=SimpleNamespace(name=name), header=SimpleNamespace(client_id=client_id), size=0)


def test_a_charge_puts_the_request_time_throttle_in_the_answer():
    """request_percentage 1 %: a Metadata request whose handling took 500 ms of the loop is throttled (capped at one
    window, ClientRequestQuotaManager); the answer carries it. The handler returning first fixes the time charged, so
    an answer coming later (a forwarded request's) is not charged for the wait."""
    quotas = {(("client-id", None),): {"request_percentage": 1.0}}
    edge, conn = _edge(quotas), SimpleNamespace(principal="User:ANONYMOUS")
    charge = edge.charge(_api_request("Metadata", "c"), conn, 0)
    charge.busy_ns = 500_000_000
    answer = SimpleNamespace(throttle_time_ms=0)
    assert charge.settle(answer) == 1000 and answer.throttle_time_ms == 1000
    assert edge.charge(_api_request("Vote", "c"), conn, 0) is None  # a cluster action is exempt
    assert edge.charge(_api_request("Produce", "c"), conn, 0) is None  # charged by its own handler


def test_a_charge_without_a_quota_changes_nothing():
    edge, conn = _edge({}), SimpleNamespace(principal="User:ANONYMOUS")
    charge = edge.charge(_api_request("Metadata", "c"), conn, 0)
    charge.handler_returned()
    answer = SimpleNamespace(throttle_time_ms=0)
    assert charge.settle(answer) == 0 and answer.throttle_time_ms == 0


def test_a_request_forwarded_by_another_node_is_not_charged_again():
    """The broker that received it charged its client; the controller does not charge the forwarding link."""
    from kraftwire.server.edge.client import FORWARD_CLIENT_ID

    edge, conn = _edge({(("client-id", None),): {"request_percentage": 1.0}}), SimpleNamespace()
    assert edge.charge(_api_request("CreateTopics", FORWARD_CLIENT_ID), conn, 0) is None
    assert edge.charge(_api_request("CreateTopics", "admin"), conn, 0) is not None


def test_an_enveloped_request_pays_request_time_as_its_client():
    """Kafka's controller charges an Envelope's inner request to the client's principal and client id, and its
    answer carries the throttle time back for the forwarding broker to apply."""
    from kraftwire.protocol import framing
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.envelope import EnvelopedConnection

    answers: list = []
    conn = EnvelopedConnection(SimpleNamespace(listener="CONTROLLER"), "User:alice", "10.0.0.1", answers.append)
    edge = _edge({(("user", "alice"),): {"request_percentage": 1.0}})
    charge = edge.charge(_api_request("CreateTopics", "admin"), conn, 0)
    charge.busy_ns = 500_000_000
    conn.charges[7] = charge
    conn.send_response(w.CreateTopicsResponse(throttle_time_ms=0, topics=[]), 7, 7)
    (envelope,) = answers
    cid, inner = framing.decode_response(envelope.response_data, w.api("CreateTopics").key, 7)
    assert (cid, inner.throttle_time_ms) == (7, 1000)
