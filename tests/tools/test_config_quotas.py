"""``kraftwire configs`` for client quotas (``tools.config_quotas``) without a server: the arguments and refusals of
Kafka 4.4's kafka-configs.sh (each message below was printed by Kafka's own tool against a Kafka node), the
DescribeClientQuotas filter it sends, its lines in the admin client's order and Java's double formatting. The
end-to-end run beside Kafka's tool is ``tests/kafka_software/test_config_quotas_tool.py``."""

from __future__ import annotations

import math

import pytest

from kraftwire.cli import main
from kraftwire.protocol import messages as m
from kraftwire.tools import config_quotas as cq

BOOT = ["configs", "--bootstrap-server", "localhost:1"]
R = m.DescribeClientQuotasResponse


@pytest.mark.parametrize("value, text", [
    (1024.0, "1024.0"), (12.5, "12.5"), (2e9, "2.0E9"), (99999999999.0, "9.9999999999E10"), (0.001, "0.001"),
    (1234567.5, "1234567.5"), (1e7, "1.0E7"), (9999999.0, "9999999.0"), (0.0001, "1.0E-4"), (1e300, "1.0E300"),
    (math.nan, "NaN"), (math.inf, "Infinity"), (5000.0, "5000.0"),
])
def test_java_double(value, text):
    """``Double.toString`` (the values Kafka's tool printed: 2.0E9, 9.9999999999E10, 0.001, 1234567.5)."""
    assert cq.java_double(value) == text


@pytest.mark.parametrize("text, value", [("1024", 1024.0), ("2e9", 2e9), (" 12.5 ", 12.5), ("1d", 1.0),
                                         ("NaN", None if False else math.nan), ("-5", -5.0), ("abc", None),
                                         ("", None), ("1,5", None), (".5", 0.5)])
def test_parse_java_double(text, value):
    got = cq.parse_java_double(text)
    assert (got is None and value is None) or (math.isnan(got) and math.isnan(value)) or got == value


def test_filter_components_pair_types_with_names():
    got = [(c.entity_type, c.match_type, c.match) for c in cq.components(["users", "clients"], ["alice"])]
    assert got == [("user", 0, "alice"), ("client-id", 2, None)]
    got = [(c.entity_type, c.match_type, c.match) for c in cq.components(["clients", "users"], ["", "u"])]
    assert got == [("client-id", 1, None), ("user", 0, "u")]


def _answer(*entries):
    return R(throttle_time_ms=0, error_code=0, error_message="", entries=[R.EntryData(
        entity=[R.EntityData(entity_type=t, entity_name=n) for t, n in entity],
        values=[R.ValueData(key=k, value=v) for k, v in values]) for entity, values in entries])


def test_describe_lines_as_kafkas_tool_printed_them():
    """The lines and their order as Kafka 4.4's tool printed them for the same entities (admin client HashMaps)."""
    answer = _answer(([("user", "alice")], [("producer_byte_rate", 1024.0), ("consumer_byte_rate", 2e9)]),
                     ([("user", None)], [("producer_byte_rate", 5000.0)]))
    assert cq.describe_lines(answer) == [
        "Quota configs for the default user-principal are producer_byte_rate=5000.0",
        "Quota configs for user-principal 'alice' are consumer_byte_rate=2.0E9, producer_byte_rate=1024.0"]
    answer = _answer(([("client-id", None), ("user", "alice")], [("producer_byte_rate", 301.0)]),
                     ([("user", "bob"), ("client-id", "c2")], [("consumer_byte_rate", 10.0)]),
                     ([("user", "alice"), ("client-id", "c1")], [("producer_byte_rate", 300.0)]))
    assert cq.describe_lines(answer) == [
        "Quota configs for user-principal 'alice', client-id 'c1' are producer_byte_rate=300.0",
        "Quota configs for user-principal 'alice', the default client-id are producer_byte_rate=301.0",
        "Quota configs for user-principal 'bob', client-id 'c2' are consumer_byte_rate=10.0"]
    # the broker's order of the values (the image's map), which breaks the tie of two keys in one bucket of the
    # admin client's map
    answer = _answer(([("user", "alice")], [("producer_byte_rate", 1024.0), ("request_percentage", 0.001),
                                            ("controller_mutation_rate", 1234567.5)]))
    assert cq.describe_lines(answer) == ["Quota configs for user-principal 'alice' are controller_mutation_rate="
                                         "1234567.5, producer_byte_rate=1024.0, request_percentage=0.001"]


@pytest.mark.parametrize("argv, message", [
    (["--entity-type", "clients", "--entity-name", "c1", "--alter", "--add-config", "foo=1,bar=2"],
     "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: bar,foo"),
    (["--entity-type", "clients", "--entity-name", "c1", "--alter", "--delete-config", "foo,bar"],
     "Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: bar,foo"),
    (["--entity-type", "clients", "--entity-name", "c1", "--alter", "--add-config", "SCRAM-SHA-256=[password=x]"],
     "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: "
     "SCRAM-SHA-256"),
    (["--entity-type", "users", "--entity-name", "c1", "--alter", "--add-config", "colour=blue,size=2"],
     "Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config "
     "names: colour,size"),
    (["--entity-type", "ips", "--entity-name", "1.2.3.4", "--alter", "--add-config", "a=1,b=2"],
     "Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: a, b"),
    (["--entity-type", "ips", "--entity-name", "1.2.3.4", "--alter", "--delete-config", "a,b"],
     "Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: a, b"),
    (["--entity-type", "ips", "--entity-name", "not-valid.invalid", "--describe"],
     "The entity name for ips must be a valid IP or resolvable host, but it is: not-valid.invalid"),
    (["--entity-type", "users", "--entity-name", "a", "--entity-type", "clients", "--alter", "--add-config",
      "producer_byte_rate=1"], "An entity name must be specified for every entity type"),
    (["--entity-type", "users", "--entity-type", "users", "--describe"], "Duplicate entity type(s) specified: users"),
    (["--entity-type", "topics", "--entity-type", "users", "--describe"],
     "Only 'users' and 'clients' entity types may be specified together"),
    (["--entity-type", "users", "--entity-name", "alice", "--client", "x", "--describe"],
     "--entity-{type,name,default} should not be used in conjunction with specific entity flags"),
])
def test_bad_arguments_print_kafkas_message_alone_and_exit_1(argv, message, capsys):
    assert main([*BOOT, *argv]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == message + "\n"


def test_shorthands_name_types_in_kafkas_order():
    """``--user bob --client c2``: Kafka's fixed order of the flags puts clients first ("Completed updating config
    for client c2.")."""
    import argparse

    from kraftwire.tools import configs

    p = argparse.ArgumentParser()
    configs.add_arguments(p)
    ns = p.parse_args(["--bootstrap-server", "x:1", "--alter", "--user", "bob", "--client", "c2"])
    configs.resolve_entity(ns)
    assert (ns.entity_types, ns.entity_names, ns.entity_type, ns.entity_name) == (
        ["clients", "users"], ["c2", "bob"], "clients", "c2")
    ns = p.parse_args(["--bootstrap-server", "x:1", "--alter", "--user-defaults", "--client", "c1"])
    configs.resolve_entity(ns)
    assert (ns.entity_types, ns.entity_names) == (["clients", "users"], ["c1", ""])
