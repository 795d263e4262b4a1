"""DescribeConfigs, IncrementalAlterConfigs and AlterConfigs at every version both serve: topic and broker resources,
unknown resources and resource types, bad values, unknown and read-only keys, validate_only; each change followed by
DescribeConfigs of what it touched. Broker changes are undone in the same scenario (the pair is shared)."""

from __future__ import annotations

from conformance.runner import Step, each_version, no_error
from conformance.steps import CREATE_VERSION, create, created, metadata, topic

from kraftwire.protocol import messages as w

DC = w.DescribeConfigsRequest
IAC = w.IncrementalAlterConfigsRequest
AC = w.AlterConfigsRequest
TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
A = "{ns}.a"
#: the topic keys the checks after a change look at
LOOK = ["retention.ms", "cleanup.policy", "segment.ms", "max.message.bytes", "no.such.key"]


def describe(*resources, version: int = 4, synonyms: bool = True, documentation: bool = False, until=None) -> Step:
    """``resources`` as (type, name) or (type, name, [keys])."""
    return Step(DC(resources=[DC.DescribeConfigsResource(resource_type=r[0], resource_name=r[1],
                                                         configuration_keys=r[2] if len(r) > 2 else None)
                              for r in resources],
                   include_synonyms=synonyms, include_documentation=documentation), version, until=until)


def with_configs(*configs) -> list[Step]:
    """Set-up: topic A with ``configs`` overridden, led on both nodes."""
    return [create(CREATE_VERSION, topic(A, configs=configs)), metadata(A, until=no_error)]


def incremental(version: int, *resources, validate_only: bool = False) -> Step:
    """``resources`` as (type, name, [(key, op, value), ...])."""
    return Step(IAC(resources=[IAC.AlterConfigsResource(resource_type=t, resource_name=n, configs=[
        IAC.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in cs]) for t, n, cs in resources],
        validate_only=validate_only), version)


def legacy(version: int, *resources, validate_only: bool = False) -> Step:
    """``resources`` as (type, name, [(key, value), ...]): AlterConfigs replaces every dynamic value of each."""
    return Step(AC(resources=[AC.AlterConfigsResource(resource_type=t, resource_name=n, configs=[
        AC.AlterableConfig(name=k, value=v) for k, v in cs]) for t, n, cs in resources],
        validate_only=validate_only), version)


def settled(resource, key: str, value: str) -> Step:
    """DescribeConfigs v4 of ``resource`` until its ``key`` reads ``value``: a broker applies a committed change a
    little later (Kafka in steps), so each side is asked again until it shows (bounded by the runner)."""
    def applied(answer) -> bool:
        values = [c.value for r in answer.results for c in r.configs if c.name == key]
        return bool(values) and all(v == value for v in values)

    return describe(resource, until=applied)


DESCRIBE = {
    "topic-all": lambda v: [*with_configs(("retention.ms", "1000")), describe((TOPIC, A), version=v)],
    "topic-no-synonyms": lambda v: [*created(A), describe((TOPIC, A, LOOK), version=v, synonyms=False)],
    "topic-documentation": lambda v: [*created(A), describe((TOPIC, A, ["retention.ms"]), version=v,
                                                           documentation=True)] if v >= 3 else None,
    "topic-keys": lambda v: [*with_configs(("cleanup.policy", "compact")), describe((TOPIC, A, LOOK), version=v)],
    "topic-unknown": lambda v: [describe((TOPIC, A), version=v)],
    "topic-invalid-name": lambda v: [describe((TOPIC, "{ns}/a"), version=v)],
    "topic-empty-name": lambda v: [describe((TOPIC, ""), version=v)],
    "broker-keys": lambda v: [describe((BROKER, "1", ["log.retention.hours", "num.partitions", "log.dirs",
                                                      "listeners", "message.max.bytes", "no.such.key"]), version=v)],
    "broker-all": lambda v: [describe((BROKER, "1"), version=v)],
    "broker-default": lambda v: [describe((BROKER, ""), version=v)],
    "broker-other-id": lambda v: [describe((BROKER, "2"), version=v)],
    "broker-bad-id": lambda v: [describe((BROKER, "one"), version=v)],
    "broker-logger": lambda v: [describe((BROKER_LOGGER, "1", ["kafka.controller"]), version=v)],
    "group": lambda v: [describe((GROUP, "{ns}.g"), version=v)],
    "unknown-type": lambda v: [describe((99, "x"), version=v)],
    "several": lambda v: [*created(A), describe((TOPIC, A, ["retention.ms"]), (BROKER, "1", ["num.partitions"]),
                                                (TOPIC, "{ns}.b"), version=v)],
    "nothing": lambda v: [describe(version=v)],
}

