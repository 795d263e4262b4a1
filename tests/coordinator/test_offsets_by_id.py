"""OffsetFetch v10 answers topics by id (KIP-848), ``kraftwire.coordinator.group.offsets.offset_fetch_response``; the
whole exchange against Kafka 4.4 is ``tests/kafka/test_api_levels_oracle.py``'s
``test_offset_commit_and_fetch_v10_name_topics_by_id``."""

from __future__ import annotations

import uuid

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.shard import TOPIC_IDS_SINCE, OffsetEntry, offset_fetch_response
from kraftwire.protocol import codec
from kraftwire.protocol import messages as w

T, UNKNOWN = uuid.UUID(int=7), uuid.UUID(int=12345)


def test_a_v10_answer_names_each_topic_by_its_id_and_an_unknown_id_by_itself():
    groups = [("g", 0, [("t", [(0, OffsetEntry(4, -1, "m", 0, -1))]),
                        (UNKNOWN, [(0, None, ec.UNKNOWN_TOPIC_ID)])])]
    answer = offset_fetch_response(TOPIC_IDS_SINCE, groups, {"t": T, UNKNOWN: UNKNOWN})
    wire = codec.decode(w.OffsetFetchResponse, codec.encode(answer, TOPIC_IDS_SINCE), TOPIC_IDS_SINCE)
    assert [(t.name, t.topic_id, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions])
            for t in wire.groups[0].topics] == [("", T, [(0, 4, 0)]), ("", UNKNOWN, [(0, -1, ec.UNKNOWN_TOPIC_ID)])]
    below = offset_fetch_response(TOPIC_IDS_SINCE - 1, [("g", 0, groups[0][2][:1])])
    assert codec.decode(w.OffsetFetchResponse, codec.encode(below, 9), 9).groups[0].topics[0].name == "t"
