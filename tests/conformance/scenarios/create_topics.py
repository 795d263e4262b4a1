"""CreateTopics at every version both serve: valid topics, invalid names, partition counts and replication factors,
manual assignments, configs, duplicates, existing topics, validate_only; each refused request followed by a look at
whether anything changed (Metadata for the name)."""

from __future__ import annotations

from conformance.runner import each_version, no_error
from conformance.steps import create, created, led, metadata, topic

A = "{ns}.a"


def _refused(*topics, validate_only: bool = False, look=(A,)):
    """The request, then Metadata for ``look``: a refused topic must not exist afterwards."""
    return lambda v: [create(v, *topics, validate_only=validate_only), metadata(*look)]


def _max_length_name(version: int) -> str:
    """A legal name of exactly 249 characters inside this scenario's namespace."""
    ns = f"CreateTopics-v{version}-name-max-length"
    return "{ns}." + "x" * (249 - len(ns) - 1)


CASES = {
    "valid": lambda v: [create(v, topic(A, 3)), metadata(A, until=no_error)],
    "valid-several": lambda v: [create(v, topic(A, 1), topic("{ns}.b", 2)), metadata(A, "{ns}.b", until=no_error)],
    "defaults": lambda v: [create(v, topic(A, -1, -1)), metadata(A, until=no_error)],
    "defaults-partitions": lambda v: [create(v, topic(A, -1, 1)), metadata(A, until=no_error)],
    "name-empty": _refused(topic("")),
    "name-dot": _refused(topic("."), look=(".",)),
    "name-dotdot": _refused(topic(".."), look=("..",)),
    "name-too-long": _refused(topic("{ns}." + "x" * 250)),
    "name-max-length": lambda v: [create(v, topic(_max_length_name(v))),
                                  metadata(_max_length_name(v), until=no_error)],
    "name-illegal-chars": lambda v: [create(v, topic("{ns}.a b")), create(v, topic("{ns}/a")),
                                     create(v, topic("{ns}.é")), metadata("{ns}.a b")],
    "name-collision": lambda v: [*created(A), create(v, topic("{ns}_a")), metadata("{ns}_a")],
    "name-metadata-topic": _refused(topic("__cluster_metadata"), look=()),
    "duplicate-in-request": _refused(topic(A), topic(A)),
    "duplicate-one-valid": lambda v: [create(v, topic(A), topic(A), topic("{ns}.b")),
                                      metadata(A, "{ns}.b", until=led(".b"))],
    "existing": lambda v: [*created(A), create(v, topic(A, 2)), metadata(A)],
    "partitions-zero": _refused(topic(A, 0)),
    "partitions-minus-two": _refused(topic(A, -2)),
    "partitions-too-many": _refused(topic(A, 10001), validate_only=True),
    "replication-zero": _refused(topic(A, 1, 0)),
    "replication-minus-two": _refused(topic(A, 1, -2)),
    "replication-above-brokers": _refused(topic(A, 1, 3)),
    "assignments-valid": lambda v: [create(v, topic(A, -1, -1, [(0, [1]), (1, [1])])), metadata(A, until=no_error)],
    "assignments-with-counts": _refused(topic(A, 2, 1, [(0, [1]), (1, [1])])),
    "assignments-unknown-broker": _refused(topic(A, -1, -1, [(0, [2])])),
    "assignments-duplicate-broker": _refused(topic(A, -1, -1, [(0, [1, 1])])),
    "assignments-gap": _refused(topic(A, -1, -1, [(0, [1]), (2, [1])])),
    "assignments-no-replicas": _refused(topic(A, -1, -1, [(0, [])])),
    "assignments-duplicate-partition": _refused(topic(A, -1, -1, [(0, [1]), (0, [1])])),
    "config-valid": lambda v: [create(v, topic(A, configs=[("retention.ms", "1000"), ("cleanup.policy", "compact")])),
                               metadata(A, until=no_error)],
    "config-unknown-key": _refused(topic(A, configs=[("no.such.key", "1")])),
    "config-bad-number": _refused(topic(A, configs=[("retention.ms", "abc")])),
    "config-bad-choice": _refused(topic(A, configs=[("cleanup.policy", "bogus")])),
    "config-below-minimum": _refused(topic(A, configs=[("segment.bytes", "10")])),
    "config-null-value": _refused(topic(A, configs=[("retention.ms", None)])),
    "config-duplicate-key": _refused(topic(A, configs=[("retention.ms", "1000"), ("retention.ms", "2000")])),
    "config-broker-key": _refused(topic(A, configs=[("log.retention.ms", "1000")])),
    "validate-only": _refused(topic(A, 2, configs=[("retention.ms", "1000")]), validate_only=True),
    "validate-only-bad-config": _refused(topic(A, configs=[("retention.ms", "abc")]), validate_only=True),
    "validate-only-existing": lambda v: [*created(A), create(v, topic(A), validate_only=True)],
    "mixed-valid-and-invalid": lambda v: [create(v, topic(A), topic("{ns}.b", 0)),
                                          metadata(A, "{ns}.b", until=led(".a"))],
    "no-topics": lambda v: [create(v)],
}

SCENARIOS = each_version("CreateTopics", CASES)
