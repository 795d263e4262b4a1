"""The fuzzer's checks can fail: against a fake node that misbehaves on purpose (on a real socket) the runner reports
a hang, a request left unanswered behind an answered probe, an answer with someone else's correlation id, an
UNKNOWN_SERVER_ERROR, a traceback in the log, and a request Kafka refuses accepted; error codes are read at the
answer's version only."""

from __future__ import annotations

import socket
import struct
import threading
import uuid

import pytest

from fuzz import generator as g
from fuzz import runner as r
from kraftwire.protocol import framing
from kraftwire.protocol import messages as w

POOLS = g.Pools(topics={"fuzz-a": (uuid.UUID(int=7), 3)}, cluster_id="abc", node_ids=(1,))


class FakeNode:
    """Answers ApiVersions; answers DescribeGroups as ``mode`` says: "ok", "silent", "late" (never, but the requests
    after it are), "stranger" (someone else's correlation id), "unknown" (error -1), "ok" plus ``log_line``."""

    def __init__(self, tmp_path, mode: str, log_line: str = "") -> None:
        self.mode, self.log_line = mode, log_line
        self.stderr_path = str(tmp_path / "node.log")
        open(self.stderr_path, "w").close()
        self.node_id, self.running = 1, True
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn) -> None:
        buf = b""
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                while len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
                    size = struct.unpack_from(">i", buf)[0]
                    frame, buf = buf[4:4 + size], buf[4 + size:]
                    conn.sendall(self._answer(framing.decode_request(frame)))

    def _answer(self, request) -> bytes:
        cid, version = request.header.correlation_id, request.version
        if request.api.name == "ApiVersions":
            body = w.ApiVersionsResponse(api_keys=[])
        elif self.mode in ("silent", "late"):
            if self.mode == "silent":
                threading.Event().wait(5)
            return b""
        else:
            group = w.DescribeGroupsResponse.DescribedGroup(group_id="g", error_code=-1 if self.mode == "unknown" else 16)
            body = w.DescribeGroupsResponse(groups=[group])
            cid = cid + 1 if self.mode == "stranger" else cid
            if self.log_line:
                with open(self.stderr_path, "a") as f:
                    f.write(self.log_line)
        return b"".join(framing.encode_response(body, version, cid))


def _run_one(tmp_path, monkeypatch, mode: str, log_line: str = ""):
    monkeypatch.setattr(r, "ANSWER_TIMEOUT_S", 1.0)
    node = FakeNode(tmp_path, mode, log_line)
    target = r.Target("fake", [node], node.port, None, POOLS)
    runner = r.Runner(target, r.Stream("client", node.port), 1, {15: (5, 5)}, "tests/fuzz/x.py::t")
    key = w.api("DescribeGroups").key
    frame, _ = g.encode_frame(key, 5, 77, "fuzz", {"groups": ["g"], "include_authorized_operations": False})
    case = g.Case(1, "client", 0, key, 5, "schema", {}, "fuzz", frame)
    runner.one(case, framing.decode_request(frame[4:]))
    node.sock.close()
    return [f.problem for f in runner.report.failures]


@pytest.mark.parametrize("mode, log_line, problem", [
    ("ok", "", None),
    ("silent", "", "no answer and the connection still open"),
    ("late", "", "the request went unanswered: the probe behind it was answered first"),
    ("stranger", "", "an answer with correlation id 78; the request's is 77"),
    ("unknown", "", "UNKNOWN_SERVER_ERROR at ['groups[0].error_code']"),
    ("ok", "ERROR boom\nTraceback (most recent call last):\n", "a node logged a traceback"),
])
def test_the_runner_reports_each_misbehaviour(tmp_path, monkeypatch, mode, log_line, problem):
    problems = _run_one(tmp_path, monkeypatch, mode, log_line)
    if problem is None:
        assert problems == []
    else:
        assert problems and problems[0].startswith(problem), problems


def test_error_codes_are_read_at_the_answers_version():
    R = w.ElectLeadersResponse
    answer = R(error_code=0, replica_election_results=[R.ReplicaElectionResult(topic="t", partition_result=[
        R.PartitionResult(partition_id=0, error_code=31)])])
    assert r.error_codes(answer, 0) == [("replica_election_results[0].partition_result[0].error_code", 31)]
    assert r.error_codes(answer, 1)[0] == ("error_code", 0)
    assert r._refused(answer, 0) and not r._refused(answer, 1)


def test_kafkas_refusals_are_known_without_asking_kafka():
    from fuzz.kafka_rules import broken_rule
    from kraftwire.records import RecordBatchBuilder

    def batch():
        b = RecordBatchBuilder()
        b.append(None, b"v", timestamp=g.BATCH_TIME_MS)
        return b.build()

    P, PR = w.ProduceRequest, w.ProduceResponse
    produce = P(acks=-1, timeout_ms=1, topic_data=[P.TopicProduceData(name="t", partition_data=[
        P.PartitionProduceData(index=0, records=batch() + batch()), P.PartitionProduceData(index=1, records=batch())])])
    request = framing.Request(None, w.api("Produce"), 9, produce)

    def answer(*codes):
        return PR(responses=[PR.TopicProduceResponse(name="t", partition_responses=[
            PR.PartitionProduceResponse(index=i, error_code=c) for i, c in enumerate(codes)])])
    assert broken_rule(request, answer(87, 0)) == ""
    assert broken_rule(request, answer(0, 0)) == ("partitions whose records are not exactly one record batch were "
                                                  "accepted: [('t', 0)]")
    D, DR = w.DeleteTopicsRequest, w.DeleteTopicsResponse
    both = framing.Request(None, w.api("DeleteTopics"), 6, D(topics=[D.DeleteTopicState(name="t", topic_id=uuid.UUID(
        int=9))]))
    accepted = DR(responses=[DR.DeletableTopicResult(name="t", topic_id=uuid.UUID(int=9), error_code=0)])
    assert "must be INVALID_REQUEST" in broken_rule(both, accepted)
    accepted.responses[0].error_code = 42
    assert broken_rule(both, accepted) == ""


def test_an_answer_that_would_quote_a_name_at_the_string_limit_may_be_kafkas_unknown_server_error():
    from fuzz.kafka_rules import kafka_fails_too

    CT = w.CreateTopicsRequest
    for name, fails in (("a" * 32767, True), ("\u00e9" * 16383, True), ("a" * 32000, False), ("t", False)):
        request = framing.Request(None, w.api("CreateTopics"), 7, CT(topics=[CT.CreatableTopic(name=name)]))
        assert kafka_fails_too(request) is fails, len(name)


def test_a_marker_of_unknown_transaction_version_may_be_kafkas_unknown_server_error():
    """WriteTxnMarkers v2 with TransactionVersion -1 (TV_UNKNOWN) fails Kafka 4.4's append (checked against a
    Kafka 4.4 node); v1 carries no version, and any other value is a rule, not a failure."""
    from fuzz.kafka_rules import kafka_fails_too

    M = w.WriteTxnMarkersRequest
    for version, tv, fails in ((2, -1, True), (2, 0, False), (2, 2, False), (2, -2, False), (1, -1, False)):
        body = M(markers=[M.WritableTxnMarker(producer_id=1, producer_epoch=0, transaction_result=True, topics=[],
                                              coordinator_epoch=0, transaction_version=tv)])
        assert kafka_fails_too(framing.Request(None, w.api("WriteTxnMarkers"), version, body)) is fails, (version, tv)
