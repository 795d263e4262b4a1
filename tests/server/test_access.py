"""The ACL edge (``server.access``): the gate's refusals are Kafka's error answers at every version the node serves,
a refused request reaches no handler, forwarded requests are trusted only from a connection allowed CLUSTER_ACTION,
and the configuration names a bad authorizer. The decisions themselves are ``security.authorizer``'s
(``tests/security/test_authorizer.py``); the end-to-end behaviour is ``test_acls_enforced.py``."""

from __future__ import annotations

import uuid

import pytest

from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.errors import ConfigError
from kraftwire.metadata.image import AclEntry, MetadataImage
from kraftwire.protocol import codec, framing, served
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import AclPermissionType as Perm
from kraftwire.security.authorizer import PatternType, ResourceType
from kraftwire.server.edge.access import CLUSTER_OPERATION, Access, host_of, refusal_of
from kraftwire.server.edge.dispatcher import Dispatcher
from kraftwire.server.node.settings import NodeSettings

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


class _Conn:
    def __init__(self, principal: str, peer: str = "10.0.0.7:5555", listener: str = "CLIENT") -> None:
        self.principal, self.peer, self.listener = principal, peer, listener
        self.sent: list = []
        self.closed = False

    def send_response(self, body, version, cid) -> None:
        self.sent.append((body, version, cid))

    def close(self) -> None:
        self.closed = True


def _image(*entries: AclEntry) -> MetadataImage:
    return MetadataImage(acls={uuid.UUID(int=i + 1): e for i, e in enumerate(entries)})


def _cluster_acl(principal: str, op: int) -> AclEntry:
    return AclEntry(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, principal, "*", op, Perm.ALLOW)


@pytest.mark.parametrize("api", sorted(CLUSTER_OPERATION))
def test_a_gate_refusal_carries_the_code_and_encodes_at_every_served_version(api):
    info = w.APIS[served.key(api)]
    request = _controller_requests().get(api) or info.request()
    lo, hi = served.versions(api)
    for version in range(lo, hi + 1):
        body = refusal_of(api, request, version, ec.CLUSTER_AUTHORIZATION_FAILED)
        data = codec.encode(body, version)
        back = codec.decode(type(body), data, version)
        codes = {v for k, v in _walk(back) if k == "error_code"}
        if api == "ElectLeaders" and version == 0:
            codes.discard(0)  # v0 has no top-level error code (decoded as the default); every partition has it
        # DescribeLogDirs before v3 has no error code at all: Kafka answers it with no directories
        assert codes == {ec.CLUSTER_AUTHORIZATION_FAILED} or (api == "DescribeLogDirs" and version < 3
                                                              and not back.results), (api, version, back)


def _controller_requests() -> dict:
    from metadata.test_refusals import _requests

    return _requests()


def _walk(msg):
    for name in getattr(msg, "__slots__", ()):
        value = getattr(msg, name, None)
        yield name, value
        if isinstance(value, list):
            for item in value:
                yield from _walk(item)
        elif hasattr(value, "__slots__"):
            yield from _walk(value)


def _frame(body, version: int) -> bytes:
    return b"".join(bytes(c) for c in framing.encode_request(body, version, 7, "t"))[4:]  # no size prefix


def test_the_gate_answers_refused_requests_itself_and_lets_allowed_ones_through():
    image = _image(_cluster_acl("User:ops", Op.DESCRIBE))
    access = Access(lambda: image, frozenset({"User:admin"}), False)
    d = Dispatcher()
    reached = []
    d.serve("DescribeQuorum", lambda request, conn: reached.append(conn.principal))
    d.gate = access.gate
    body = w.DescribeQuorumRequest(topics=[])
    for who in ("User:admin", "User:ops", "User:eve"):
        conn = _Conn(who)
        d.dispatch(_frame(body, 1), conn)
        if who == "User:eve":
            assert conn.sent and conn.sent[0][0].error_code == ec.CLUSTER_AUTHORIZATION_FAILED and not conn.closed
    assert reached == ["User:admin", "User:ops"]


