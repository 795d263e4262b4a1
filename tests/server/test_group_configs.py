"""Group configs (KIP-848) on a KRaft node, in-process on real sockets: IncrementalAlterConfigs on a GROUP resource
goes through the controller (ConfigRecords of resource type 32), DescribeConfigs answers them as Kafka 4.4 does, and
the consumer group coordinator honours a group's consumer.session.timeout.ms and consumer.heartbeat.interval.ms.
Mirrors Kafka's ConsumerGroupHeartbeatRequestTest (testConsumerGroupHeartbeatWithGroupConfig...) and
DescribeConfigs of groups in PlaintextAdminIntegrationTest (testIncrementalAlterAndDescribeGroupConfigs)."""

from __future__ import annotations

import asyncio
import time
import uuid

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from server.test_authorized_operations import _coordinator
from server.test_kraft_node import Combined, _create
from server.test_replication import _until

PROPS = ("offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
         "group.consumer.min.session.timeout.ms=1000\ngroup.consumer.min.heartbeat.interval.ms=100\n")
IA = w.IncrementalAlterConfigsRequest
DC = w.DescribeConfigsRequest
H = w.ConsumerGroupHeartbeatRequest


async def _alter(conn, group: str, ops) -> tuple[int, str | None]:
    r = await conn.request(IA(resources=[IA.AlterConfigsResource(resource_type=32, resource_name=group, configs=[
        IA.AlterableConfig(name=k, config_operation=0 if v is not None else 1, value=v) for k, v in ops])],
        validate_only=False), 1)
    return r.responses[0].error_code, r.responses[0].error_message


async def _described(conn, group: str) -> dict:
    r = await conn.request(DC(resources=[DC.DescribeConfigsResource(resource_type=32, resource_name=group,
                                                                    configuration_keys=None)],
                              include_synonyms=True, include_documentation=False), 4)
    res = r.results[0]
    assert res.error_code == 0, res
    return {c.name: (c.value, c.config_source, [(s.name, s.value, s.source) for s in c.synonyms])
            for c in res.configs}


async def _join(conn, group: str):
    await _coordinator(conn, group)
    return await conn.request(H(group_id=group, member_id=str(uuid.uuid4()), member_epoch=0, rebalance_timeout_ms=5000,
                                subscribed_topic_names=["t"], topic_partitions=[]), 0)


def test_group_configs_are_stored_described_and_honoured(tmp_path):
    async def scenario(node, conn):
        assert (await conn.request(_create("t", 1), 7)).topics[0].error_code == ec.NONE
        # no configs: the broker's values, DEFAULT or STATIC as the properties set them
        got = await _described(conn, "g")
        assert got["consumer.session.timeout.ms"] == ("45000", 5, [
            ("group.consumer.session.timeout.ms", "45000", 5)])
        assert got["consumer.heartbeat.interval.ms"] == ("5000", 5, [
            ("group.consumer.heartbeat.interval.ms", "5000", 5)])
        assert len(got) == 21
        # refused against the broker bounds, with Kafka's words; then set
        assert await _alter(conn, "g", [("consumer.heartbeat.interval.ms", "50")]) == (
            ec.INVALID_CONFIG, "consumer.heartbeat.interval.ms must be in the range 100 to 15000 inclusive.")
        assert await _alter(conn, "", [("consumer.session.timeout.ms", "5000")]) == (
            ec.INVALID_REQUEST, "Default group resources are not allowed.")
        assert await _alter(conn, "g", [("consumer.session.timeout.ms", "1500"),
                                        ("consumer.heartbeat.interval.ms", "200")]) == (ec.NONE, None)
        await _until("group configs", lambda: node.metadata.image.configs.get((32, "g")))
        got = await _described(conn, "g")
        assert got["consumer.session.timeout.ms"] == ("1500", 8, [
            ("consumer.session.timeout.ms", "1500", 8), ("group.consumer.session.timeout.ms", "45000", 5)])
        # the coordinator: the group's heartbeat interval, and its session timeout expires a silent member
        joined = await _join(conn, "g")
        assert joined.error_code == 0 and joined.heartbeat_interval_ms == 200
        other = await _join(conn, "other")
        assert other.error_code == 0 and other.heartbeat_interval_ms == 5000
        start = time.monotonic()
        for _ in range(100):
            d = await conn.request(w.ConsumerGroupDescribeRequest(group_ids=["g", "other"]), 0)
            if not d.groups[0].members:
                break
            await asyncio.sleep(0.1)
        assert not d.groups[0].members and time.monotonic() - start < 8
        assert len(d.groups[1].members) == 1  # the broker's 45 s session
        assert await _alter(conn, "g", [("consumer.session.timeout.ms", None),
                                        ("consumer.heartbeat.interval.ms", None)]) == (ec.NONE, None)
        await _until("configs gone", lambda: not node.metadata.image.configs.get((32, "g")))
        assert (await _join(conn, "g")).heartbeat_interval_ms == 5000

    Combined(tmp_path, extra=PROPS).run(scenario)


