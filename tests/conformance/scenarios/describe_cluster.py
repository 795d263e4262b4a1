"""DescribeCluster at every version both serve: the brokers, the controller and cluster id as a client listener
answers them, authorized operations, and the endpoint types of v1 (brokers, controllers, unknown)."""

from __future__ import annotations

from conformance.runner import Step, each_version

from kraftwire.protocol import messages as w

DCL = w.DescribeClusterRequest


def describe(version: int, *, operations: bool = False, endpoint: int = 1) -> Step:
    return Step(DCL(include_cluster_authorized_operations=operations, endpoint_type=endpoint), version)


CASES = {
    "plain": lambda v: [describe(v)],
    "authorized-operations": lambda v: [describe(v, operations=True)],
    "controllers": lambda v: [describe(v, endpoint=2)] if v >= 1 else None,
    "unknown-endpoint-type": lambda v: [describe(v, endpoint=3)] if v >= 1 else None,
}

SCENARIOS = each_version("DescribeCluster", CASES)
