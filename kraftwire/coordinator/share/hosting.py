"""The share coordinator as a kind of shard the coordinator runtime hosts (``kraftwire.coordinator.runtime``), and
the splitting of a share-state request into its keys (Kafka's ``ShareCoordinatorService``).

* **Loading** folds every record of the ``__share_group_state`` partition into a fresh ``ShareShard``; its **own
  writes** are folded once appended (the shard answers from what the log holds, and a failed write reloads it).
* **Requests** name many keys; each key (group, topic id, partition) lives in the state partition its coordinator
  key hashes to (``coordinator_key``), and is one operation there. ``split`` turns a request into its keys, and
  ``join`` the per-key answers back into one response in the request's order. A request with no topics, a topic
  with no partitions, or an empty group id is answered with an empty response (Kafka's service does so before
  anything is routed).
"""

from __future__ import annotations

import logging
from typing import Callable, NamedTuple

from kraftwire import error_codes as ec
from kraftwire.coordinator.partitioning import partition_for
from kraftwire.coordinator.runtime import replay_batch
from kraftwire.coordinator.share.shard import ShareCoordinatorConfig, ShareShard, coordinator_key
from kraftwire.protocol import messages as w

log = logging.getLogger("kraftwire.share")

SHARE_STATE_TOPIC = "__share_group_state"

#: API name -> (response class, its result item's name, what Kafka's refusal message says it was unable to do)
_SHAPES = {
    "WriteShareGroupState": (w.WriteShareGroupStateResponse, "WriteStateResult", "write share group state"),
    "ReadShareGroupState": (w.ReadShareGroupStateResponse, "ReadStateResult", "read share group state"),
    "InitializeShareGroupState": (w.InitializeShareGroupStateResponse, "InitializeStateResult",
                                  "initialize share group state"),
    "DeleteShareGroupState": (w.DeleteShareGroupStateResponse, "DeleteStateResult", "delete share group state"),
    "ReadShareGroupStateSummary": (w.ReadShareGroupStateSummaryResponse, "ReadStateSummaryResult",
                                   "read share group state summary"),
}


class KeyOp(NamedTuple):
    """One key of a share-state request: where it lives and the request's data for it."""

    state_partition: int
    topic_id: object
    data: object  # the request's PartitionData


def split(body, partitions: int) -> list[KeyOp] | None:
    """The keys of a share-state request, each with its ``__share_group_state`` partition (of ``partitions``); None
    when Kafka answers the request empty at once."""
    if not body.topics or any(not t.partitions for t in body.topics) or not body.group_id:
        return None
    return [KeyOp(partition_for(coordinator_key(body.group_id, t.topic_id, p.partition), partitions), t.topic_id, p)
            for t in body.topics for p in t.partitions]


def join(api: str, answers: list) -> object:
    """One response from the per-key responses (each for one key), keys of a topic gathered under it in order."""
    response_cls, result_name, _ = _SHAPES[api]
    result_cls = getattr(response_cls, result_name)
    results: dict = {}
    for answer in answers:
        for r in answer.results:
            results.setdefault(r.topic_id, []).extend(r.partitions)
    return response_cls(results=[result_cls(topic_id=t, partitions=ps) for t, ps in results.items()])


def refusal_message(api: str, code: int) -> str:
    """Kafka's message for a key its coordinator could not serve: "Unable to <do it>: <why>"."""
    return f"Unable to {_SHAPES[api][2]}: {ec.default_message(code) or ec.name_of(code)}"


def key_refusal(api: str, op: KeyOp, code: int, message: str | None = None) -> object:
    """The one-key answer ``code``: for a key its coordinator could not serve (NOT_COORDINATOR,
    COORDINATOR_LOAD_IN_PROGRESS, a failed write's code) Kafka's "Unable to ..." message, else ``message``."""
    response_cls, result_name, _ = _SHAPES[api]
    part = response_cls.PartitionResult(partition=op.data.partition, error_code=code,
                                        error_message=message or refusal_message(api, code))
    return response_cls(results=[getattr(response_cls, result_name)(topic_id=op.topic_id, partitions=[part])])


class ShareKind:
    """``ShardKind`` of the share coordinator. ``config()``: the shard's config now; ``partitions_of(topic_id)``: a
    topic's partition count in the metadata image (None: unknown)."""

    topic = SHARE_STATE_TOPIC

    def __init__(self, config: Callable[[], ShareCoordinatorConfig],
                 partitions_of: Callable[[object], int | None]) -> None:
        self.config = config
        self.partitions_of = partitions_of

    def new_shard(self, partition: int) -> ShareShard:
        return ShareShard(partition, self.config(), partitions_of=self.partitions_of)

    take = staticmethod(replay_batch)

    @staticmethod
    def loaded(hosted, now_ms: int) -> None:
        log.info("loaded %s-%d in leader epoch %d: %d records, %d share-partitions", SHARE_STATE_TOPIC,
                 hosted.partition, hosted.epoch, hosted.records, len(hosted.shard.states))

    @staticmethod
    def serving(shard: ShareShard) -> bool:
        return True

    @staticmethod
    def appended(hosted, records: list, base_offset: int, producer) -> None:
        for key, value in records:
            hosted.shard.replay(key, value)

    @staticmethod
    def committed(hosted, result) -> None:
        pass  # the replies were all a state write owes

    @staticmethod
    def advanced(hosted) -> None:
        pass

    @staticmethod
    def refusal(reply, code: int):
        """A one-key answer refused with ``code`` (its write failed): the key's partition result carries it."""
        for r in reply.body.results:
            for p in r.partitions:
                p.error_code, p.error_message = code, refusal_message(reply.api, code)
                if hasattr(p, "state_batches"):
                    p.state_batches = []
        return reply.body

    @staticmethod
    def producer_refusal(error: int):
        return None  # the share coordinator writes no transactional batches

    @staticmethod
    def unloaded(shard: ShareShard):
        return ()  # nothing waits in a share shard
