"""AddRaftVoter / RemoveRaftVoter at a KRaft node's edge, in-process on a real socket: a controller formatted
``--standalone`` leads alone (kraft.version 1) and answers Kafka's refusals with Kafka's messages — another cluster
id, no directory id, no endpoint on the controller listener, a duplicate id, a new voter that does not answer
ApiVersions, one that answers but is not a caught-up observer (the core's check, its message relayed), the last
voter's removal — and advertises ``kraft.version`` in ApiVersions; DescribeQuorum shows its directory id and the
endpoints its VotersRecord names."""

from __future__ import annotations

import asyncio
import socket

from kraftwire import error_codes as ec
from kraftwire.cli import main
from kraftwire.ids import ZERO_UUID as ZERO, random_kafka_uuid, uuid_to_base64
from kraftwire.log.meta_properties import read_meta_properties
from kraftwire.protocol import messages as w
from kraftwire.server.node.app import Node
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.node.settings import NodeSettings

CLUSTER = "Uc70e1ZARn6UM4iJHeByUw"
A = w.AddRaftVoterRequest
RM = w.RemoveRaftVoterRequest


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_voter_change_refusals_at_the_edge(tmp_path, capsys):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    cfg = tmp_path / "controller.properties"
    cfg.write_text(f"process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:{port}\n"
                   f"controller.listener.names=CONTROLLER\ncontroller.quorum.bootstrap.servers=127.0.0.1:{port}\n"
                   f"log.dirs={tmp_path}/logs\ncontroller.quorum.election.timeout.ms=100\n")
    assert main(["storage", "format", "-t", CLUSTER, "-c", str(cfg), "--standalone"]) == 0
    capsys.readouterr()
    me = read_meta_properties(str(tmp_path / "logs")).directory_id
    node = Node(NodeSettings.from_file(str(cfg)), listen_sockets={"CONTROLLER": sock})
    new = random_kafka_uuid()

    def add(voter_id=2, directory=new, listeners=(("CONTROLLER", "127.0.0.1", 1),), cluster_id=None):
        return A(cluster_id=cluster_id, timeout_ms=5000, voter_id=voter_id, voter_directory_id=directory,
                 listeners=[A.Listener(name=n, host=h, port=p) for n, h, p in listeners])

    async def scenario():
        await node.start()
        try:
            for _ in range(200):  # the leader, with its epoch's first records committed
                raft = node.raft
                if raft.is_leader() and raft.quorum.state.high_watermark not in (None, 0) and \
                        raft.quorum.state.high_watermark > raft.quorum.state.epoch_start_offset:
                    break
                await asyncio.sleep(0.05)
            assert node.raft.is_leader()
            conn = await KafkaConnection.open("127.0.0.1", port)
            try:
                versions = await conn.request(w.ApiVersionsRequest(client_software_name="t",
                                                                   client_software_version="1"), 4)
                ranges = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
                assert ranges[80] == (0, 1) and ranges[81] == (0, 0)
                assert ("kraft.version", 0, 1) in [(f.name, f.min_version, f.max_version)
                                                   for f in versions.supported_features]
                assert ("kraft.version", 1) in [(f.name, f.max_version_level) for f in versions.finalized_features]

                async def ask(body):
                    answer = await conn.request(body, 0, timeout=10)
                    return answer.error_code, answer.error_message

                assert await ask(add(cluster_id="other")) == (
                    ec.INCONSISTENT_CLUSTER_ID, f'The given id "other" doesn\'t match the cluster id "{CLUSTER}"')
                assert await ask(add(directory=ZERO)) == (ec.INVALID_REQUEST,
                                                          "Add voter request didn't include a valid voter")
                assert await ask(add(listeners=(("BROKER", "h", 9092),))) == (
                    ec.INVALID_REQUEST, "Add voter request didn't include the endpoint (Endpoints(endpoints="
                                        "{ListenerName(BROKER)=h/<unresolved>:9092})) for the default listener "
                                        "CONTROLLER")
                code, message = await ask(add(voter_id=1))
                assert code == ec.DUPLICATE_VOTER and message.startswith("The voter id for ReplicaKey(id=1"), message
                key = f"ReplicaKey(id=2, directoryId=Optional[{uuid_to_base64(new)}])"
                assert await ask(add(listeners=(("CONTROLLER", "127.0.0.1", _free_port()),))) == (
                    ec.REQUEST_TIMED_OUT, f"New voter {key} is not ready to receive requests")
                # it answers ApiVersions (kraft.version 0..1: this very node) but has never fetched: the core says no
                code, message = await ask(add(listeners=(("CONTROLLER", "127.0.0.1", port),)))
                assert code == ec.REQUEST_TIMED_OUT and message.startswith("Aborted add voter operation for ") \
                    and message.endswith(" since it is lagging behind"), message

                assert await ask(RM(cluster_id=None, voter_id=1, voter_directory_id=ZERO)) == (
                    ec.INVALID_REQUEST, "Remove voter request didn't include a valid voter")
                assert (await ask(RM(cluster_id=None, voter_id=1, voter_directory_id=new)))[0] == ec.VOTER_NOT_FOUND
                assert (await ask(RM(cluster_id=CLUSTER, voter_id=1, voter_directory_id=me)))[0] == \
                    ec.VOTER_NOT_FOUND  # the last voter stays

                R = w.DescribeQuorumRequest
                quorum = await conn.request(R(topics=[R.TopicData(topic_name="__cluster_metadata",
                                                                  partitions=[R.PartitionData()])]), 2)
                [voter] = quorum.topics[0].partitions[0].current_voters
                assert (voter.replica_id, voter.replica_directory_id) == (1, me)
                assert [(n.node_id, [(ep.name, ep.host, ep.port) for ep in n.listeners]) for n in quorum.nodes] == [
                    (1, [("CONTROLLER", "127.0.0.1", port)])]
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(scenario())
