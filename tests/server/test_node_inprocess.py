"""The node in-process on a real socket and real files: other APIs plug in through the dispatcher (and client
Fetch requests through ``broker_fetch``); ApiVersions advertises exactly what is registered; a single voter elects
itself and answers DescribeQuorum; shutdown closes the log cleanly."""

from __future__ import annotations

import asyncio
import json
import os
import time
import socket

from kraftwire.config import parse_properties
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.protocol import messages as w
from kraftwire.server.node.app import Node
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.node.settings import NodeSettings


def _node(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    logs = tmp_path / "logs"
    logs.mkdir()
    write_meta_properties(str(logs), MetaProperties(cluster_id="Uc70e1ZARn6UM4iJHeByUw", node_id=1))
    settings = NodeSettings.from_properties(parse_properties(
        f"node.id=1\nlisteners=PLAINTEXT://127.0.0.1:{port}\ncontroller.listener.names=PLAINTEXT\n"
        f"controller.quorum.voters=1@127.0.0.1:{port}\nlog.dirs={logs}\n"
        "controller.quorum.election.timeout.ms=100\n"))
    return Node(settings, listen_sockets={"PLAINTEXT": sock}), port, logs


def test_plugins_api_versions_describe_quorum_and_clean_shutdown(tmp_path):
    node, port, logs = _node(tmp_path)
    seen = []

    def list_offsets(request, conn):
        seen.append(("ListOffsets", request.version))
        conn.send_response(w.ListOffsetsResponse(), request.version, request.header.correlation_id)

    def client_fetch(request, conn):
        seen.append(("Fetch", request.version))
        conn.send_response(w.FetchResponse(error_code=0), request.version, request.header.correlation_id)

    node.dispatcher.register(2, 1, 8, list_offsets)
    node.broker_fetch = (4, client_fetch)

    async def main():
        await node.start()
        try:
            for _ in range(100):
                if node.raft.is_leader():
                    break
                await asyncio.sleep(0.05)
            assert node.raft.is_leader()
            conn = await KafkaConnection.open("127.0.0.1", port)
            try:
                versions = await conn.request(w.ApiVersionsRequest(client_software_name="t",
                                                                   client_software_version="1"), 3)
                ranges = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
                assert ranges[2] == (1, 8) and ranges[1] == (4, 18) and ranges[55] == (0, 2) and ranges[52] == (0, 2)
                await conn.request(w.ListOffsetsRequest(), 5)
                await conn.request(w.FetchRequest(max_wait_ms=0), 12)  # a client fetch: to the broker handler
                R = w.DescribeQuorumRequest
                quorum = await conn.request(R(topics=[R.TopicData(topic_name="__cluster_metadata",
                                                                  partitions=[R.PartitionData()])]), 2)
                part = quorum.topics[0].partitions[0]
                assert part.leader_id == 1 and part.error_code == 0 and part.high_watermark >= 1
                before_ms = int(time.time() * 1000) - 5_000
                [me] = part.current_voters  # the leader's own row is dated now, as Kafka's is
                assert me.replica_id == 1 and me.last_fetch_timestamp >= before_ms
                assert me.last_caught_up_timestamp == me.last_fetch_timestamp
                other = await conn.request(R(topics=[R.TopicData(topic_name="orders", partitions=[
                    R.PartitionData(partition_index=0), R.PartitionData(partition_index=1)])]), 2)
                assert [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions])
                        for t in other.topics] == [("orders", [(0, 3), (1, 3)])]  # UNKNOWN_TOPIC_OR_PARTITION
                cluster = await conn.request(w.DescribeClusterRequest(), 1)
                assert cluster.cluster_id == "Uc70e1ZARn6UM4iJHeByUw" and cluster.controller_id == 1
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(main())
    assert seen == [("ListOffsets", 5), ("Fetch", 12)]
    partition = logs / "__cluster_metadata-0"
    assert (partition / "clean-shutdown").exists() and (partition / "quorum-state").exists()
    # static voters are kraft.version 0: Kafka writes quorum-state data_version 0 with the voters
    state = json.loads((partition / "quorum-state").read_text())
    assert state["data_version"] == 0 and state["currentVoters"] == [{"voterId": 1}] and state["leaderId"] == 1
    assert os.path.getsize(partition / "00000000000000000000.log") > 0
