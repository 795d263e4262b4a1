"""The conformance runner's rules for the "sasl-acl" and "three-node" configurations, without nodes: SCRAM tokens
compared by their shape, ACL entries matched by their content and their host compared as it is, a configuration's
logins, node changes, and a step's login, connection and node reaching the pair."""

from __future__ import annotations

import pytest

from conformance.pair import CONFIGURATIONS, CONFIGURED, Configuration
from conformance.runner import Comparison, Mapping, NodeChange, Scenario, Step, run_scenario, sasl_shape

from kraftwire.protocol import messages as w
from kraftwire.security.sasl.client import SaslLogin

DA = w.DescribeAclsResponse


def test_scram_server_messages_compare_without_what_each_node_picks():
    first = b"r=clientnonce%s,s=%s,i=4096"
    assert sasl_shape(first % (b"abc", b"c2FsdA==")) == sasl_shape(first % (b"xyz12", b"b3RoZXI="))
    assert sasl_shape(first % (b"abc", b"c2FsdA==")) != sasl_shape(b"r=clientnonceabc,s=c2FsdA==,i=8192")
    assert sasl_shape(b"v=c2ln") == sasl_shape(b"v=b3RoZXI=") != sasl_shape(b"e=invalid-proof")
    assert sasl_shape(b"") == b"" and sasl_shape(b"\0alice\0secret") == b"\0alice\0secret"


def _acls(*entries):
    return DA(resources=[DA.DescribeAclsResource(resource_type=2, resource_name="ns.a", pattern_type=3, acls=[
        DA.AclDescription(principal=p, host=h, operation=3, permission_type=3) for p, h in entries])])


def test_acl_entries_match_by_content_and_their_host_is_not_a_nodes():
    mapping = Mapping()
    mapping.bind("host", "127.0.0.1", "localhost")  # the nodes' listener hosts
    same = Comparison(mapping, "ns", 3).run("DescribeAcls", _acls(("User:a", "*"), ("User:b", "127.0.0.1")),
                                            _acls(("User:b", "127.0.0.1"), ("User:a", "*")))
    assert [d.path for d in same] == []  # matched by content; their order carries nothing (identity hashes)
    other = Comparison(mapping, "ns", 3).run("DescribeAcls", _acls(("User:a", "127.0.0.1")),
                                             _acls(("User:a", "localhost")))
    assert {d.path for d in other} == {"DescribeAcls.resources[2,{ns}.a].acls[User:a,127.0.0.1,3,3]",
                                       "DescribeAcls.resources[2,{ns}.a].acls[User:a,localhost,3,3]"}


def test_a_configuration_names_its_logins():
    admin, alice = SaslLogin("PLAIN", "admin", "a"), SaslLogin("SCRAM-SHA-256", "alice", "b")
    config = Configuration("c", logins=(admin, alice))
    assert (config.login(CONFIGURED), config.login("alice"), config.login(None)) == (admin, alice, None)
    with pytest.raises(KeyError):
        config.login("carol")
    assert Configuration("plain").login(CONFIGURED) is None
    assert CONFIGURATIONS["sasl-acl"].login(CONFIGURED).username == "admin"
    assert CONFIGURATIONS["three-node"].nodes == 3 and CONFIGURATIONS["single"].nodes == 1


def test_a_node_is_stopped_or_started():
    with pytest.raises(ValueError):
        NodeChange("restart", 1)


class _Recorder:
    """A pair whose both sides answer every request, recording how each was asked, and node changes."""

    machine = {side: {} for side in ("kafka", "kraftwire")}

    def __init__(self) -> None:
        self.asked, self.changes, self.opened = [], [], []

    async def ask(self, side, body, version, timeout=None, login=CONFIGURED, node=None, header_version=None):
        self.asked.append((side, type(body).__name__, login, node))
        return w.HeartbeatResponse(error_code=0)

    async def connect(self, side, login=CONFIGURED, timeout=None, node=None):
        self.opened.append((side, login, node))
        recorder = self

        class Conn:
            async def request(self, body, version, timeout=None):
                recorder.asked.append((side, type(body).__name__, "session", node))
                return w.HeartbeatResponse(error_code=0)

            async def close(self):
                pass

        return Conn()

    def stop_node(self, node):
        self.changes.append(("stop", node))

    def start_node(self, node):
        self.changes.append(("start", node))

    def log_size(self):
        return ()

    def problems_since(self, offsets):
        return []


def test_steps_reach_the_pair_with_their_login_connection_and_node():
    pair = _Recorder()
    hb = w.HeartbeatRequest(group_id="{ns}.g")
    outcome = run_scenario(Scenario("Heartbeat", 0, "routing", [
        Step(hb, 0, login="alice", node=2), NodeChange("stop", 3), Step(hb, 0, login=None, connection="c"),
        Step(hb, 0, login=None, connection="c"), NodeChange("start", 3)]), pair)
    assert outcome.differences == [] and pair.changes == [("stop", 3), ("start", 3)]
    assert sorted(pair.asked)[:2] == [("kafka", "HeartbeatRequest", "alice", 2),
                                      ("kafka", "HeartbeatRequest", "session", None)]
    assert sorted(pair.opened) == [("kafka", None, None), ("kraftwire", None, None)]  # one connection per side
    assert len(pair.asked) == 6
