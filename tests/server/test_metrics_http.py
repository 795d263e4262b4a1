"""The metrics endpoint over real HTTP: prometheus_client serves each node's own registry, names and types are the
ones kraftwire always exported, values move as the node works, and two nodes in one process never share a series."""

from __future__ import annotations

import asyncio
import io
import re
import socket
import threading
import urllib.error
import urllib.request

import pytest

from kraftwire.config import parse_properties
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.protocol import messages as w
from kraftwire.server.node.app import PERFORMANCE_TEST_TOPIC, Node
from kraftwire.server.test_server.server import RaftTestServer
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.edge.metrics import Registry
from kraftwire.server.node.settings import NodeSettings
from kraftwire.tools.workload import Workload

CLUSTER_ID = "Uc70e1ZARn6UM4iJHeByUw"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node(tmp_path, name: str, *, workload: bool = False):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    logs = tmp_path / name
    logs.mkdir()
    write_meta_properties(str(logs), MetaProperties(cluster_id=CLUSTER_ID, node_id=1))
    settings = NodeSettings.from_properties(parse_properties(
        f"node.id=1\nlisteners=PLAINTEXT://127.0.0.1:{port}\ncontroller.listener.names=PLAINTEXT\n"
        f"controller.quorum.voters=1@127.0.0.1:{port}\nlog.dirs={logs}\n"
        f"controller.quorum.election.timeout.ms=100\nkraftwire.metrics.port={_free_port()}\n"))
    load = None
    if workload:
        load = Workload(1, throughput=2000, record_size=16, report_interval_s=3600, out=io.StringIO())
        node = RaftTestServer(settings, listen_sockets={"PLAINTEXT": sock}, topic=PERFORMANCE_TEST_TOPIC,
                              listeners=[load])
        load.attach_metrics(node.metrics)
    else:
        node = Node(settings, listen_sockets={"PLAINTEXT": sock})
    return node, port, settings.metrics_port, load


