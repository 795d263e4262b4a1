"""Producer id blocks: the active controller's ProducerIdControlManager, pure.

AllocateProducerIds gives the asking broker the next block of 1,000 ids (Kafka's block size), recorded as a
ProducerIdsRecord whose ``next_producer_id`` is the end of the block, so ids are unique across the cluster and across
controller failovers (the next controller starts from the image). A broker that is not registered with that epoch
gets STALE_BROKER_EPOCH; when the next block would pass the int64 range, UNKNOWN_SERVER_ERROR, as Kafka answers.
"""

from __future__ import annotations

from kraftwire.error_codes import NONE, STALE_BROKER_EPOCH, UNKNOWN_SERVER_ERROR
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m

BLOCK_SIZE = 1000
_LONG_MAX = 2**63 - 1


def allocate(image: MetadataImage, req) -> ControllerResult:
    R = m.AllocateProducerIdsResponse
    b = image.brokers.get(req.broker_id)
    if b is None or b.epoch != req.broker_epoch:
        return ControllerResult((), R(throttle_time_ms=0, error_code=STALE_BROKER_EPOCH, producer_id_start=-1,
                                      producer_id_len=0), "stale broker epoch")
    first = image.producer_ids.next_producer_id
    if first > _LONG_MAX - BLOCK_SIZE:
        return ControllerResult((), R(throttle_time_ms=0, error_code=UNKNOWN_SERVER_ERROR, producer_id_start=-1,
                                      producer_id_len=0), "producer ids exhausted")
    record = m.ProducerIdsRecord(broker_id=req.broker_id, broker_epoch=req.broker_epoch,
                                 next_producer_id=first + BLOCK_SIZE)
    return ControllerResult((ApiMessageAndVersion(record, 0),),
                            R(throttle_time_ms=0, error_code=NONE, producer_id_start=first,
                              producer_id_len=BLOCK_SIZE), f"producer ids {first}..{first + BLOCK_SIZE - 1}")
