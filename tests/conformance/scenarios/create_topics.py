"""CreateTopics at every version both serve: valid topics, invalid names, partition counts and replication factors,
manual assignments, configs, duplicates, existing topics, validate_only; each refused request followed by a look at
whether anything changed (Metadata for the name)."""

from __future__ import annotations

from conformance.runner import each_version, no_error
from conformance.steps import create, metadata, topic

A = "{ns}.a"


def _refused(*topics, validate_only: bool = False, look=(A,)):
    """The request, then Metadata for ``look``: a refused topic must not exist afterwards."""
    return lambda v: [create(v, *topics, validate_only=validate_only), metadata(*look)]


CASES = {
    "valid": lambda v: [create(v, topic(A, 3)), metadata(A, until=no_error)],
    "defaults": lambda v: [create(v, topic(A, -1, -1)), metadata(A, until=no_error)],
    "name-empty": _refused(topic("")),
    "name-dot": _refused(topic("."), look=(".",)),
    "name-dotdot": _refused(topic(".."), look=("..",)),
    "name-too-long": _refused(topic("{ns}." + "x" * 250)),
    "name-illegal-chars": lambda v: [create(v, topic("{ns}.a b")), create(v, topic("{ns}/a")),
                                     create(v, topic("{ns}.é")), metadata("{ns}.a b")],
    "partitions-zero": _refused(topic(A, 0)),
    "replication-zero": _refused(topic(A, 1, 0)),
}

SCENARIOS = each_version("CreateTopics", CASES)
