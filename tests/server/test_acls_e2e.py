"""ACLs end to end on a KRaft node in-process (``broker,controller``) with
``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer`` and ``super.users=User:ANONYMOUS``,
so the PLAINTEXT admin clients are super users. The node is driven by ``kraftwire acls`` (kafka-acls.sh: --add,
--list, --remove with and without --force, --bootstrap-controller), by kafka-python's ``describe_acls`` and by
confluent-kafka's ``create_acls``/``describe_acls``/``delete_acls``. The ACLs are checked in the image, in the
metadata log on disk, in a snapshot, and after a restart. Without an authorizer, Kafka answers SECURITY_DISABLED."""

from __future__ import annotations

import asyncio
import io
import sys
import time

from kraftwire.cli import main as cli_main
from kraftwire.metadata import records as serde
from kraftwire.metadata.snapshot import decode_snapshot
from kraftwire.protocol import messages as w

from server.test_kraft_node import Combined, _online

AUTHORIZER = ("authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
              "super.users=User:ANONYMOUS\n")
TOPIC, GROUP, CLUSTER = 2, 3, 4
LITERAL, PREFIXED = 3, 4
READ, WRITE, CREATE, DESCRIBE, IDEMPOTENT_WRITE = 3, 4, 5, 8, 12
ALLOW = 3
TIMEOUT_S = 20


def rows(image) -> set[tuple]:
    return {(a.resource_type, a.resource_name, a.pattern_type, a.principal, a.host, a.operation, a.permission_type)
            for a in image.acls.values()}


async def _until(check, what: str, timeout_s: float = 10.0):
    for _ in range(int(timeout_s / 0.02)):
        value = check()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


class Tool:
    """``kraftwire acls ...`` run as the CLI runs it (in a thread: it has its own event loop), stdout captured."""

    def __init__(self, capsys, monkeypatch) -> None:
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    async def __call__(self, *argv: str, stdin: str = "") -> tuple[int, str]:
        self.capsys.readouterr()
        self.monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        rc = await asyncio.to_thread(cli_main, ["acls", *argv])
        return rc, self.capsys.readouterr().out


def _topic_block(name: str, *lines: str, pattern: str = "LITERAL") -> str:
    body = "\n".join(f"\t{line}" for line in lines)
    return (f"`ResourcePattern(resourceType=TOPIC, name={name}, patternType={pattern})`: \n {body} \n\n")


