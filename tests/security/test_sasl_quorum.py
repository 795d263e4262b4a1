"""A 3-voter quorum whose only listener is SASL_SSL: the voters open TLS to each other (checking the certificate's
host name), log in with PLAIN (``sasl.mechanism.controller.protocol``) before any Raft request, elect, and replicate
what confluent-kafka produces with acks=all over SASL_SSL; a peer that has not logged in cannot even ask for a vote.
Certificates are made by the test (``harness.certs``)."""

from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.interop

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="node" password="node-secret" '
        'user_node="node-secret" user_alice="alice-secret";')


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    from harness.certs import CA

    ca = CA(str(tmp_path_factory.mktemp("sasl-quorum-ca")))
    return ca, ca.issue("node")


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, ca):
    from harness import processes

    authority, node_cert = ca
    props = ("listener.security.protocol.map=PLAINTEXT:SASL_SSL\nkraftwire.metadata.log.topic=guarded\n"
             "sasl.enabled.mechanisms=PLAIN\nsasl.mechanism.controller.protocol=PLAIN\n"
             f"listener.name.plaintext.plain.sasl.jaas.config={JAAS}\n"
             f"ssl.keystore.type=PEM\nssl.keystore.location={node_cert.bundle_path}\n"
             f"ssl.truststore.type=PEM\nssl.truststore.location={authority.path}\n")
    cluster = processes.Cluster(str(tmp_path_factory.mktemp("sasl-quorum")), 3, **processes.SERVE_ONLY,
                                extra_props=props)
    try:
        cluster.start_all()
        yield cluster
    finally:
        cluster.close()


def test_voters_log_in_to_each_other_and_replicate(quorum, ca):
    from confluent_kafka import Producer

    bootstrap = ",".join(f"localhost:{n.port}" for n in quorum.nodes.values())
    errors = []
    p = Producer({"bootstrap.servers": bootstrap, "security.protocol": "SASL_SSL", "sasl.mechanisms": "PLAIN",
                  "ssl.ca.location": ca[0].path,
                  "sasl.username": "alice", "sasl.password": "alice-secret", "acks": "all",
                  "message.timeout.ms": 90000})
    for i in range(200):
        p.produce("guarded", b"guarded-%d" % i, on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert p.flush(120) == 0 and errors == []  # committed: a majority of voters replicated it over SASL
    logs = "".join(n.stderr() for n in quorum.nodes.values())
    assert logs.count("User:node authenticated with SASL PLAIN") >= 2  # the voters' own connections
    assert "refused our SASL" not in logs
    for node in quorum.nodes.values():
        assert "(SASL_SSL)" in node.stderr()  # the one listener is SASL over TLS


def test_a_vote_request_without_logging_in_is_refused(quorum, ca):
    import ssl

    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import KafkaConnection

    node = next(iter(quorum.nodes.values()))
    R = w.VoteRequest

    async def main():
        tls = ssl.create_default_context(cafile=ca[0].path)
        conn = await KafkaConnection.open("localhost", node.port, timeout=5, ssl_context=tls)
        try:
            with pytest.raises(Exception):
                await conn.request(R(cluster_id=None, topics=[R.TopicData(topic_name="guarded", partitions=[
                    R.PartitionData(partition_index=0, replica_epoch=99, replica_id=3, last_offset_epoch=0,
                                    last_offset=0)])]), 1, timeout=3)
        finally:
            await conn.close()

    asyncio.run(main())
    assert "api key 52 before SASL authentication" in node.stderr()


def test_metadata_quorum_logs_in_with_command_config(quorum, ca, tmp_path):
    from harness import processes

    node = next(iter(quorum.nodes.values()))
    conf = tmp_path / "admin.properties"
    conf.write_text(f"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nssl.truststore.type=PEM\n"
                    f"ssl.truststore.location={ca[0].path}\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                    'username="alice" password="alice-secret";\n')
    status = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{node.port}", "--command-config",
                          str(conf), "describe", "--status").stdout
    assert "LeaderId:" in status and "CurrentVoters:" in status
    refused = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{node.port}", "describe", "--status",
                           check=False)
    assert refused.returncode == 1 and "cannot describe the quorum" in refused.stderr
    conf.write_text(conf.read_text().replace("alice-secret", "wrong"))
    wrong = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{node.port}", "--command-config",
                         str(conf), "describe", "--status", check=False)
    assert wrong.returncode == 1 and "SASL login as alice refused" in wrong.stderr
