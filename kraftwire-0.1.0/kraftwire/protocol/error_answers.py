"""The answer Kafka gives instead of one it cannot write (``AbstractRequest.getErrorResponse``), built from that answer.

When Kafka fails to serialise an answer (a string over 32,767 bytes: an error message quoting a 32 KB topic name, a
member id made of a 32 KB client id and a UUID) its request handler catches the failure and answers the request's
error response with UNKNOWN_SERVER_ERROR: the top-level error code where the answer has one, otherwise one entry
per item of the request carrying the code (no message) and nothing else. The items' keys are read back from the
unwritable answer, which lists them in the request's order — keys the request carried, so they are writable.

Only the answers with an item list declared in ``ITEM_KEYS`` are rebuilt item by item: those where kraftwire can
meet such a string (see ``tests/server/test_bad_input_node.py``); any other answer without a top-level error code has
no error answer here.
"""

from __future__ import annotations

from kraftwire.protocol.messages import MessageBase

#: answer name -> (its item list, the item fields that say which request item an entry answers)
ITEM_KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "CreateTopicsResponse": ("topics", ("name",)),
    "DescribeGroupsResponse": ("groups", ("group_id",)),
    "AlterConfigsResponse": ("responses", ("resource_type", "resource_name")),
    "IncrementalAlterConfigsResponse": ("responses", ("resource_type", "resource_name")),
}


def _field(cls, name: str, version: int):
    """The declaration of field ``name`` of ``cls`` when it is on the wire at ``version``."""
    return next((f for f in cls._info.fields if f.attr == name and f.present(version)), None)


def error_answer(body: MessageBase, version: int, code: int) -> MessageBase | None:
    """Kafka's error answer with ``code`` in place of ``body`` at ``version``, or None when none is declared."""
    cls = type(body)
    if _field(cls, "error_code", version) is not None:
        answer = cls()
        answer.error_code = code
        return answer
    declared = ITEM_KEYS.get(cls.NAME)
    if declared is None:
        return None
    items, keys = declared
    item_cls = next(f.struct.cls for f in cls._info.fields if f.attr == items)
    entries = []
    for item in getattr(body, items):
        entry = item_cls(**{k: getattr(item, k) for k in keys})
        entry.error_code = code
        message = _field(item_cls, "error_message", version)
        if message is not None and message.is_nullable(version):
            entry.error_message = None
        entries.append(entry)
    answer = cls()
    setattr(answer, items, entries)
    return answer