def test_kafka_acls_and_real_admin_clients_manage_acls_on_an_authorizing_node(tmp_path, capsys, monkeypatch):
    c = Combined(tmp_path, AUTHORIZER + "metadata.log.max.snapshot.interval.ms=200\n")
    acls = Tool(capsys, monkeypatch)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            boot = ["--bootstrap-server", f"127.0.0.1:{c.bport}"]
            alice_read = "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
            alice_write = "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)"

            # --add: Kafka's lines, the records committed and folded before the tool returns
            rc, out = await acls(*boot, "--add", "--allow-principal", "User:alice", "--operation", "Read",
                                 "--operation", "Write", "--topic", "t")
            assert (rc, out) == (0, "Adding ACLs for resource " + _topic_block("t", alice_read, alice_write))
            alice = {(TOPIC, "t", LITERAL, "User:alice", "*", op, ALLOW) for op in (READ, WRITE)}
            await _until(lambda: rows(node.metadata.image) == alice, "alice's ACLs in the image")
            rc, _ = await acls(*boot, "--add", "--allow-principal", "User:alice", "--operation", "read", "--topic", "t")
            assert rc == 0 and len(node.metadata.image.acls) == 2  # the same ACL is not written twice

            # --producer --idempotent on a prefix, through the controller listener
            rc, out = await acls("--bootstrap-controller", f"127.0.0.1:{c.cport}", "--add", "--producer",
                                 "--idempotent", "--allow-principal", "User:bob", "--topic", "p-",
                                 "--resource-pattern-type", "PREFIXED")
            assert rc == 0, out
            assert "Adding ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, " \
                   "patternType=LITERAL)`: \n \t(principal=User:bob, host=*, operation=IDEMPOTENT_WRITE, " \
                   "permissionType=ALLOW) \n" in out
            bob = {(TOPIC, "p-", PREFIXED, "User:bob", "*", op, ALLOW) for op in (WRITE, DESCRIBE, CREATE)}
            bob |= {(CLUSTER, "kafka-cluster", LITERAL, "User:bob", "*", IDEMPOTENT_WRITE, ALLOW)}
            await _until(lambda: rows(node.metadata.image) == alice | bob, "bob's ACLs in the image")

            # --list: a resource (LITERAL by default), everything, one principal
            rc, out = await acls(*boot, "--list", "--topic", "t")
            assert (rc, out) == (0, "Current ACLs for resource " + _topic_block("t", alice_read, alice_write))
            rc, out = await acls(*boot, "--list", "--topic", "p-")
            assert (rc, out) == (0, "")  # the prefixed ACLs are not LITERAL p-
            rc, out = await acls(*boot, "--list", "--topic", "p-x", "--resource-pattern-type", "match")
            assert rc == 0 and out.startswith("Current ACLs for resource " + _topic_block(
                "p-", "(principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW)",
                "(principal=User:bob, host=*, operation=CREATE, permissionType=ALLOW)",
                "(principal=User:bob, host=*, operation=DESCRIBE, permissionType=ALLOW)", pattern="PREFIXED"))
            rc, out = await acls(*boot, "--list")
            assert rc == 0 and out.count("Current ACLs for resource") == 3
            rc, out = await acls(*boot, "--list", "--principal", "User:bob")
            assert rc == 0 and out.startswith("ACLs for principal `User:bob`\n") and "User:alice" not in out
            assert out.count("Current ACLs for resource") == 2

            # kafka-python's admin client
            def kafka_python():
                from kafka import KafkaAdminClient
                from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                                         ResourcePatternFilter, ResourceType)

                admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{c.bport}", request_timeout_ms=TIMEOUT_S * 1000)
                try:
                    found, error = admin.describe_acls(ACLFilter(
                        principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                        resource_pattern=ResourcePatternFilter(ResourceType.TOPIC, "t",
                                                               ACLResourcePatternType.LITERAL)))
                    return sorted((a.principal, a.host, int(a.operation), int(a.permission_type),
                                   a.resource_pattern.resource_name) for a in found), error.__name__
                finally:
                    admin.close()

            found, error = await asyncio.to_thread(kafka_python)
            assert error == "NoError"
            assert found == [("User:alice", "*", READ, ALLOW, "t"), ("User:alice", "*", WRITE, ALLOW, "t")]

            # confluent-kafka's admin client: create, describe, delete
            def confluent():
                from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType,
                                                   AdminClient, ResourcePatternType, ResourceType)

                admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{c.bport}"})
                carol = AclBinding(ResourceType.GROUP, "g", ResourcePatternType.LITERAL, "User:carol", "*",
                                   AclOperation.READ, AclPermissionType.ALLOW)
                for future in admin.create_acls([carol]).values():
                    future.result(TIMEOUT_S)
                described = admin.describe_acls(AclBindingFilter(
                    ResourceType.GROUP, "g", ResourcePatternType.MATCH, None, None, AclOperation.ANY,
                    AclPermissionType.ANY)).result(TIMEOUT_S)
                deleted = [binding for future in admin.delete_acls([AclBindingFilter(
                    ResourceType.GROUP, None, ResourcePatternType.ANY, "User:carol", None, AclOperation.ANY,
                    AclPermissionType.ANY)]).values() for binding in future.result(TIMEOUT_S)]
                return described == [carol], deleted == [carol]

            assert await asyncio.to_thread(confluent) == (True, True)
            await _until(lambda: rows(node.metadata.image) == alice | bob, "carol's ACL gone again")

            # --remove asks first; "n" keeps the ACLs, --force does not ask
            rc, out = await acls(*boot, "--remove", "--topic", "t", stdin="n\n")
            assert rc == 0 and out == ("Are you sure you want to delete all ACLs for resource filter "
                                       "`ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`? (y/n)\n")
            assert rows(node.metadata.image) == alice | bob
            rc, out = await acls(*boot, "--remove", "--topic", "t", "--allow-principal", "User:alice",
                                 "--operation", "Write", stdin="y\n")
            assert rc == 0 and out.startswith("Are you sure you want to remove ACLs: \n \t" + alice_write)
            await _until(lambda: rows(node.metadata.image) == (alice | bob) - {
                (TOPIC, "t", LITERAL, "User:alice", "*", WRITE, ALLOW)}, "alice's WRITE removed")
            rc, out = await acls(*boot, "--remove", "--force", "--topic", "t")
            assert (rc, out) == (0, "")
            await _until(lambda: rows(node.metadata.image) == bob, "alice's ACLs removed")
            rc, out = await acls(*boot, "--list", "--topic", "t")
            assert (rc, out) == (0, "")

            # a snapshot holds the ACLs left
            def snapshot_acls():
                for path in sorted((c.logs / "__cluster_metadata-0").glob("*.checkpoint"), reverse=True):
                    found = {(r.message.resource_type, r.message.resource_name, r.message.pattern_type,
                              r.message.principal, r.message.host, r.message.operation, r.message.permission_type)
                             for r in decode_snapshot(path.read_bytes()).records
                             if isinstance(r.message, w.AccessControlEntryRecord)}
                    return found == bob
                return False

            await _until(snapshot_acls, "a snapshot with bob's ACLs", timeout_s=15)
            return rows(node.metadata.image)
        finally:
            await node.shutdown()

    started = time.monotonic()
    before = asyncio.run(main())
    kinds = [type(serde.decode(r.value).message).__name__ for b in c.batches() if not b.is_control for r in b]
    assert kinds.count("AccessControlEntryRecord") == 2 + 4 + 1  # alice, bob, carol: each ACL written once
    assert kinds.count("RemoveAccessControlEntryRecord") == 2 + 1  # alice's two, carol's

    async def restart():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            return rows(node.metadata.image)
        finally:
            await node.shutdown()

    assert asyncio.run(restart()) == before
    assert time.monotonic() - started < 120


