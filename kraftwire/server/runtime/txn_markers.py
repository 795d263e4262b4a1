"""Writing a transaction's markers: WriteTxnMarkers from the transaction coordinator (``txn_apis``) to each of the
transaction's partitions' leaders, over the broker's inter-broker connections, retried until every partition has its
marker (Kafka's ``TransactionMarkerChannelManager`` and ``TransactionMarkerRequestCompletionHandler``). Each marker
carries its transaction's version; it is sent at v2 (KIP-1228), which tells the leader, when the leader's ApiVersions
has it, else at v1, which drops it (the field is ignorable), as Kafka's NetworkClient negotiates."""

from __future__ import annotations

import asyncio
import logging

from kraftwire import error_codes as ec
from kraftwire.coordinator.txn.coordinator import Marker
from kraftwire.protocol import messages as w
from kraftwire.protocol.served import SERVED, key
from kraftwire.server.edge.broker_links import BrokerLinks

log = logging.getLogger("kraftwire.transactions")

MARKER_BACKOFF_S = 0.1
MARKER_REQUEST_TIMEOUT_S = 10.0
#: WriteTxnMarkers answers per partition (Kafka's TransactionMarkerRequestCompletionHandler)
MARKER_RETRY = frozenset({ec.UNKNOWN_TOPIC_OR_PARTITION, ec.NOT_LEADER_OR_FOLLOWER, ec.NOT_ENOUGH_REPLICAS,
                          ec.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ec.REQUEST_TIMED_OUT, ec.KAFKA_STORAGE_ERROR})
MARKER_DONE = frozenset({ec.NONE, ec.UNSUPPORTED_FOR_MESSAGE_FORMAT, ec.UNSUPPORTED_VERSION})
MARKER_STOP = frozenset({ec.INVALID_PRODUCER_EPOCH, ec.TRANSACTION_COORDINATOR_FENCED})


class MarkerSender:
    """Sends one transaction's markers to its partitions' leaders until each partition has its marker.

    ``leader_of(topic, partition)``: the leader's broker id; -1 while the partition has no leader (retried), None
    when the partition is gone (its marker counts as written, as Kafka skips a partition with no leader endpoint).
    ``call(broker_id, WriteTxnMarkersRequest)``: an awaitable of the response; an exception means "retry".
    """

    def __init__(self, leader_of, call, *, backoff_s: float = MARKER_BACKOFF_S) -> None:
        self.leader_of = leader_of
        self.call = call
        self.backoff_s = backoff_s
        self.tasks: set[asyncio.Task] = set()

    def send(self, marker: Marker, coordinator_epoch: int, done, still_current=lambda: True) -> asyncio.Task:
        """Start sending; ``done(True)`` once every partition has its marker, ``done(False)`` when the sending was
        given up (fenced, or ``still_current()`` turned False: the coordinator moved on)."""
        task = asyncio.get_running_loop().create_task(self.run(marker, coordinator_epoch, done, still_current))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def run(self, marker: Marker, coordinator_epoch: int, done, still_current=lambda: True) -> bool:
        left = set(marker.partitions)
        while left:
            if not still_current():
                done(False)
                return False
            by_leader: dict[int, list[tuple[str, int]]] = {}
            for tp in sorted(left):
                leader = self.leader_of(*tp)
                if leader is None:
                    log.info("%s: partition %s-%d is gone; its marker is skipped", marker.transactional_id, *tp)
                    left.discard(tp)
                elif leader >= 0:
                    by_leader.setdefault(leader, []).append(tp)
            answers_ = await asyncio.gather(*(self._one(b, marker, coordinator_epoch, tps)
                                              for b, tps in by_leader.items()))
            for codes in answers_:
                for tp, code in codes.items():
                    if code in MARKER_DONE:
                        left.discard(tp)
                    elif code in MARKER_STOP:
                        log.info("%s: marker for %s-%d answered %s; no more markers are sent",
                                 marker.transactional_id, *tp, ec.name_of(code))
                        done(False)
                        return False
                    elif code not in MARKER_RETRY:
                        log.warning("%s: marker for %s-%d answered %s; retrying", marker.transactional_id, *tp,
                                    ec.name_of(code))
            if left:
                await asyncio.sleep(self.backoff_s)
        if not still_current():
            done(False)
            return False
        done(True)
        return True

    async def _one(self, broker: int, marker: Marker, coordinator_epoch: int, tps) -> dict:
        R = w.WriteTxnMarkersRequest
        topics: dict[str, list[int]] = {}
        for topic, p in tps:
            topics.setdefault(topic, []).append(p)
        body = R(markers=[R.WritableTxnMarker(
            producer_id=marker.producer_id, producer_epoch=marker.producer_epoch, transaction_result=marker.commit,
            topics=[R.WritableTxnMarkerTopic(name=n, partition_indexes=ps) for n, ps in topics.items()],
            coordinator_epoch=coordinator_epoch, transaction_version=marker.transaction_version)])
        try:
            response = await self.call(broker, body)
        except Exception as exc:  # noqa: BLE001 - unreachable leader, closed connection, timeout: all retried
            log.debug("WriteTxnMarkers to broker %d: %r; retrying", broker, exc)
            return {}
        codes = {}
        for m in response.markers:
            if m.producer_id != marker.producer_id:
                continue
            for t in m.topics:
                for p in t.partitions:
                    codes[(t.name, p.partition_index)] = p.error_code
        return codes


def marker_version(advertised: int | None) -> int:
    """The WriteTxnMarkers version to send to a broker whose ApiVersions' highest is ``advertised`` (None: not
    listed): the highest both serve, v1 (the lowest, which every broker since Kafka 4.0 serves) otherwise."""
    lowest, highest = SERVED["WriteTxnMarkers"]
    if advertised is None or advertised < lowest:
        return lowest
    return min(advertised, highest)


async def _marker_version(conn) -> int:
    """The WriteTxnMarkers version of a new connection, from the broker's ApiVersions."""
    versions = await conn.request(w.ApiVersionsRequest(client_software_name="kraftwire", client_software_version="1"),
                                  3, timeout=MARKER_REQUEST_TIMEOUT_S)
    wanted = key("WriteTxnMarkers")
    return marker_version(next((a.max_version for a in versions.api_keys if a.api_key == wanted), None))


class MarkerLinks:
    """WriteTxnMarkers to partition leaders over the broker's inter-broker connections (``BrokerLinks``), at the
    version each connection's ApiVersions allows."""

    def __init__(self, node) -> None:
        self.links = BrokerLinks(node, "txn-coordinator", prepare=_marker_version)

    @property
    def conns(self):
        return self.links.conns

    async def call(self, broker: int, body):
        return await self.links.request(
            broker, lambda conn, version: conn.request(body, version, timeout=MARKER_REQUEST_TIMEOUT_S))

    async def close(self) -> None:
        await self.links.close()
