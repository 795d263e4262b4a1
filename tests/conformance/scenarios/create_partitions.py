"""CreatePartitions at every version both serve: growing, shrinking, the same count, manual assignments (valid,
wrong length, unknown or repeated brokers), unknown and duplicate topics, validate_only; each followed by Metadata."""

from __future__ import annotations

from conformance.runner import Step, each_version
from conformance.steps import created, metadata, partition_counts

from kraftwire.protocol import messages as w

CP = w.CreatePartitionsRequest
A, B = "{ns}.a", "{ns}.b"


def grow(version: int, *topics, validate_only: bool = False) -> Step:
    """``topics`` as (name, count) or (name, count, [[brokers], ...])."""
    return Step(CP(topics=[CP.CreatePartitionsTopic(
        name=t[0], count=t[1],
        assignments=None if len(t) < 3 else [CP.CreatePartitionsAssignment(broker_ids=b) for b in t[2]])
        for t in topics], timeout_ms=10000, validate_only=validate_only), version)


def _then_look(*topics, validate_only: bool = False, setup=(A,), expect=None):
    """Topics ``setup`` with two partitions each, the request, then Metadata once the partition counts are
    ``expect`` (``{"a": 4}``; unchanged when not given)."""
    counts = expect or {name.rpartition(".")[2]: 2 for name in setup}
    return lambda v: [*created(*setup, partitions=2), grow(v, *topics, validate_only=validate_only),
                      metadata(*setup, until=partition_counts(**counts))]


CASES = {
    "grow": _then_look((A, 4), expect={"a": 4}),
    "grow-several": _then_look((A, 3), (B, 5), setup=(A, B), expect={"a": 3, "b": 5}),
    "grow-assigned": _then_look((A, 4, [[1], [1]]), expect={"a": 4}),
    "shrink": _then_look((A, 1)),
    "same-count": _then_look((A, 2)),
    "zero": _then_look((A, 0)),
    "unknown-topic": lambda v: [grow(v, (A, 3)), metadata(A)],
    "duplicate-topic": lambda v: [*created(A, partitions=2), grow(v, (A, 3), (A, 4)), metadata(A)],
    "assignments-too-few": _then_look((A, 4, [[1]])),
    "assignments-too-many": _then_look((A, 3, [[1], [1]])),
    "assignments-unknown-broker": _then_look((A, 3, [[2]])),
    "assignments-repeated-broker": _then_look((A, 3, [[1, 1]])),
    "assignments-empty": _then_look((A, 3, [[]])),
    "validate-only": _then_look((A, 4), validate_only=True),
    "validate-only-shrink": _then_look((A, 1), validate_only=True),
    "invalid-name": lambda v: [grow(v, ("{ns}/a", 2))],
    "nothing": lambda v: [grow(v)],
}

SCENARIOS = each_version("CreatePartitions", CASES)
