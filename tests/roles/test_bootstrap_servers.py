"""A broker configured with ``controller.quorum.bootstrap.servers`` only (no ``controller.quorum.voters``) finds the
quorum by asking those servers, even when it starts before the controllers; it registers, becomes Online, and after
a SIGKILL of the active controller follows the new leader."""

from __future__ import annotations

import time

from harness import roles


def test_a_broker_finds_the_quorum_through_bootstrap_servers(make_roles_cluster):
    cluster = make_roles_cluster(controllers=3, brokers=1, bootstrap_brokers=True)
    h = roles.processes
    broker = cluster.brokers[0]
    assert "controller.quorum.voters" not in open(broker.config).read()
    broker.start()  # before any controller: it keeps asking
    time.sleep(1.0)
    for c in cluster.controllers:
        c.start()
    part = cluster.wait_for_leader()
    c_port = cluster.controllers[0].port
    roles.wait_until(lambda: roles.broker_ids(c_port) == [1, 2, 3, 4], "the broker Online in Metadata", cluster)
    log = broker.stderr()
    assert "not reachable through controller.quorum.bootstrap.servers yet" in log
    assert "found the quorum through" in log and "voters 1@localhost:" in log

    # the active controller dies: the broker follows whoever leads next
    old = part.leader_id
    cluster.nodes[old].kill()
    survivor = next(c for c in cluster.controllers if c.node_id != old)
    cluster.wait_for_leader(exclude=(old,), min_epoch=part.leader_epoch + 1)

    def following():
        view = h.leader_view(survivor.port)
        if view is None or view.leader_id == old or view.high_watermark <= part.high_watermark:
            return None
        observer = next((o for o in view.observers if o.replica_id == 4), None)
        return observer if observer is not None and observer.log_end_offset >= view.high_watermark else None

    roles.wait_until(following, "the broker fetching from the new leader", cluster)
    roles.wait_until(lambda: 4 in (roles.broker_ids(survivor.port) or []), "the broker still Online", cluster)
