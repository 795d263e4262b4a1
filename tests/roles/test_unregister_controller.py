"""KIP-1312 on real processes (``server-start``), metadata.version 4.4-IV2 (the default): three controllers and a
broker. ``kraftwire cluster unregister-controller`` through the broker (which forwards UnregisterController to the
active controller) removes a stopped controller's registration, so the controllers' listing no longer shows it;
asked again, and for the active controller itself, it prints the refusals Kafka's tool prints. Run against Kafka 4.4
itself, the same requests got the same codes and messages (INVALID_REQUEST for the active controller,
CONTROLLER_ID_NOT_REGISTERED 136 for an unknown id, UNSUPPORTED_VERSION below 4.4-IV2)."""

from __future__ import annotations

from harness import processes, roles


def _controller_ids(controller_port: int) -> list[int]:
    """The controllers ``list-endpoints --bootstrap-controller`` lists (their registrations in the image)."""
    out = processes.kw("cluster", "list-endpoints", "--bootstrap-controller", f"localhost:{controller_port}").stdout
    return sorted(int(line.split()[0]) for line in out.splitlines()[1:] if line.strip())


def test_a_stopped_controller_is_unregistered_and_the_refusals_are_kafkas(make_roles_cluster):
    cluster = make_roles_cluster(controllers=3, brokers=1, kraft=True)
    for node in cluster.nodes.values():
        node.start()
    active = cluster.wait_for_leader().leader_id
    broker = cluster.brokers[0].port_of("BROKER")
    roles.wait_until(lambda: roles.broker_ids(broker) == [4], "the broker Online", cluster)
    port_of = {n.node_id: n.port for n in cluster.controllers}
    roles.wait_until(lambda: _controller_ids(port_of[active]) == [1, 2, 3], "three controllers registered", cluster)

    gone = next(n for n in cluster.controllers if n.node_id != active)
    gone.terminate()

    def unregister(controller_id: int, check: bool = True):
        return processes.kw("cluster", "unregister-controller", "--bootstrap-server", f"localhost:{broker}",
                            "--id", str(controller_id), check=check)

    assert unregister(gone.node_id).stdout == f"Controller {gone.node_id} is no longer registered.\n"
    expected = sorted({1, 2, 3} - {gone.node_id})
    roles.wait_until(lambda: _controller_ids(port_of[active]) == expected, "the registration removed", cluster)

    again = unregister(gone.node_id, check=False)
    assert (again.returncode, again.stdout) == (1, "")
    assert again.stderr == ("org.apache.kafka.common.errors.ControllerIdNotRegisteredException: Controller ID "
                            f"{gone.node_id} is not currently registered.\n")
    itself = unregister(active, check=False)
    assert (itself.returncode, itself.stderr) == (
        1, "org.apache.kafka.common.errors.InvalidRequestException: Controller cannot unregister itself while it is "
           "active.\n")
    assert _controller_ids(port_of[active]) == expected  # refusals change nothing
