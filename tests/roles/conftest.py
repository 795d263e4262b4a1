"""Fixtures of the roles tests (helpers: ``harness.roles``)."""

from __future__ import annotations

import pytest

from harness.roles import RolesCluster


@pytest.fixture
def make_roles_cluster(tmp_path):
    made = []

    def make(**kwargs) -> RolesCluster:
        cluster = RolesCluster(str(tmp_path), **kwargs)
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.close()