INCREMENTAL = {
    "topic-set": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", SET, "1000")])),
                            settled((TOPIC, A, LOOK), "retention.ms", "1000")],
    "topic-delete": lambda v: [*with_configs(("retention.ms", "1000")),
                               incremental(v, (TOPIC, A, [("retention.ms", DELETE, None)])),
                               settled((TOPIC, A, LOOK), "retention.ms", "604800000")],
    "topic-delete-unset": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", DELETE, None)]))],
    "topic-append": lambda v: [*created(A), incremental(v, (TOPIC, A, [("cleanup.policy", APPEND, "compact")])),
                               settled((TOPIC, A, LOOK), "cleanup.policy", "delete,compact")],
    "topic-subtract": lambda v: [*with_configs(("cleanup.policy", "compact,delete")),
                                 incremental(v, (TOPIC, A, [("cleanup.policy", SUBTRACT, "delete")])),
                                 settled((TOPIC, A, LOOK), "cleanup.policy", "compact")],
    "topic-append-not-a-list": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", APPEND, "5")]))],
    "topic-bad-value": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", SET, "abc")])),
                                  describe((TOPIC, A, LOOK))],
    "topic-bad-choice": lambda v: [*created(A), incremental(v, (TOPIC, A, [("cleanup.policy", SET, "bogus")]))],
    "topic-unknown-key": lambda v: [*created(A), incremental(v, (TOPIC, A, [("no.such.key", SET, "1")]))],
    "topic-broker-key": lambda v: [*created(A), incremental(v, (TOPIC, A, [("log.retention.ms", SET, "1")]))],
    "topic-null-value": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", SET, None)]))],
    "topic-unknown-op": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", 7, "1")]))],
    "topic-duplicate-key": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", SET, "1"),
                                                                              ("retention.ms", SET, "2")])),
                                      describe((TOPIC, A, LOOK))],
    "topic-unknown": lambda v: [incremental(v, (TOPIC, A, [("retention.ms", SET, "1000")]))],
    "topic-invalid-name": lambda v: [incremental(v, (TOPIC, "{ns}/a", [("retention.ms", SET, "1000")]))],
    "topic-validate-only": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", SET, "1000")]),
                                                               validate_only=True), describe((TOPIC, A, LOOK))],
    "duplicate-resource": lambda v: [*created(A), incremental(v, (TOPIC, A, [("retention.ms", SET, "1")]),
                                                              (TOPIC, A, [("segment.ms", SET, "100000")])),
                                     describe((TOPIC, A, LOOK))],
    "broker-set-and-delete": lambda v: [
        incremental(v, (BROKER, "1", [("message.max.bytes", SET, "400000")])),
        settled((BROKER, "1", ["message.max.bytes"]), "message.max.bytes", "400000"),
        incremental(v, (BROKER, "1", [("message.max.bytes", DELETE, None)])),
        settled((BROKER, "1", ["message.max.bytes"]), "message.max.bytes", "1048588")],
    "cluster-default-set-and-delete": lambda v: [
        incremental(v, (BROKER, "", [("log.retention.bytes", SET, "123456789")])),
        settled((BROKER, "", ["log.retention.bytes"]), "log.retention.bytes", "123456789"),
        incremental(v, (BROKER, "", [("log.retention.bytes", DELETE, None)])),
        settled((BROKER, "1", ["log.retention.bytes"]), "log.retention.bytes", "-1"),
        describe((BROKER, "", ["log.retention.bytes"]))],
    "broker-read-only": lambda v: [incremental(v, (BROKER, "1", [("log.dirs", SET, "/tmp/elsewhere")]))],
    "broker-unknown-key": lambda v: [incremental(v, (BROKER, "1", [("no.such.broker.key", SET, "1")]),
                                                 validate_only=True)],
    "broker-bad-value": lambda v: [incremental(v, (BROKER, "1", [("message.max.bytes", SET, "abc")]))],
    "broker-other-id": lambda v: [incremental(v, (BROKER, "2", [("message.max.bytes", SET, "400000")]),
                                              validate_only=True)],
    "broker-logger": lambda v: [incremental(v, (BROKER_LOGGER, "1", [("kafka.controller", SET, "DEBUG")]),
                                            validate_only=True)],
    "unknown-type": lambda v: [incremental(v, (99, "x", [("a", SET, "b")]))],
}

LEGACY = {
    "topic-replace": lambda v: [*with_configs(("retention.ms", "1000")),
                                legacy(v, (TOPIC, A, [("segment.ms", "100000")])),
                                settled((TOPIC, A, LOOK), "retention.ms", "604800000")],
    "topic-clear": lambda v: [*with_configs(("retention.ms", "1000")), legacy(v, (TOPIC, A, [])),
                              settled((TOPIC, A, LOOK), "retention.ms", "604800000")],
    "topic-bad-value": lambda v: [*created(A), legacy(v, (TOPIC, A, [("retention.ms", "abc")])),
                                  describe((TOPIC, A, LOOK))],
    "topic-unknown-key": lambda v: [*created(A), legacy(v, (TOPIC, A, [("no.such.key", "1")]))],
    "topic-null-value": lambda v: [*created(A), legacy(v, (TOPIC, A, [("retention.ms", None)]))],
    "topic-unknown": lambda v: [legacy(v, (TOPIC, A, [("retention.ms", "1000")]))],
    "topic-validate-only": lambda v: [*created(A), legacy(v, (TOPIC, A, [("retention.ms", "1000")]),
                                                          validate_only=True), describe((TOPIC, A, LOOK))],
    "broker-set-and-clear": lambda v: [legacy(v, (BROKER, "1", [("message.max.bytes", "400000")])),
                                       settled((BROKER, "1", ["message.max.bytes"]), "message.max.bytes", "400000"),
                                       legacy(v, (BROKER, "1", [])),
                                       settled((BROKER, "1", ["message.max.bytes"]), "message.max.bytes", "1048588")],
    "broker-read-only": lambda v: [legacy(v, (BROKER, "1", [("log.dirs", "/tmp/elsewhere")]))],
    "unknown-type": lambda v: [legacy(v, (99, "x", [("a", "b")]))],
}

SCENARIOS = (each_version("DescribeConfigs", DESCRIBE) + each_version("IncrementalAlterConfigs", INCREMENTAL)
             + each_version("AlterConfigs", LEGACY))
