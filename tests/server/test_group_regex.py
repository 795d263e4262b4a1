"""KIP-848 topic regexes from clients on a real node: a pattern that makes a backtracking engine run forever is
matched in linear time (RE2, as Kafka's RE2/J), so the node answers it and its other clients meanwhile; a pattern
RE2/J refuses is answered INVALID_REGULAR_EXPRESSION with Kafka 4.4's message, after the member checks Kafka makes
first, and changes nothing. Kafka's answers quoted here were taken from Kafka 4.4 itself (``KafkaNode``) for the
same requests; the pattern-by-pattern comparison with RE2/J is ``tests/test_re2j.py``."""

from __future__ import annotations

import asyncio
import logging
import uuid

from harness import processes, roles

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection
from server.test_authorized_operations import _coordinator
from server.test_kraft_node import Combined, _create

H = w.ConsumerGroupHeartbeatRequest
M = w.MetadataRequest
CGD = w.ConsumerGroupDescribeRequest
PROPS = "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
#: 60 characters: (y+)+z against it takes a backtracking engine some 2**60 steps, i.e. forever
LONG_Y = "y" * 60


def _join(group: str, regex: str | None, member_id: str | None = None, epoch: int = 0, names=None):
    return H(group_id=group, member_id=member_id or uuid.uuid4().hex[:22], member_epoch=epoch, instance_id=None,
             rack_id=None, rebalance_timeout_ms=30_000 if epoch == 0 else -1, subscribed_topic_names=names,
             subscribed_topic_regex=regex, server_assignor=None, topic_partitions=[] if epoch == 0 else None)


def test_a_backtracking_regex_is_answered_and_the_node_answers_others_meanwhile(tmp_path):
    """The issue's case: ``(y+)+z`` with a topic ``yyyy…`` held the node's event loop (27 characters: 8-16 s; 60:
    forever). Now the heartbeat is answered (member epoch 1, subscribed to nothing: the pattern matches no topic,
    as Kafka answers it) and a Metadata request sent on another connection while it is pending is answered too."""
    with processes.CombinedNode(tmp_path, PROPS) as node:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")

        async def scenario():
            admin = await KafkaConnection.open("127.0.0.1", node.port)
            member = await KafkaConnection.open("127.0.0.1", node.port)
            try:
                created = await admin.request(_create(LONG_Y, 1), 7, timeout=30)
                assert created.topics[0].error_code == ec.NONE
                await _coordinator(member, "g")
                beat = asyncio.ensure_future(member.request(_join("g", "(y+)+z"), 1, timeout=60))
                meta = await admin.request(M(topics=[M.MetadataRequestTopic(name=LONG_Y)]), 12, timeout=60)
                answer = await beat
            finally:
                await admin.close()
                await member.close()
            assert [(t.name, t.error_code) for t in meta.topics] == [(LONG_Y, ec.NONE)]
            assert (answer.error_code, answer.error_message, answer.member_epoch) == (ec.NONE, None, 1)
            assert answer.assignment is not None and answer.assignment.topic_partitions == []

        asyncio.run(scenario())


#: pattern -> Kafka 4.4's ErrorMessage for it (its group coordinator's words around RE2/J's description)
REFUSED = {
    "(a)\\1": "SubscribedTopicRegex `(a)\\1` is not a valid regular expression: invalid escape sequence.",
    "(?=x)": "SubscribedTopicRegex `(?=x)` is not a valid regular expression: invalid or unsupported Perl syntax.",
    "a)": "SubscribedTopicRegex `a)` is not a valid regular expression: regexp/syntax: internal error.",
    "x{1001}": "SubscribedTopicRegex `x{1001}` is not a valid regular expression: invalid repeat count.",
    "(?P<n>a)(?P<n>b)": "SubscribedTopicRegex `(?P<n>a)(?P<n>b)` is not a valid regular expression: duplicate "
                        "capture group name.",
    "\\C": "SubscribedTopicRegex `\\C` is not a valid regular expression: invalid escape sequence.",
}


def test_a_regex_re2j_refuses_is_answered_with_kafkas_message_and_changes_nothing(tmp_path, caplog):
    """Mirrors Kafka's GroupMetadataManagerTest (testConsumerGroupMemberJoinsWithInvalidRegex...): the pattern is
    checked once the member is known, so a fenced or unknown member hears that first, a leaving member leaves, and a
    refused join leaves no group behind."""
    caplog.set_level(logging.INFO)

    async def scenario(node, conn):
        assert (await conn.request(_create("yy", 1), 7)).topics[0].error_code == ec.NONE
        await _coordinator(conn, "g")
        for pattern, message in REFUSED.items():
            r = await conn.request(_join("bad", pattern), 1)
            assert (r.error_code, r.error_message, r.member_epoch) == (ec.INVALID_REGULAR_EXPRESSION, message, 0)
        described = await conn.request(CGD(group_ids=["bad"], include_authorized_operations=False), 0)
        assert described.groups[0].error_code == ec.GROUP_ID_NOT_FOUND  # the refused joins created no group

        joined = await conn.request(_join("g", "y.*", member_id="m" * 22), 1)
        # the new group's own bump and the regex's: kraftwire resolves a regex at once, where Kafka 4.4 resolves it
        # in the background (answering epoch 1 first, then 2 once resolved)
        assert (joined.error_code, joined.member_epoch) == (ec.NONE, 2)
        fenced = await conn.request(_join("g", "(?=x)", member_id="m" * 22, epoch=7), 1)
        assert fenced.error_code == ec.FENCED_MEMBER_EPOCH
        unknown = await conn.request(_join("g", "(?=x)", member_id="z" * 22, epoch=2), 1)
        assert (unknown.error_code, unknown.error_message) == (
            ec.UNKNOWN_MEMBER_ID, f"Member {'z' * 22} is not a member of group g.")
        described = await conn.request(CGD(group_ids=["g"], include_authorized_operations=False), 0)
        (member,) = described.groups[0].members
        assert (member.subscribed_topic_regex, member.member_epoch) == ("y.*", 2)
        left = await conn.request(_join("g", "(?=x)", member_id="m" * 22, epoch=-1), 1)
        assert (left.error_code, left.member_epoch) == (ec.NONE, -1)

    Combined(tmp_path, PROPS).run(scenario)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
