"""The transaction coordinator's AddPartitionsToTxn v4+ — the batched form partition leaders send (KIP-890 part 1;
Kafka's ``KafkaApis.handleAddPartitionsToTxnRequest`` for version ≥ 4). ``txn_apis.TxnApis`` hands such requests
here; clients keep v0-3 (Kafka's clients send at most v3; the versions are told apart only by number).

* The principal needs CLUSTER_ACTION on the cluster (with an authorizer), else the whole answer is the top-level
  error CLUSTER_AUTHORIZATION_FAILED; topics are not authorized (a broker asks).
* Each transaction is answered on its own, all in one response (request order): a partition missing from the
  image is UNKNOWN_TOPIC_OR_PARTITION and the transaction's others OPERATION_NOT_ATTEMPTED; a transactional id
  whose shard is not here NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS on every partition.
* ``VerifyOnly``: ``TxnShard.verify_partitions`` (NONE when the partition is in the ongoing transaction, else
  TRANSACTION_ABORTABLE; INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS for the
  transaction) — at v4 as at v5, as Kafka's coordinator answers (the leader translates for old clients).
* Without ``VerifyOnly`` (a leader adding for a transaction.version 2 client: its Produce v12, its TxnOffsetCommit
  v5) the partitions are added as a v3 client's would be (written, answered once committed; PRODUCER_FENCED stays
  PRODUCER_FENCED), and the transaction's end will bump the epoch (``client_version`` 2). Below transaction.version
  2 the coordinator's checks answer as for a v3 add (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED,
  CONCURRENT_TRANSACTIONS on every partition), and a transaction that passes them makes the whole request
  UNSUPPORTED_VERSION, as Kafka 4.4 answers (``coordinator.txn.refusals``). An add that
  starts the producer's next transaction while the last one's markers are being written waits for them, as a
  client's AddPartitionsToTxn does (``TxnApis._hold_for_markers``): the producer's Produce would otherwise be
  answered NOT_ENOUGH_REPLICAS and retried.
"""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator.txn.refusals import ADD_NEEDS_TRANSACTION_VERSION_2, refusal_order
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.server.runtime.clocks import wall_ms as _now_ms


def result_for(transactional_id: str, partitions: list[tuple[str, int]], codes: dict):
    R = w.AddPartitionsToTxnResponse
    topics: dict[str, list[int]] = {}
    for topic, p in partitions:
        topics.setdefault(topic, []).append(p)
    return R.AddPartitionsToTxnResult(transactional_id=transactional_id, topic_results=[
        R.AddPartitionsToTxnTopicResult(name=topic, results_by_partition=[
            R.AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=codes.get((topic, p), 0))
            for p in ps]) for topic, ps in topics.items()])


class _Collect:
    """Stands for the client connection of one transaction's add: its v3-form answer becomes that transaction's
    codes."""

    peer = "txn-broker-apis"

    def __init__(self, got) -> None:
        self.got = got

    def send_response(self, body, version, cid) -> None:
        self.got({(t.name, r.partition_index): r.partition_error_code for t in body.results_by_topic_v3_and_below
                  for r in t.results_by_partition})


def add_partitions_batched(apis, request, conn) -> None:
    """AddPartitionsToTxn v4+ on the coordinator ``apis`` (a ``TxnApis``)."""
    R = w.AddPartitionsToTxnResponse
    body, version, cid = request.body, request.version, request.header.correlation_id
    access = apis.node.authorizer
    if access is not None and not access.allows_cluster(conn, Op.CLUSTER_ACTION):
        conn.send_response(R(throttle_time_ms=0, error_code=ec.CLUSTER_AUTHORIZATION_FAILED,
                             results_by_transaction=[]), version, cid)
        return
    txns = list(body.transactions or ())
    results: list = [None] * len(txns)
    left = [len(txns)]

    refused: list[int] = []

    def send() -> None:
        if refused:  # an add without VerifyOnly fails the whole request (coordinator.txn.refusals)
            conn.send_response(R(throttle_time_ms=0, error_code=refused[0], results_by_transaction=[]), version, cid)
            return
        conn.send_response(R(throttle_time_ms=0, error_code=ec.NONE, results_by_transaction=results), version, cid)

    if not txns:
        send()
        return

    def done(i: int, wanted: list, codes: dict) -> None:
        results[i] = result_for(txns[i].transactional_id, wanted, codes)
        left[0] -= 1
        if left[0] == 0:
            send()

    image = apis.md.image
    for i, t in enumerate(txns):
        tid = t.transactional_id
        wanted = list(dict.fromkeys((topic.name, p) for topic in t.topics for p in topic.partitions))
        unknown = {}
        for name, p in wanted:
            topic = image.topic(name)
            if topic is None or p not in topic.partitions:
                unknown[(name, p)] = ec.UNKNOWN_TOPIC_OR_PARTITION
        if unknown:  # Kafka: the others are not attempted; in Kafka's order (coordinator.txn.refusals)
            wanted = [(topic, p) for topic, ps in refusal_order(wanted) for p in ps]
            done(i, wanted, {tp: unknown.get(tp, ec.OPERATION_NOT_ATTEMPTED) for tp in wanted})
            continue
        _p, loaded = apis._route(tid)
        if loaded is None:
            done(i, wanted, {tp: apis.route_error for tp in wanted})
            continue
        if t.verify_only:
            done(i, wanted, loaded.shard.verify_partitions(tid, t.producer_id, t.producer_epoch, wanted))
            continue
        if apis.transaction_version() < 2:
            code = loaded.shard.add_error(tid, t.producer_id, t.producer_epoch)
            if code:  # the coordinator's refusal, as Kafka's answers it
                done(i, wanted, {tp: code for tp in wanted})
                continue
            refused.append(ADD_NEEDS_TRANSACTION_VERSION_2)
            done(i, wanted, {})
            continue

        def add(i=i, t=t, wanted=wanted) -> None:
            p, loaded = apis._route(t.transactional_id)  # again: the shard may have moved during a hold
            if loaded is None:
                done(i, wanted, {tp: apis.route_error for tp in wanted})
                return
            sink = _Collect(lambda codes: done(i, wanted, codes))
            apis._write(p, loaded.shard.add_partitions(t.transactional_id, t.producer_id, t.producer_epoch, wanted,
                                                       (sink, 3, cid), _now_ms(), version=3, client_version=2))

        if not apis._hold_for_markers(loaded, tid, t.producer_id, t.producer_epoch, add):
            add()
