"""``kafka-configs.sh`` for client quotas, Kafka 4.4's tool beside kraftwire's on the same kraftwire node: users,
client ids, their defaults and combinations, IPs; the same lines (in the same order, with Java's doubles) and the
same refusals. Both tools reading one node's answers, a difference is the tool's; the node's answers are compared
with Kafka's own by the conformance scenarios (``tests/conformance/scenarios/client_quotas.py``).

The node is shared with the other tests of the session: the entities are named ``cq-...`` and every quota set here is
removed at the end (a default user's quota would otherwise hold for every client of the session)."""

from __future__ import annotations

from harness.processes import kw

from kafka_software.test_kafka_flags import same, same_error

ALICE = ("--entity-type", "users", "--entity-name", "cq-alice")
SETS = [
    (*ALICE, "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2e9"),
    ("--entity-type", "clients", "--entity-name", "cq-c1", "--add-config", "request_percentage=12.5"),
    ("--entity-type", "users", "--entity-default", "--add-config", "consumer_byte_rate=1e12"),
    ("--user", "cq-bob", "--client", "cq-c2", "--add-config", "consumer_byte_rate=10"),
    (*ALICE, "--entity-type", "clients", "--entity-default", "--add-config", "producer_byte_rate=301"),
    ("--entity-type", "ips", "--entity-name", "127.0.0.9", "--add-config", "connection_creation_rate=10"),
]
DELETES = [
    (*ALICE, "--delete-config", "producer_byte_rate,consumer_byte_rate"),
    ("--entity-type", "clients", "--entity-name", "cq-c1", "--delete-config", "request_percentage"),
    ("--entity-type", "users", "--entity-default", "--delete-config", "consumer_byte_rate"),
    ("--user", "cq-bob", "--client", "cq-c2", "--delete-config", "consumer_byte_rate"),
    (*ALICE, "--entity-type", "clients", "--entity-default", "--delete-config", "producer_byte_rate"),
    ("--entity-type", "ips", "--entity-name", "127.0.0.9", "--delete-config", "connection_creation_rate"),
]


def test_quotas_altered_and_described_as_kafkas_tool_does(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    try:
        for args in SETS:  # Kafka's tool sets it, then ours sets the same again: the same line
            same(tools, "kafka-configs", *b, "--alter", *args)
        for args in (ALICE, ("--user-defaults",), ("--entity-type", "clients", "--entity-name", "cq-c1"),
                     (*ALICE, "--entity-type", "clients"), ("--entity-type", "users", "--entity-type", "clients"),
                     ("--entity-type", "ips", "--entity-name", "127.0.0.9"), ("--client", "cq-c2", "--user", "cq-bob"),
                     ("--entity-type", "users"), ("--entity-type", "clients")):
            out = same(tools, "kafka-configs", *b, "--describe", *args)
            assert out or args == ("--client", "cq-c2", "--user", "cq-bob"), args
        assert same(tools, "kafka-configs", *b, "--describe", *ALICE) == (
            "Quota configs for user-principal 'cq-alice' are consumer_byte_rate=2.0E9, producer_byte_rate=1024.0\n")
        # the controller's refusals, as the admin client's exception
        for value in ("0", "10.5", "NaN", "1e300"):
            err = same_error(tools, "kafka-configs", *b, "--alter", *ALICE, "--add-config", f"producer_byte_rate={value}")
            assert "InvalidRequestException" in err
        # the tool's own: a value Java does not read, a key the entity does not hold
        same_error(tools, "kafka-configs", *b, "--alter", *ALICE, "--add-config", "producer_byte_rate=abc", lines=1)
        same_error(tools, "kafka-configs", *b, "--alter", *ALICE, "--delete-config", "request_percentage", lines=1)
        # a deletion, once by each tool
        theirs = tools.run("kafka-configs", *b, "--alter", *DELETES[1])
        kw("configs", *b, "--alter", *SETS[1])
        ours = kw("configs", *b, "--alter", *DELETES[1], check=False)
        assert (ours.returncode, ours.stdout) == (theirs.exit, theirs.out) == (0, "Completed updating config for "
                                                                              "client cq-c1.\n")
        assert same(tools, "kafka-configs", *b, "--describe", "--entity-type", "clients", "--entity-name", "cq-c1") == ""
    finally:
        for args in DELETES:
            kw("configs", *b, "--alter", *args, check=False)