def test_without_an_authorizer_acl_requests_are_security_disabled(tmp_path, capsys, monkeypatch):
    """Kafka's AclApis without an authorizer: DescribeAcls answers SECURITY_DISABLED "No Authorizer is configured
    on the broker"; CreateAcls and DeleteAcls answer SECURITY_DISABLED "No Authorizer is configured." for every entry
    and write nothing."""
    c = Combined(tmp_path)
    acls = Tool(capsys, monkeypatch)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            boot = ["--bootstrap-server", f"127.0.0.1:{c.bport}"]
            rc, out = await acls(*boot, "--list")
            assert (rc, out) == (1, "Error while executing ACL command: org.apache.kafka.common.errors."
                                    "SecurityDisabledException: No Authorizer is configured on the broker\n")
            rc, out = await acls(*boot, "--add", "--allow-principal", "User:alice", "--topic", "t")
            assert rc == 1 and out.endswith("Error while executing ACL command: org.apache.kafka.common.errors."
                                            "SecurityDisabledException: No Authorizer is configured.\n")
            rc, out = await acls(*boot, "--remove", "--force", "--topic", "t")
            assert (rc, out) == (1, "Error while executing ACL command: org.apache.kafka.common.errors."
                                    "SecurityDisabledException: No Authorizer is configured.\n")
            assert dict(node.metadata.image.acls) == {}
        finally:
            await node.shutdown()

    asyncio.run(main())