def test_a_replicas_fetch_needs_cluster_action_and_a_consumers_does_not_at_the_gate():
    """Kafka's KafkaApis answers a follower without CLUSTER_ACTION TOPIC_AUTHORIZATION_FAILED in every partition, NONE
    at the top (checked against Kafka 4.4 at v4, v12 and v15; the fuzzer, tests/fuzz, found kraftwire answering
    CLUSTER_AUTHORIZATION_FAILED at the top instead). A consumer's is checked per topic, in the handler."""
    image = _image(_cluster_acl("User:broker", Op.CLUSTER_ACTION))
    access = Access(lambda: image, frozenset(), False, controller_listeners=frozenset({"CONTROLLER"}))
    for version in (4, 12, 15):
        follower, consumer = _fetch(version, 3), _fetch(version, -1)
        assert access.gate(follower, _Conn("User:broker"))
        eve = _Conn("User:eve")
        assert not access.gate(follower, eve)
        answer = eve.sent[0][0]
        assert answer.error_code == ec.NONE and answer.session_id == 0
        assert [(t.topic, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.responses] == [
            ("t", [(0, ec.TOPIC_AUTHORIZATION_FAILED), (2, ec.TOPIC_AUTHORIZATION_FAILED)])]
        assert access.gate(consumer, _Conn("User:eve"))


def test_every_fetch_on_a_controller_listener_is_the_quorums_and_needs_cluster_action():
    """Kafka's ControllerApis authorizes CLUSTER_ACTION before any Fetch, a consumer's too, and answers the request's
    error response: the code at the top, and in every partition before v13 (FetchRequest.getErrorResponse). The
    fuzzer (tests/fuzz) found kraftwire serving a consumer's Fetch on the controller listener to a principal without
    ACLs."""
    image = _image(_cluster_acl("User:broker", Op.CLUSTER_ACTION))
    access = Access(lambda: image, frozenset(), False, controller_listeners=frozenset({"CONTROLLER"}))
    for version, partitions in ((12, [(0, ec.CLUSTER_AUTHORIZATION_FAILED), (2, ec.CLUSTER_AUTHORIZATION_FAILED)]),
                                (13, None)):
        for replica in (-1, 3):
            assert access.gate(_fetch(version, replica), _Conn("User:broker", listener="CONTROLLER"))
            eve = _Conn("User:eve", listener="CONTROLLER")
            assert not access.gate(_fetch(version, replica), eve)
            answer = eve.sent[0][0]
            assert answer.error_code == ec.CLUSTER_AUTHORIZATION_FAILED and answer.session_id == 9
            got = [[(p.partition_index, p.error_code) for p in t.partitions] for t in answer.responses]
            assert got == ([partitions] if partitions else [])
            codec.encode(answer, version)


def _fetch(version: int, replica: int):
    F = w.FetchRequest
    body = F(replica_id=replica, session_id=9, topics=[F.FetchTopic(topic="t", topic_id=uuid.UUID(int=5), partitions=[
        F.FetchPartition(partition=0), F.FetchPartition(partition=2)])])
    body.replica_state = F.ReplicaState(replica_id=replica)

    class _H:
        correlation_id = 1
    return framing.Request(_H(), w.APIS[served.key("Fetch")], version, body)


def test_cluster_action_and_acl_changes_apply_at_once():
    """The controller's CLUSTER_ACTION check of an Envelope's sender, and host-bound ACLs, follow each new image."""
    state = {"image": _image()}
    access = Access(lambda: state["image"], frozenset(), False)
    broker = _Conn("User:broker")
    assert not access.allows_cluster(broker, Op.CLUSTER_ACTION)
    state["image"] = _image(_cluster_acl("User:broker", Op.CLUSTER_ACTION))
    assert access.allows_cluster(broker, Op.CLUSTER_ACTION)  # a new image's ACLs, without a restart
    state["image"] = _image(AclEntry(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:broker", "10.0.0.8",
                                     Op.WRITE, Perm.ALLOW))
    assert not access.allows_cluster(broker, Op.CLUSTER_ACTION)
    assert not access.topic(broker, "t", Op.WRITE)  # the ACL names another host
    assert access.topic(_Conn("User:broker", "10.0.0.8:1234"), "t", Op.WRITE)


def test_host_of_a_peer():
    assert host_of("127.0.0.1:9092") == "127.0.0.1"
    assert host_of("::1:9092") == "::1"


def _props(extra: str) -> dict:
    return parse_properties("process.roles=broker,controller\nnode.id=1\n"
                            "listeners=CONTROLLER://127.0.0.1:19093,PLAINTEXT://127.0.0.1:19092\n"
                            "controller.listener.names=CONTROLLER\ncontroller.quorum.voters=1@127.0.0.1:19093\n"
                            "log.dirs=/tmp/unused-kraftwire-access\n" + extra)


def test_configuration_names_a_bad_authorizer_and_reads_the_acl_keys():
    with pytest.raises(ConfigError) as bad:
        NodeSettings.from_properties(_props("authorizer.class.name=kafka.security.authorizer.AclAuthorizer\n"))
    assert bad.value.key == "authorizer.class.name" and "StandardAuthorizer" in str(bad.value)
    s = NodeSettings.from_properties(_props(f"authorizer.class.name={STANDARD}\nsuper.users=User:a;User:b\n"
                                            "allow.everyone.if.no.acl.found=true\n"))
    c = s.config
    assert (c.authorizer_class_name, c.super_users, c.allow_everyone_if_no_acl_found) == (
        STANDARD, "User:a;User:b", True)
    assert "authorizer.class.name" not in s.ignored_keys
    access = Access.from_config(c, lambda: _image())
    assert access.super_users == frozenset({"User:a", "User:b"}) and access.allow_everyone
    assert Access.from_config(NodeSettings.from_properties(_props("")).config, lambda: _image()) is None


def test_the_test_server_refuses_an_authorizer(tmp_path):
    from kraftwire.server.node.app import Node

    settings = NodeSettings.from_properties(_props(f"authorizer.class.name={STANDARD}\n"))
    with pytest.raises(ConfigError) as refused:
        Node(settings, topic="roles")
    assert refused.value.key == "authorizer.class.name"


def test_until_the_node_has_caught_up_only_super_users_pass_even_with_allow_everyone():
    caught_up = {"now": False}
    image = _image(AclEntry(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:alice", "*", Op.WRITE, Perm.ALLOW))
    access = Access(lambda: image, frozenset({"User:admin"}), True, lambda: caught_up["now"])
    alice, bob, admin = _Conn("User:alice"), _Conn("User:bob"), _Conn("User:admin")
    assert not access.topic(alice, "t", Op.WRITE) and not access.topic(bob, "free", Op.WRITE)
    assert access.topic(admin, "t", Op.WRITE) and not access.ready
    caught_up["now"] = True
    assert access.topic(alice, "t", Op.WRITE) and not access.topic(bob, "t", Op.WRITE)
    assert access.topic(bob, "free", Op.WRITE)  # no ACL names it: allow.everyone.if.no.acl.found
    caught_up["now"] = False
    assert access.ready and access.topic(alice, "t", Op.WRITE)  # ready for good once caught up
