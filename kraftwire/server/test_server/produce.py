"""Produce through the core's raw-batch append (no linger): the client's batch is validated, re-based and stamped
with the leader epoch; its compression stays as produced.

acks=0: no answer. acks=1: answered once the leader's log is flushed past the batch. acks=-1: answered once the high
watermark passes the batch. A pending answer turns into NOT_LEADER_OR_FOLLOWER when this node stops leading the
epoch it appended in (the batch may still commit under the next leader, exactly as with Kafka), and into
REQUEST_TIMED_OUT after the request's timeout. Non-leaders answer NOT_LEADER_OR_FOLLOWER so clients re-route.

Versions 0-2 are advertised (older librdkafka needs Produce min v0 to use compression) but refused per partition
with UNSUPPORTED_VERSION, as Kafka 4 does: message format v2 starts at v3.
"""

from __future__ import annotations

import logging

from kraftwire.errors import CorruptRecordError, KraftwireError, NotLeaderError, RecordTooLargeError
from kraftwire.protocol import messages as w
from kraftwire.records import read_batches, validate_batches
from kraftwire.replica.produce_records import shape_error
from kraftwire.server.test_server import context as c

log = logging.getLogger("kraftwire.broker.produce")



def _nothing() -> None:
    """A data batch without a producer id changes no rebuilt state."""


class Produce:
    def __init__(self, ctx: c.BrokerContext, states) -> None:
        self.ctx = ctx
        self.states = states

    # ---------------------------------------------------------------------------------------------------- append
    def _append(self, records, pr, version: int) -> int | None:
        """Append one partition's records; fills ``pr`` and returns the end offset to wait for (None: no wait)."""
        ctx = self.ctx
        if records is None:
            pr.error_code = c.CORRUPT_MESSAGE
            return None
        shape = shape_error(version, records)  # one magic-2 batch, as Kafka requires
        if shape is not None:
            pr.error_code, pr.error_message = shape
            return None
        raw = bytes(records)
        try:
            batches = list(read_batches(raw, validate=False))  # headers only: the core validates the batch
        except CorruptRecordError as exc:
            pr.error_code, pr.error_message = c.CORRUPT_MESSAGE, str(exc)
            return None
        if not batches:
            pr.error_code = c.CORRUPT_MESSAGE
            return None
        if any(b.is_control or b.is_transactional for b in batches):
            pr.error_code = c.INVALID_RECORD
            pr.error_message = "control and transactional batches are not accepted (transactions are not supported)"
            return None
        idempotent = [b for b in batches if b.producer_id >= 0]
        if idempotent:
            b = batches[0]
            check = self.states.check(b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta + 1)
            if check.error:
                pr.error_code, pr.error_message = check.error, check.message
                return None
            if check.duplicate is not None:
                if validate_batches(raw).valid_bytes != len(raw):  # the core did not see it: check it here
                    pr.error_code = c.CORRUPT_MESSAGE
                    return None
                pr.base_offset = check.duplicate[0]
                pr.log_start_offset = ctx.log.start_offset()
                return check.duplicate[1] + 1
        scan = self.states.scan
        scan.hold = True  # the batch is applied below from the headers in hand, not read back from the log
        try:
            first, last = ctx.driver.call(lambda raft, now: raft.append_batch(raw, now))
        except NotLeaderError:
            pr.error_code = c.NOT_LEADER_OR_FOLLOWER
            return None
        except RecordTooLargeError as exc:
            pr.error_code, pr.error_message = c.MESSAGE_TOO_LARGE, str(exc)
            return None
        except CorruptRecordError as exc:
            pr.error_code, pr.error_message = c.CORRUPT_MESSAGE, str(exc)
            return None
        finally:
            scan.hold = False
        if idempotent:
            b = batches[0]
            self.states.appended(b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta + 1,
                                 first, last)
        else:
            scan.appended(first, last, _nothing)
        pr.base_offset = first
        pr.log_start_offset = ctx.log.start_offset()
        return last + 1

    # ---------------------------------------------------------------------------------------------------- handler
    def handle(self, request, conn) -> None:
        ctx = self.ctx
        body, version = request.body, request.version
        R = w.ProduceResponse
        acks = body.acks
        epoch = ctx.epoch()
        targets = []
        topics = []
        for t in body.topic_data:
            parts = []
            for p in t.partition_data:
                pr = R.PartitionProduceResponse(index=p.index, error_code=0, base_offset=-1, log_append_time_ms=-1,
                                                log_start_offset=-1)
                parts.append(pr)
                if version < 3:
                    pr.error_code = c.UNSUPPORTED_VERSION
                elif acks not in (0, 1, -1):
                    pr.error_code = c.INVALID_REQUIRED_ACKS
                elif t.name != ctx.topic_name or p.index != 0:
                    pr.error_code = c.UNKNOWN_TOPIC_OR_PARTITION
                elif not ctx.is_leader():
                    pr.error_code = c.NOT_LEADER_OR_FOLLOWER
                else:
                    try:
                        end = self._append(p.records, pr, version)
                    except KraftwireError as exc:  # pragma: no cover - defensive: answer rather than disconnect
                        log.warning("produce from %s failed: %s", conn.peer, exc)
                        pr.error_code, end = c.CORRUPT_MESSAGE, None
                    if end is not None:
                        targets.append((pr, end))
                if pr.error_code == c.NOT_LEADER_OR_FOLLOWER and version >= 10:
                    pr.current_leader = R.LeaderIdAndEpoch(leader_id=ctx.leader_id(), leader_epoch=ctx.epoch())
            topics.append(R.TopicProduceResponse(name=t.name, partition_responses=parts))
        if acks == 0:
            return
        resp = R(responses=topics, throttle_time_ms=0)
        if not targets:
            conn.send_response(resp, version, request.header.correlation_id)
            return
        cid = request.header.correlation_id

        def answer(error: int) -> None:
            if error:
                for pr, _ in targets:
                    pr.error_code, pr.base_offset = error, -1
            conn.send_response(resp, version, cid)

        ctx.wait_for(max(end for _, end in targets), epoch, answer, committed=acks == -1, timeout_ms=body.timeout_ms)
