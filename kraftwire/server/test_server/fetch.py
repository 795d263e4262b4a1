"""Consumer Fetch and ListOffsets on the quorum's topic.

Fetch serves whole batches up to this node's own high watermark (a follower never serves above its own; control
batches pass through and clients skip them). An offset below the log start or above the log end is
OFFSET_OUT_OF_RANGE; between the high watermark and the log end the answer is empty. Long polling: when fewer than
MinBytes are ready the request is parked until the high watermark moves (checked after every Ready) or MaxWaitMs
passes. Fetch sessions are not kept: every answer carries session id 0, which tells clients to send full requests.
Size limits as on a broker (``kraftwire.replica.fetch_limits``: MaxBytes capped by ``fetch.max.bytes``).

ListOffsets (answered by the leader): -2 earliest = log start, -1 latest = high watermark, -3 max timestamp, t ≥ 0
the first offset whose record timestamp is ≥ t, or -1: Kafka's lookup (skip segments by their largest timestamp, start
at the ``.timeindex`` entry, scan batch headers, then one batch's records). A new leader whose high watermark lags
its epoch start refuses as a partition leader does (``kraftwire.replica.list_offsets``).
"""

from __future__ import annotations

import logging

from kraftwire.errors import KraftwireError
from kraftwire.log import lookup
from kraftwire.log.api import Isolation
from kraftwire.protocol import messages as w
from kraftwire.replica import list_offsets as offsets
from kraftwire.replica.fetch_limits import FetchLimits
from kraftwire.server.test_server import context as c
from kraftwire.server.runtime.purgatory import FetchPurgatory

log = logging.getLogger("kraftwire.broker.fetch")



class ConsumerFetch:
    def __init__(self, ctx: c.BrokerContext) -> None:
        self.ctx = ctx
        self.purgatory = FetchPurgatory(self._ready_answer)
        self._last_hw = -1
        ctx.watchers.append(self._check)

    def _answer(self, request):
        """(response body, bytes of records in it)."""
        ctx = self.ctx
        lg = ctx.log
        body, version = request.body, request.version
        R = w.FetchResponse
        total = 0
        limits = FetchLimits(body.max_bytes, body.min_bytes, ctx.node.settings.config.fetch_max_bytes)
        topics = []
        hw, start, end = lg.high_watermark(), lg.start_offset(), lg.end_offset()
        for t in body.topics:
            ours = (t.topic_id == ctx.topic_id) if version >= 13 else (t.topic == ctx.topic_name)
            parts = []
            for p in t.partitions:
                pd = R.PartitionData(partition_index=p.partition, error_code=0, high_watermark=hw,
                                     last_stable_offset=hw, log_start_offset=start, aborted_transactions=None,
                                     preferred_read_replica=-1, records=b"")
                parts.append(pd)
                if not ours:
                    pd.error_code = c.UNKNOWN_TOPIC_ID if version >= 13 else c.UNKNOWN_TOPIC_OR_PARTITION
                    pd.high_watermark = pd.last_stable_offset = pd.log_start_offset = -1
                    continue
                if p.partition != 0:
                    pd.error_code = c.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                offset = p.fetch_offset
                if offset < start or offset > end:
                    pd.error_code = c.OFFSET_OUT_OF_RANGE
                    continue
                limit = limits.limit(p.partition_max_bytes)
                if offset >= hw or not limits.may_read(limit):
                    continue
                try:
                    info = lg.read(offset, limit, Isolation.COMMITTED)
                except KraftwireError:
                    pd.error_code = c.OFFSET_OUT_OF_RANGE
                    continue
                n = len(info.records) if limits.fits(len(info.records), limit) else 0
                if n:
                    pd.records = info.records
                total += n
                limits.took(n)
            topics.append(R.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=parts))
        return R(throttle_time_ms=0, error_code=0, session_id=0, responses=topics), total, limits.min_bytes

    def _ready_answer(self, request):
        """(response, whether it may be sent now: MinBytes reached or an error to report)."""
        resp, total, min_bytes = self._answer(request)
        return resp, total >= max(min_bytes, 1) or self._has_error(resp)

    def handle(self, request, conn) -> None:
        self.purgatory.respond(request, conn, *self._ready_answer(request))

    @staticmethod
    def _has_error(resp) -> bool:
        return any(p.error_code for t in resp.responses for p in t.partitions)

    def _check(self) -> None:
        if not self.purgatory.parked:
            return
        lg = self.ctx.log
        if lg is None:
            return
        hw = lg.high_watermark()
        if hw == self._last_hw:
            return
        self._last_hw = hw
        self.purgatory.wake()


class ListOffsets:
    def __init__(self, ctx: c.BrokerContext) -> None:
        self.ctx = ctx

    def offset_for_timestamp(self, ts: int) -> tuple[int, int, int]:
        return lookup.offset_for_timestamp(self.ctx.log, ts)

    def max_timestamp(self) -> tuple[int, int, int]:
        return lookup.max_timestamp(self.ctx.log)

    def handle(self, request, conn) -> None:
        ctx = self.ctx
        R = w.ListOffsetsResponse
        version = request.version
        replica = request.body.replica_id
        topics = []
        for t in request.body.topics:
            parts = []
            for p in t.partitions:
                pr = R.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=0, timestamp=-1,
                                                    offset=-1, leader_epoch=-1)
                parts.append(pr)
                if t.name != ctx.topic_name or p.partition_index != 0:
                    pr.error_code = c.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                if not ctx.is_leader():
                    pr.error_code = c.NOT_LEADER_OR_FOLLOWER
                    continue
                lg = ctx.log
                ts = p.timestamp
                hw, epoch_start = lg.high_watermark(), ctx.epoch_start_offset()
                if ts == offsets.LATEST:
                    # As Kafka: a new leader has not committed in its epoch yet, and the high watermark it knew as a
                    # follower may be behind the old leader's: clients retry rather than see an offset go back.
                    pr.error_code = offsets.lagging_error(ts, replica, version, epoch_start, hw)
                    if pr.error_code:
                        continue
                pr.leader_epoch = ctx.epoch()
                try:
                    if ts == offsets.EARLIEST:
                        pr.offset = lg.start_offset()
                        pr.leader_epoch = lg.epoch_for_offset(pr.offset)  # as Kafka: the log start's epoch
                    elif ts == offsets.LATEST:
                        pr.offset = hw
                    elif ts == offsets.MAX_TIMESTAMP:
                        pr.offset, pr.timestamp, pr.leader_epoch = self.max_timestamp()
                    elif ts in offsets.NOTHING_TIERED and offsets.timestamp_supported(ts, version):
                        pr.offset, pr.leader_epoch = -1, -1  # nothing is tiered: there is no remote log
                    elif ts >= 0:
                        pr.offset, pr.timestamp, epoch = self.offset_for_timestamp(ts)
                        pr.leader_epoch = epoch  # Kafka answers the found batch's epoch (-1 when none)
                    else:
                        pr.error_code, pr.leader_epoch = c.UNSUPPORTED_VERSION, -1
                        continue
                    pr.error_code = offsets.lagging_error(ts, replica, version, epoch_start, hw, pr.offset, hw)
                    if pr.error_code:
                        pr.offset, pr.timestamp, pr.leader_epoch = -1, -1, -1
                except KraftwireError as exc:
                    log.warning("ListOffsets failed: %s", exc)
                    pr.error_code = c.NOT_LEADER_OR_FOLLOWER
            topics.append(R.ListOffsetsTopicResponse(name=t.name, partitions=parts))
        conn.send_response(R(throttle_time_ms=0, topics=topics), version, request.header.correlation_id)
