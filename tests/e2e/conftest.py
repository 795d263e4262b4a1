"""Fixtures of the end-to-end tests (helpers: ``harness.processes``)."""

from __future__ import annotations

import pytest

from harness.processes import Cluster


@pytest.fixture
def make_cluster(tmp_path):
    made = []

    def make(n: int, **kwargs) -> Cluster:
        cluster = Cluster(str(tmp_path), n, **kwargs)
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.close()