def test_configs_tool_with_entity_type_groups(tmp_path, capsys):
    """``kraftwire configs --entity-type groups`` prints what Kafka 4.4's kafka-configs.sh prints."""
    from kraftwire.cli import main

    c = Combined(tmp_path, extra=PROPS)
    boot = ["configs", "--bootstrap-server", f"127.0.0.1:{c.bport}", "--entity-type", "groups"]

    async def scenario(node, _conn):
        def run(*argv):
            code = main([*boot, *argv])
            out = capsys.readouterr()
            return code, out.out, out.err

        assert await asyncio.to_thread(run, "--entity-name", "g", "--describe") == (
            0, "The group 'g' doesn't exist and doesn't have dynamic config.\n", "")
        assert await asyncio.to_thread(run, "--entity-name", "g", "--alter", "--add-config",
                                       "consumer.session.timeout.ms=50000") == (
            0, "Completed updating config for group g.\n", "")
        await _until("group configs", lambda: node.metadata.image.configs.get((32, "g")))
        assert await asyncio.to_thread(run, "--entity-name", "g", "--describe") == (0, (
            "Dynamic configs for group g are:\n"
            "  consumer.session.timeout.ms=50000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:"
            "consumer.session.timeout.ms=50000, DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}\n"), "")
        code, out, _ = await asyncio.to_thread(run, "--entity-name", "g", "--describe", "--all")
        assert code == 0 and out.splitlines()[0] == "All configs for group g are:" and len(out.splitlines()) == 22
        assert out.splitlines()[1] == ("  consumer.assignment.interval.ms=1000 sensitive=false "
                                       "synonyms={DEFAULT_CONFIG:group.consumer.assignment.interval.ms=1000}")
        code, _out, err = await asyncio.to_thread(run, "--entity-default", "--describe")
        assert code == 1 and "--entity-default must not be specified with --describe of groups" in err
        code, _out, err = await asyncio.to_thread(run, "--entity-name", "g", "--alter", "--add-config",
                                                  "consumer.session.timeout.ms=1")
        assert code == 1 and "consumer.session.timeout.ms must be in the range 1000 to 60000 inclusive." in err

    c.run(scenario)


def test_group_configs_need_the_groups_describe_and_alter_configs(tmp_path):
    """ACLs: a group's configs are read with DESCRIBE_CONFIGS and written with ALTER_CONFIGS on the group (Kafka's
    KafkaApis / ControllerApis answer GROUP_AUTHORIZATION_FAILED otherwise)."""
    from kraftwire.security.authorizer import AclOperation as Op
    from kraftwire.security.authorizer import ResourceType
    from server.test_acls_enforced import _acl, _acls, run_as_admin_and_alice
    from server.test_acls_enforced import _until as _until_true

    async def scenario(node, admin, alice):
        r = await admin.request(w.CreateAclsRequest(creations=[
            _acl(ResourceType.GROUP, "mine", "User:alice", Op.ALTER_CONFIGS)]), 3)
        assert r.results[0].error_code == 0
        await _until_true(lambda: _acls(node, 1))
        # with the code's default message, as Kafka 4.4's controller answers (IncrementalAlterConfigs-v1-no-acl)
        assert await _alter(alice, "other", [("consumer.session.timeout.ms", "50000")]) == (
            ec.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.")
        assert (await _alter(alice, "mine", [("consumer.session.timeout.ms", "50000")]))[0] == ec.NONE
        d = await alice.request(DC(resources=[DC.DescribeConfigsResource(
            resource_type=32, resource_name=g, configuration_keys=None) for g in ("other", "mine")],
            include_synonyms=False, include_documentation=False), 4)
        # ALTER_CONFIGS implies DESCRIBE_CONFIGS
        assert [(x.error_code, len(x.configs)) for x in d.results] == [(ec.GROUP_AUTHORIZATION_FAILED, 0),
                                                                       (0, 21)]

    run_as_admin_and_alice(tmp_path, scenario)
