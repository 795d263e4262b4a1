"""The transaction coordinator's admin APIs on a KRaft broker (``kafka-transactions.sh list`` / ``describe``):
ListTransactions v0-2 and DescribeTransactions v0, answered from the shards this broker hosts. A part of
``txn_apis.TxnApis``.
"""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator.txn.coordinator import STATE_NAMES, ListingFilter
from kraftwire.java_order import hashmap_order, topic_partition_hash
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.runtime.clocks import wall_ms as _now_ms


class TxnAdminApis:
    """ListTransactions and DescribeTransactions; a part of ``txn_apis.TxnApis``."""

    # ================================================================================================ admin
    def list_transactions(self, request, conn) -> None:
        R = w.ListTransactionsResponse
        body, version = request.body, request.version
        listing = ListingFilter(body, version, _now_ms())
        access = self.node.authorizer
        refused = (ec.COORDINATOR_LOAD_IN_PROGRESS if any(loaded.loading for loaded in self.shards.values())
                   else listing.error)
        if refused:
            conn.send_response(R(throttle_time_ms=0, error_code=refused,
                                 unknown_state_filters=listing.unknown_states, transaction_states=[]), version,
                               request.header.correlation_id)
            return
        out = []
        for loaded in self.shards.values():
            if loaded.state == "FAILED":
                continue
            for t in loaded.shard.txns.values():
                if not listing.accepts(t):
                    continue
                if access is not None and not access.allows(conn, ResourceType.TRANSACTIONAL_ID,
                                                            t.transactional_id, Op.DESCRIBE, log_denied=False):
                    continue
                out.append(R.TransactionState(transactional_id=t.transactional_id, producer_id=t.producer_id,
                                              transaction_state=STATE_NAMES[t.state]))
        out.sort(key=lambda s: s.transactional_id)
        conn.send_response(R(throttle_time_ms=0, error_code=0, unknown_state_filters=listing.unknown_states,
                             transaction_states=out), version, request.header.correlation_id)

    def describe_transactions(self, request, conn) -> None:
        R = w.DescribeTransactionsResponse
        out = []
        for tid in request.body.transactional_ids:
            s = R.TransactionState(error_code=0, transactional_id=tid, transaction_state="",  # Kafka's defaults
                                   transaction_timeout_ms=0, transaction_start_time_ms=0, producer_id=0,
                                   producer_epoch=0, topics=[])
            out.append(s)
            if not self._may(conn, tid, Op.DESCRIBE):
                s.error_code = ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                continue
            if not tid:
                s.error_code = ec.INVALID_REQUEST
                continue
            _p, loaded = self._route(tid)
            if loaded is None:
                s.error_code = self.route_error
                continue
            t = loaded.shard.txns.get(tid)
            if t is None:
                s.error_code = ec.TRANSACTIONAL_ID_NOT_FOUND
                continue
            s.transaction_state = STATE_NAMES[t.state]
            s.transaction_timeout_ms, s.transaction_start_time_ms = t.timeout_ms, t.start_ms
            s.producer_id, s.producer_epoch = t.producer_id, t.producer_epoch
            # Kafka groups its HashSet of the transaction's partitions by topic (a small map: first seen first)
            ordered = hashmap_order(list(t.partitions), lambda tp: topic_partition_hash(*tp))
            topics: dict[str, list[int]] = {}
            for topic, part in ordered:
                topics.setdefault(topic, []).append(part)
            s.topics = [R.TopicData(topic=n, partitions=ps) for n, ps in topics.items()]
        conn.send_response(R(throttle_time_ms=0, transaction_states=out), request.version,
                           request.header.correlation_id)
