"""Kafka's error answer in place of an answer that cannot be written (``kraftwire.protocol.error_answers``): every one
is writable at every version, carries the code where Kafka puts it, and keeps the items' keys."""

from __future__ import annotations

import pytest

from kraftwire.error_codes import UNKNOWN_SERVER_ERROR
from kraftwire.protocol import codec, messages as m
from kraftwire.protocol.error_answers import ITEM_KEYS, error_answer


def _versions(cls):
    lo, hi = cls.VALID_VERSIONS
    return range(lo, hi + 1)


def test_every_answer_with_a_top_level_error_code_gets_one_at_every_version():
    written = 0
    for cls in m.MESSAGES.values():
        if cls.KIND != "response" or cls.NAME in ITEM_KEYS:
            continue
        for v in _versions(cls):
            answer = error_answer(cls(), v, UNKNOWN_SERVER_ERROR)
            if any(f.attr == "error_code" and f.present(v) for f in cls._info.fields):
                assert codec.decode(cls, codec.encode(answer, v), v).error_code == UNKNOWN_SERVER_ERROR
                written += 1
            else:
                assert answer is None, (cls.NAME, v)
    assert written > 100


@pytest.mark.parametrize("name", sorted(ITEM_KEYS))
def test_an_answer_of_items_refuses_each_item_and_keeps_its_keys(name):
    cls = m.get(name)
    items, keys = ITEM_KEYS[name]
    item_cls = next(f.struct.cls for f in cls._info.fields if f.attr == items)
    samples = {"name": "topic", "group_id": "group", "resource_type": 2, "resource_name": "res"}
    for v in _versions(cls):
        body = cls(**{items: [item_cls(**{k: samples[k] for k in keys}), item_cls(**{k: samples[k] for k in keys})]})
        for item in getattr(body, items):
            item.error_code = 0
            if hasattr(item, "error_message"):
                item.error_message = "x" * 40_000  # the unwritable part
        decoded = codec.decode(cls, codec.encode(error_answer(body, v, UNKNOWN_SERVER_ERROR), v), v)
        for item in getattr(decoded, items):
            assert item.error_code == UNKNOWN_SERVER_ERROR
            assert [getattr(item, k) for k in keys] == [samples[k] for k in keys]
            assert getattr(item, "error_message", None) in (None, "")  # "" where the version has no null
