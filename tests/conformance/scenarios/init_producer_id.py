"""InitProducerId at every version both serve: an idempotent producer (no transactional id), a transactional one
and its second initialization (the epoch bumps), a producer naming its id and epoch (KIP-360, v3+: a transactional
one's epoch bumps, an idempotent one gets a new id; a wrong epoch or an unknown producer is refused), a transaction
timeout above transaction.max.timeout.ms, an empty transactional id."""

from __future__ import annotations

from conformance.data_steps import EPOCH, PID, find_coordinator, init_producer_id, transactional
from conformance.runner import each_version

T = "{ns}.t"

CASES = {
    "idempotent": lambda v: [init_producer_id(v), init_producer_id(v)],
    "transactional": lambda v: [find_coordinator(3, T, key_type=1), init_producer_id(v, T)],
    "transactional-again": lambda v: [*transactional(), init_producer_id(v, T)],
    "bump-idempotent": lambda v: [init_producer_id(v), init_producer_id(v, producer_id=PID, epoch=EPOCH)]
    if v >= 3 else None,
    "bump-transactional": lambda v: [*transactional(), init_producer_id(v, T, producer_id=PID, epoch=EPOCH)]
    if v >= 3 else None,
    "bump-wrong-epoch": lambda v: [*transactional(), init_producer_id(v, T, producer_id=PID, epoch=5)]
    if v >= 3 else None,
    "bump-unknown-producer": lambda v: [*transactional(), init_producer_id(v, T, producer_id=987654, epoch=0)]
    if v >= 3 else None,
    "timeout-too-large": lambda v: [find_coordinator(3, T, key_type=1), init_producer_id(v, T, timeout_ms=900_001)],
    "empty-transactional-id": lambda v: [init_producer_id(v, "")],
}

SCENARIOS = each_version("InitProducerId", CASES, config="coordinators")
