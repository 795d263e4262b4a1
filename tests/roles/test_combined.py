"""Combined mode: one process with process.roles=broker,controller, a controller listener and a client listener, serves
a Kafka client end to end; controller.listener.names keeps client APIs off the controller listener and the quorum's
RPCs off the client listener."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness import roles


def _api_keys(port: int) -> set[int]:
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import request_once

    resp = asyncio.run(request_once("127.0.0.1", port, w.ApiVersionsRequest(client_software_name="t",
                                                                            client_software_version="1"), 3,
                                    timeout=5))
    return {k.api_key for k in resp.api_keys}


def test_combined_single_process_serves_a_client(make_roles_cluster):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    cluster = make_roles_cluster(controllers=1, brokers=0, combined=True)
    node = cluster.nodes[1]
    node.start()
    cluster.wait_for_leader()
    client_port, controller_port = node.port_of("BROKER"), node.port_of("CONTROLLER")
    # Online as a broker at its client endpoint
    md = roles.wait_until(lambda: (lambda m: m if m is not None and [(b.node_id, b.port) for b in m.brokers]
                                   == [(1, client_port)] else None)(_md(client_port)),
                          "the combined node lists itself at its client listener", cluster)
    assert md.controller_id == 1
    client_keys, controller_keys = _api_keys(client_port), _api_keys(controller_port)
    assert 0 in client_keys and 52 not in client_keys and 62 not in client_keys  # Produce yes; Vote, registration no
    assert 52 in controller_keys and 62 in controller_keys and 0 not in controller_keys

    want = [f"combined-{i:05d}".encode() for i in range(2000)]
    producer = KafkaProducer(bootstrap_servers=[f"127.0.0.1:{client_port}"], acks="all", request_timeout_ms=10000,
                             max_block_ms=20000)
    try:
        futures = [producer.send("roles", value=v) for v in want]
        producer.flush(60)
        offsets = [f.get(timeout=10).offset for f in futures]
    finally:
        producer.close(10)
    assert offsets == sorted(offsets) and len(set(offsets)) == len(want)
    consumer = KafkaConsumer(bootstrap_servers=[f"127.0.0.1:{client_port}"], group_id=None,
                             auto_offset_reset="earliest", consumer_timeout_ms=2000, request_timeout_ms=10000)
    got: list = []
    try:
        tp = TopicPartition("roles", 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + 60
        while len(got) < len(want) and time.monotonic() < deadline:
            got.extend(m.value for m in consumer if m.value.startswith(b"combined-"))
    finally:
        consumer.close()
    assert got == want
    assert node.terminate() == 0
    assert "controlled shutdown complete (Offline)" in node.stderr()


def _md(port):
    try:
        return roles.metadata(port)
    except Exception:  # noqa: BLE001 - starting
        return None


@pytest.mark.parametrize("text, needle", [
    ("process.roles=broker\nlisteners=CONTROLLER://localhost:0\n", "must not list a controller listener"),
    ("process.roles=broker\nnode.id=1\nlisteners=BROKER://localhost:0\n", "must not be"),
])
def test_broker_only_config_rules(text, needle):
    from kraftwire.config import parse_properties
    from kraftwire.errors import ConfigError
    from kraftwire.server.node.settings import NodeSettings

    base = ("node.id=7\ncontroller.listener.names=CONTROLLER\ncontroller.quorum.voters=1@localhost:9093\n"
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT\nlog.dirs=/tmp/x\n")
    with pytest.raises(ConfigError) as info:
        NodeSettings.from_properties(parse_properties(base + text))
    assert info.value.key == "process.roles" and needle in str(info.value)


def test_broker_settings():
    from kraftwire.config import parse_properties
    from kraftwire.server.node.settings import NodeSettings

    s = NodeSettings.from_properties(parse_properties(
        "process.roles=broker\nnode.id=7\nlisteners=BROKER://localhost:9095\ncontroller.listener.names=CONTROLLER\n"
        "controller.quorum.voters=1@localhost:9093\nlistener.security.protocol.map=CONTROLLER:PLAINTEXT,"
        "BROKER:PLAINTEXT\nlog.dirs=/tmp/x\n"))
    assert s.is_broker and not s.is_controller and s.controller_endpoint() is None
    assert [e.name for e in s.client_listeners()] == ["BROKER"]
    assert (s.broker_heartbeat_interval_ms, s.broker_session_timeout_ms) == (2000, 9000)  # Kafka's defaults
    assert not any("observer" in x for x in s.warnings)
