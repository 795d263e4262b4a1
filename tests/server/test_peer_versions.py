"""A node's connections to its peers start with ApiVersions and send each Raft request at the highest version both
sides speak. A peer without Vote v2 (a Kafka 3.x voter) cannot take a pre-vote: the core is told UNSUPPORTED_VERSION
(and runs a real election, as Kafka's prospective does), while its real votes go at the peer's version. Real sockets:
a small server in the test plays the old peer."""

from __future__ import annotations

import asyncio
import uuid

from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.protocol import messages as w
from kraftwire.protocol.framing import FrameSplitter, decode_request, encode_response
from kraftwire.raft import messages as m
from kraftwire.server.edge import wire
from kraftwire.server.edge.peers import Peers
from kraftwire.server.node.settings import Voter

TOPIC = wire.Topic("__cluster_metadata", uuid.UUID(int=1))


class OldPeer(asyncio.Protocol):
    """Answers ApiVersions with ``versions`` and every Vote with a granted vote; records (api key, version)."""

    def __init__(self, versions: dict[int, int], seen: list) -> None:
        self.versions, self.seen = versions, seen
        self.splitter = FrameSplitter()

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        for frame in self.splitter.feed(data):
            req = decode_request(frame)
            self.seen.append((req.api.key, req.version))
            if req.api.key == w.ApiVersionsRequest.API_KEY:
                R = w.ApiVersionsResponse
                body = R(error_code=0, api_keys=[R.ApiVersion(api_key=k, min_version=0, max_version=v)
                                                 for k, v in self.versions.items()])
            else:
                R = w.VoteResponse
                p = req.body.topics[0].partitions[0]
                body = R(error_code=0, topics=[R.TopicData(topic_name=TOPIC.name, partitions=[R.PartitionData(
                    partition_index=0, error_code=0, leader_id=-1, leader_epoch=p.replica_epoch,
                    vote_granted=True)])])
            self.transport.writelines(encode_response(body, req.version, req.header.correlation_id))


def vote(cid: int, pre_vote: bool) -> m.VoteRequest:
    return m.VoteRequest(1, 2, cid, "c", candidate_epoch=3, candidate_key=ReplicaKey(1), voter_id=2,
                         last_offset_epoch=2, last_offset=10, pre_vote=pre_vote)


def exchange(peer_versions: dict[int, int]) -> tuple[list, list, list]:
    async def main():
        seen, delivered, failed = [], [], []
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: OldPeer(peer_versions, seen), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        peers = Peers(1, [Voter(2, "127.0.0.1", port)], TOPIC, directory_id=None, request_timeout_ms=5000,
                      deliver=delivered.append, on_failed=lambda n, c: failed.append(c))
        peers.send(vote(11, pre_vote=True))
        peers.send(vote(12, pre_vote=False))
        for _ in range(200):
            if len(delivered) >= 2:
                break
            await asyncio.sleep(0.01)
        peers.close()
        server.close()
        await server.wait_closed()
        return seen, delivered, failed

    return asyncio.run(main())


def test_an_old_peer_gets_no_pre_vote_and_real_votes_at_its_version():
    vote_key = w.VoteRequest.API_KEY
    seen, delivered, failed = exchange({w.ApiVersionsRequest.API_KEY: 3, vote_key: 1})
    assert seen[0] == (w.ApiVersionsRequest.API_KEY, 3)  # asked first
    assert seen[1:] == [(vote_key, 1)]  # only the real vote went, at the peer's highest version
    by_cid = {r.correlation_id: r for r in delivered}
    assert by_cid[11].error == m.UNSUPPORTED_VERSION and by_cid[11].pre_vote and by_cid[11].leader_id == NO_ID
    assert by_cid[12].error == m.NONE and by_cid[12].vote_granted and not failed


def test_a_current_peer_gets_both_at_our_version():
    vote_key = w.VoteRequest.API_KEY
    seen, delivered, _ = exchange({w.ApiVersionsRequest.API_KEY: 4, vote_key: 5})
    ours = wire.SEND_VERSION[wire.VOTE]
    assert seen[1:] == [(vote_key, ours), (vote_key, ours)]
    assert all(r.error == m.NONE for r in delivered) and len(delivered) == 2


def test_negotiated_version_rules():
    fetch = m.FetchRequest(1, 2, 5, "c", replica_id=1, replica_epoch=-1, current_leader_epoch=1, fetch_offset=0,
                           last_fetched_epoch=0, max_wait_ms=500, max_bytes=1)
    assert wire.negotiated_version(fetch, wire.FETCH, 17, 16) == 16
    assert wire.negotiated_version(fetch, wire.FETCH, 17, 12) is None  # no topic ids before v13
    assert wire.negotiated_version(vote(1, True), wire.VOTE, 2, 2) == 2
    assert wire.negotiated_version(vote(1, True), wire.VOTE, 2, 1) is None
    assert wire.negotiated_version(vote(1, False), wire.VOTE, 2, 0) == 0
    assert wire.negotiated_version(vote(1, False), wire.VOTE, 2, None) is None  # the peer does not serve it
