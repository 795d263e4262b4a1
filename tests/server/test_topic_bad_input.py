"""Malformed topic requests on a KRaft node, in-process on real sockets and files: each gets Kafka 4.4's answer (code,
message, which entries, which fields) and changes nothing, no traceback is logged and the connection stays open.
Kafka's answers quoted here were taken from Kafka 4.4 itself (``KafkaNode``) for the same requests.

* CreatePartitions naming a topic twice: that topic is answered once, INVALID_REQUEST "Duplicate topic name.", ahead
  of the others, which go ahead (Kafka's ControllerApis.createPartitions).
* DeleteTopics v6 naming a topic by both name and id, or by neither: INVALID_REQUEST for that entry; a name or id
  twice: one INVALID_REQUEST entry; a name whose topic is also named by id: one INVALID_REQUEST entry, nothing
  deleted (ControllerApis.deleteTopics). Kafka checks these before ACLs.
"""

from __future__ import annotations

import logging
import uuid

from kraftwire import error_codes as ec
from kraftwire.ids import ZERO_UUID
from kraftwire.protocol import messages as w
from server.test_acls_enforced import run_as_admin_and_alice
from server.test_kraft_node import Combined, _create

CP = w.CreatePartitionsRequest
DT = w.DeleteTopicsRequest
M = w.MetadataRequest


def _grow(*names: str, count: int = 3):
    return CP(topics=[CP.CreatePartitionsTopic(name=n, count=count, assignments=None) for n in names],
              timeout_ms=5000, validate_only=False)


def _delete(*entries):
    return DT(topics=[DT.DeleteTopicState(name=n, topic_id=i) for n, i in entries], timeout_ms=5000)


async def _partitions(conn) -> dict[str, tuple[uuid.UUID, int]]:
    r = await conn.request(M(topics=None, allow_auto_topic_creation=False), 12)
    return {t.name: (t.topic_id, len(t.partitions)) for t in r.topics}


def _run(tmp_path, caplog, scenario) -> None:
    caplog.set_level(logging.INFO)
    Combined(tmp_path).run(scenario)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_create_partitions_naming_a_topic_twice_refuses_it_once_and_grows_the_others(tmp_path, caplog):
    async def scenario(node, conn):
        for name in ("t", "u"):
            assert (await conn.request(_create(name, 1), 7)).topics[0].error_code == ec.NONE
        r = await conn.request(_grow("u", "t", "t"), 3)
        assert [(x.name, x.error_code, x.error_message) for x in r.results] == [
            ("t", ec.INVALID_REQUEST, "Duplicate topic name."), ("u", ec.NONE, None)]
        r = await conn.request(_grow("t", "t", "t", count=5), 3)
        assert [(x.name, x.error_code, x.error_message) for x in r.results] == [
            ("t", ec.INVALID_REQUEST, "Duplicate topic name.")]
        assert {n: p for n, (_i, p) in (await _partitions(conn)).items()} == {"t": 1, "u": 3}

    _run(tmp_path, caplog, scenario)


def test_delete_topics_with_both_or_neither_name_and_id_or_twice_is_refused_per_entry(tmp_path, caplog):
    async def scenario(node, conn):
        for name in ("t", "u", "v"):
            assert (await conn.request(_create(name, 1), 7)).topics[0].error_code == ec.NONE
        ids = {n: i for n, (i, _p) in (await _partitions(conn)).items()}
        r = await conn.request(_delete(("nope", ids["t"]), (None, ZERO_UUID), ("v", ZERO_UUID)), 6)
        assert [(x.name, x.topic_id, x.error_code, x.error_message) for x in r.responses] == [
            ("nope", ids["t"], ec.INVALID_REQUEST, "You may not specify both topic name and topic id."),
            (None, ZERO_UUID, ec.INVALID_REQUEST, "Neither topic name nor id were specified."),
            ("v", ids["v"], ec.NONE, None)]
        r = await conn.request(_delete(("t", ZERO_UUID), (None, ids["t"])), 6)
        assert [(x.name, x.topic_id, x.error_code, x.error_message) for x in r.responses] == [
            ("t", ids["t"], ec.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied.")]
        r = await conn.request(_delete((None, ids["u"]), (None, ids["u"]), ("t", ZERO_UUID), ("t", ZERO_UUID)), 6)
        assert [(x.name, x.topic_id, x.error_code, x.error_message) for x in r.responses] == [
            (None, ids["u"], ec.INVALID_REQUEST, "Duplicate topic id."),
            ("t", ZERO_UUID, ec.INVALID_REQUEST, "Duplicate topic name.")]
        r = await conn.request(DT(topic_names=["x", "x", "u", "u"], timeout_ms=5000), 5)
        assert [(x.name, x.error_code, x.error_message) for x in r.responses] == [
            ("x", ec.INVALID_REQUEST, "Duplicate topic name."), ("u", ec.INVALID_REQUEST, "Duplicate topic name.")]
        assert sorted(await _partitions(conn)) == ["t", "u"]

    _run(tmp_path, caplog, scenario)


def test_malformed_topic_entries_are_refused_before_acls_are_checked(tmp_path):
    """alice may alter and delete nothing; Kafka still answers her malformed entries INVALID_REQUEST, not
    TOPIC_AUTHORIZATION_FAILED, since ControllerApis checks them first."""
    async def scenario(node, admin, alice):
        assert (await admin.request(_create("t", 1), 7)).topics[0].error_code == ec.NONE
        tid = (await _partitions(admin))["t"][0]
        r = await alice.request(_grow("t", "t"), 3)
        assert [(x.name, x.error_code, x.error_message) for x in r.results] == [
            ("t", ec.INVALID_REQUEST, "Duplicate topic name.")]
        r = await alice.request(_delete(("t", tid), (None, ZERO_UUID), ("t", ZERO_UUID)), 6)
        assert [(x.name, x.error_code, x.error_message) for x in r.responses] == [
            ("t", ec.INVALID_REQUEST, "You may not specify both topic name and topic id."),
            (None, ec.INVALID_REQUEST, "Neither topic name nor id were specified."),
            ("t", ec.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")]  # ControllerApis' ApiError
        assert (await _partitions(admin))["t"][1] == 1

    run_as_admin_and_alice(tmp_path, scenario)
