"""Metadata requests naming topics by id, on a KRaft node in-process on real sockets and files, answered as Kafka 4.4
answers them (taken from Kafka 4.4 itself, ``KafkaNode``, for the same requests), with no traceback logged and the
connection kept open:

* v10/v11 naming a topic by id (a null name, or any id): the whole request is refused, every topic INVALID_REQUEST
  (a null name answered as ""), no brokers, no cluster id, controller -1 (KafkaApis.handleTopicMetadataRequest:
  "Topic name can not be null for version …" / "Topic IDs are not supported in requests for version …"; the
  message has no field in the response).
* From v12 ids are topics: when any id is given the ids are answered, each once, and the names left out; a null
  name without any id fails the whole request with UNKNOWN_SERVER_ERROR, as Kafka 4.4's broker answers it.
* A topic named twice is answered once (Kafka reads the names into a set).
"""

from __future__ import annotations

import asyncio
import uuid

from harness import processes

from kraftwire import error_codes as ec
from kraftwire.ids import ZERO_UUID
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once
from server.test_kraft_node import _create
from server.test_topic_bad_input import _partitions, _run

M = w.MetadataRequest
NO_OPERATIONS = -2147483648


def test_metadata_naming_topics_by_id_is_answered_as_kafka_4_4_per_version(tmp_path, caplog):
    async def scenario(node, conn):
        for name in ("t", "u"):
            assert (await conn.request(_create(name, 2), 7)).topics[0].error_code == ec.NONE
        ids = {n: i for n, (i, _p) in (await _partitions(conn)).items()}
        unknown = uuid.UUID(int=7)
        T = M.MetadataRequestTopic

        async def ask(version, *topics):
            r = await conn.request(M(topics=list(topics), allow_auto_topic_creation=True,
                                     include_topic_authorized_operations=False), version)
            return (len(r.brokers), r.cluster_id, r.controller_id,
                    [(t.name, t.topic_id, t.error_code, t.is_internal, len(t.partitions), t.topic_authorized_operations)
                     for t in r.topics])

        def refused(code, *topics):  # Kafka's whole-request error answer
            return 0, None, -1, [(name, tid, code, False, 0, NO_OPERATIONS) for name, tid in topics]

        for v in (10, 11):
            assert await ask(v, T(name=None, topic_id=ids["u"])) == refused(ec.INVALID_REQUEST, ("", ids["u"]))
            assert await ask(v, T(name=None, topic_id=ZERO_UUID), T(name="t", topic_id=ZERO_UUID)) == refused(
                ec.INVALID_REQUEST, ("", ZERO_UUID), ("t", ZERO_UUID))
            assert await ask(v, T(name="t", topic_id=ids["u"]), T(name="new", topic_id=ZERO_UUID)) == refused(
                ec.INVALID_REQUEST, ("t", ids["u"]), ("new", ZERO_UUID))
        assert await ask(12, T(name=None, topic_id=ZERO_UUID), T(name="t", topic_id=ZERO_UUID)) == refused(
            ec.UNKNOWN_SERVER_ERROR, ("", ZERO_UUID), ("t", ZERO_UUID))
        *_, topics = await ask(12, T(name=None, topic_id=ids["u"]), T(name=None, topic_id=unknown),
                               T(name="t", topic_id=ZERO_UUID), T(name=None, topic_id=ids["u"]))
        assert topics == [("u", ids["u"], ec.NONE, False, 2, NO_OPERATIONS),
                          (None, unknown, ec.UNKNOWN_TOPIC_ID, False, 0, NO_OPERATIONS)]
        *_, topics = await ask(12, T(name="t", topic_id=ids["u"]))
        assert [t[:3] for t in topics] == [("u", ids["u"], ec.NONE)]
        *_, topics = await ask(11, T(name="t", topic_id=ZERO_UUID), T(name="t", topic_id=ZERO_UUID))
        assert [t[:3] for t in topics] == [("t", ids["t"], ec.NONE)]
        assert sorted(await _partitions(conn)) == ["t", "u"]  # nothing auto-created by a refused request

    _run(tmp_path, caplog, scenario)


def test_the_test_server_names_and_refuses_topics_as_a_broker_does(tmp_path):
    """``kraftwire test-server`` serves its Raft log as one topic through its own Metadata handler: the same rules,
    and no traceback in its log."""
    cluster = processes.Cluster(str(tmp_path), 1, **processes.SERVE_ONLY,
                                extra_props="kraftwire.metadata.log.topic=q\n")
    try:
        cluster.start_all()
        cluster.wait_for_leader()
        node = cluster.nodes[1]
        T = M.MetadataRequestTopic

        def ask(version, *topics):
            return asyncio.run(request_once("127.0.0.1", node.port, M(topics=list(topics)), version, timeout=10))

        (served,) = ask(12, T(name="q")).topics
        refused = ask(10, T(name=None, topic_id=served.topic_id), T(name="q"))
        assert (refused.brokers, refused.controller_id) == ([], -1)
        assert [(t.name, t.topic_id, t.error_code) for t in refused.topics] == [
            ("", served.topic_id, ec.INVALID_REQUEST), ("q", ZERO_UUID, ec.INVALID_REQUEST)]
        assert [t.error_code for t in ask(12, T(name=None)).topics] == [ec.UNKNOWN_SERVER_ERROR]
        unknown = uuid.UUID(int=7)
        by_id = ask(12, T(name=None, topic_id=served.topic_id), T(name=None, topic_id=unknown), T(name="q"))
        assert [(t.name, t.topic_id, t.error_code) for t in by_id.topics] == [
            ("q", served.topic_id, ec.NONE), (None, unknown, ec.UNKNOWN_TOPIC_ID)]
        assert "Traceback" not in node.stderr()
    finally:
        cluster.close()
