"""The broker registry folded from kraftwire control records, and its snapshot image."""

from __future__ import annotations

import uuid

from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.records.control import (
    KRAFTWIRE_BROKER_REGISTRATION,
    KRAFTWIRE_BROKER_STATE,
    control_record_key,
    encode_control_value,
)
from kraftwire.server.test_server import lifecycle as lc


def _batch(base_offset: int, records) -> object:
    b = RecordBatchBuilder(base_offset=base_offset, is_control=True)
    for ctype, msg in records:
        b.append(control_record_key(ctype), encode_control_value(ctype, msg))
    return next(iter(read_batches(b.build(), validate=True)))


def _reg(broker_id: int, port: int):
    R = w.KraftwireBrokerRegistrationRecord
    return (KRAFTWIRE_BROKER_REGISTRATION, R(broker_id=broker_id, incarnation_id=uuid.uuid4(), fenced=True,
                                             endpoints=[R.Endpoint(name="BROKER", host="h", port=port)]))


def _state(broker_id: int, epoch: int, state: int):
    return (KRAFTWIRE_BROKER_STATE, w.KraftwireBrokerStateRecord(broker_id=broker_id, broker_epoch=epoch, state=state))


def test_fold_epoch_is_the_registration_offset_and_stale_changes_are_ignored():
    reg = lc.BrokerRegistry()
    reg.apply(_batch(10, [_reg(4, 9095)]))
    assert reg.brokers[4].epoch == 10 and reg.brokers[4].state == lc.FENCED and reg.online() == []
    reg.apply(_batch(11, [_state(4, 10, lc.ONLINE)]))
    assert [i.broker_id for i in reg.online()] == [4] and reg.brokers[4].changed_at == 11
    reg.apply(_batch(20, [_reg(4, 9096)]))  # re-registration: a new epoch, Fenced again
    reg.apply(_batch(21, [_state(4, 10, lc.ONLINE)]))  # a change for the old epoch does not apply
    assert reg.brokers[4].epoch == 20 and reg.brokers[4].state == lc.FENCED
    reg.apply(_batch(22, [_state(4, 20, lc.STOPPING), _state(4, 20, lc.OFFLINE)]))
    assert reg.brokers[4].state_name == "Offline" and reg.brokers[4].changed_at == 23


def test_image_round_trip_ignores_other_kinds():
    reg = lc.BrokerRegistry()
    reg.apply(_batch(5, [_reg(4, 1), _reg(5, 2)]))
    reg.apply(_batch(7, [_state(5, 6, lc.ONLINE)]))
    image = reg.image()
    other = lc.BrokerRegistry()
    other.load([b'{"kw":"offset","group":"g"}', b"not json", *image])
    assert {k: (v.epoch, v.state, v.endpoints) for k, v in other.brokers.items()} == {
        4: (5, lc.FENCED, [("BROKER", "h", 1)]), 5: (6, lc.ONLINE, [("BROKER", "h", 2)])}