def _get(port: int, path: str = "/metrics") -> tuple[str, str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return resp.headers.get("Content-Type", ""), resp.read().decode()


async def _scrape(port: int) -> str:
    """Scrape from another thread: the event loop must keep running to hand over the values."""
    return (await asyncio.to_thread(_get, port))[1]


def _value(text: str, series: str) -> float:
    m = re.search(r"^" + re.escape(series) + r" (\S+)$", text, re.M)
    assert m, f"{series} is not in the scrape"
    return float(m.group(1))


def _type(text: str, family: str) -> str:
    m = re.search(r"^# TYPE " + re.escape(family) + r" (\S+)$", text, re.M)
    assert m, f"no TYPE line for {family}"
    return m.group(1)


async def _until_leader(node: Node) -> None:
    for _ in range(200):
        if node.raft is not None and node.raft.is_leader():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the single voter did not elect itself")


def test_the_endpoint_serves_every_family_with_its_type_and_values_follow_the_node(tmp_path):
    node, port, metrics_port, load = _node(tmp_path, "logs", workload=True)

    async def main():
        await node.start()
        try:
            await _until_leader(node)
            load.start(node.driver)
            content_type, _ = await asyncio.to_thread(_get, metrics_port)
            assert content_type.startswith("text/plain") and "version=0.0.4" in content_type
            conn = await KafkaConnection.open("127.0.0.1", port)
            try:
                await conn.request(w.ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
                first = await _scrape(metrics_port)
                for _ in range(3):
                    await conn.request(w.ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
                # wait (bounded) until the workload has committed 200 more records than the first scrape saw
                target = _value(first, "kraftwire_raft_high_watermark") + 200
                for _ in range(500):
                    if node.log.high_watermark() >= target:
                        break
                    await asyncio.sleep(0.02)
                second = await _scrape(metrics_port)
            finally:
                await conn.close()
            await load.stop()
        finally:
            await node.shutdown()
        return first, second

    first, second = asyncio.run(main())
    types = {
        "kraftwire_requests_total": "counter",
        "kraftwire_raft_state": "gauge",
        "kraftwire_raft_epoch": "gauge",
        "kraftwire_raft_leader_id": "gauge",
        "kraftwire_raft_high_watermark": "gauge",
        "kraftwire_raft_log_end_offset": "gauge",
        "kraftwire_raft_log_start_offset": "gauge",
        "kraftwire_raft_flushes": "gauge",
        "kraftwire_raft_flushes_inline": "gauge",
        "kraftwire_raft_flush_ms_average": "gauge",
        "kraftwire_raft_core_events": "gauge",
        "kraftwire_commit_latency_ms": "histogram",
        # prometheus_client's own collectors, registered on the node's registry
        "process_cpu_seconds_total": "counter",
        "process_resident_memory_bytes": "gauge",
        "python_gc_collections_total": "counter",
    }
    for family, kind in types.items():
        assert _type(second, family) == kind, family
    assert _value(second, 'kraftwire_raft_state{state="Leader"}') == 1
    assert _value(second, 'kraftwire_raft_state{state="Follower"}') == 0
    assert _value(second, "kraftwire_raft_leader_id") == 1
    assert _value(second, "kraftwire_raft_epoch") >= 1
    # three more ApiVersions between the scrapes, counted per API
    api = 'kraftwire_requests_total{api="ApiVersions"}'
    assert _value(second, api) == _value(first, api) + 3
    # the workload committed at least 200 records between the scrapes
    assert _value(second, "kraftwire_raft_high_watermark") >= _value(first, "kraftwire_raft_high_watermark") + 200
    assert _value(second, "kraftwire_raft_log_end_offset") >= _value(second, "kraftwire_raft_high_watermark")
    assert _value(second, "kraftwire_raft_flushes") > 0
    count = _value(second, "kraftwire_commit_latency_ms_count")
    assert count >= 200 and count > _value(first, "kraftwire_commit_latency_ms_count")
    assert _value(second, 'kraftwire_commit_latency_ms_bucket{le="+Inf"}') == count
    assert _value(second, "kraftwire_commit_latency_ms_sum") > 0
    buckets = [float(v) for v in re.findall(r'^kraftwire_commit_latency_ms_bucket\{le="[^"]+"\} (\S+)$', second, re.M)]
    assert buckets == sorted(buckets)  # cumulative
    assert re.search(r'^kraftwire_commit_latency_ms_bucket\{le="1"\} ', second, re.M)  # bounds written as before


def test_two_nodes_in_one_process_have_separate_registries(tmp_path):
    a, a_port, a_metrics, _ = _node(tmp_path, "a")
    b, _, b_metrics, _ = _node(tmp_path, "b")
    assert a.metrics.prometheus is not b.metrics.prometheus

    async def main():
        await a.start()
        await b.start()
        try:
            await _until_leader(a)
            await _until_leader(b)
            conn = await KafkaConnection.open("127.0.0.1", a_port)
            try:
                for _ in range(5):
                    await conn.request(w.ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
            finally:
                await conn.close()
            return await _scrape(a_metrics), await _scrape(b_metrics)
        finally:
            await a.shutdown()
            await b.shutdown()

    text_a, text_b = asyncio.run(main())
    assert _value(text_a, 'kraftwire_requests_total{api="ApiVersions"}') == 5
    assert 'kraftwire_requests_total{api="ApiVersions"}' not in text_b
    for text in (text_a, text_b):  # each registry has its node's gauges once, and the process collectors
        assert len(re.findall(r'^kraftwire_raft_state\{state="Leader"\} ', text, re.M)) == 1
        assert len(re.findall(r"^# TYPE process_cpu_seconds_total counter$", text, re.M)) == 1


def test_serving_collects_on_the_loop_thread_and_stops_cleanly():
    reg = Registry()
    seen = []

    def refresh():
        seen.append(threading.get_ident())
        reg.set("raft_epoch", len(seen), "current epoch")

    reg.refresh = refresh

    async def main():
        host, port = reg.serve("127.0.0.1", 0, asyncio.get_running_loop())
        assert host == "127.0.0.1" and port > 0
        reg.inc("requests_total", help="requests", api="Fetch")
        first = await _scrape(port)
        reg.inc("requests_total", api="Fetch")
        second = await _scrape(port)
        await asyncio.to_thread(reg.stop_serving)
        return port, first, second, threading.get_ident()

    port, first, second, loop_thread = asyncio.run(main())
    assert seen and set(seen) == {loop_thread}
    assert _value(first, 'kraftwire_requests_total{api="Fetch"}') == 1
    assert _value(second, 'kraftwire_requests_total{api="Fetch"}') == 2
    assert _value(second, "kraftwire_raft_epoch") == _value(first, "kraftwire_raft_epoch") + 1
    assert "# HELP kraftwire_requests_total requests" in second  # a later inc without help keeps it
    with pytest.raises(urllib.error.URLError):
        _get(port)
    reg.stop_serving()  # idempotent


def test_a_bound_port_is_an_oserror_and_counters_end_in_total():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        with pytest.raises(OSError):
            Registry().serve("127.0.0.1", s.getsockname()[1])
    with pytest.raises(ValueError):
        Registry().inc("requests")
