"""FindCoordinator at every version both serve: a group's and a transactional id's coordinator, several keys at once
(v4+), an empty key, an unknown key type."""

from __future__ import annotations

from conformance.data_steps import find_coordinator
from conformance.runner import each_version

G, T = "{ns}.g", "{ns}.t"

CASES = {
    "group": lambda v: [find_coordinator(v, G)],
    "transaction": lambda v: [find_coordinator(v, T, key_type=1)] if v >= 1 else None,
    "batched": lambda v: [find_coordinator(v, G, "{ns}.h", "{ns}.i")] if v >= 4 else None,
    "batched-transactions": lambda v: [find_coordinator(v, T, "{ns}.u", key_type=1)] if v >= 4 else None,
    "empty-group-id": lambda v: [find_coordinator(v, "", until=None)],
    "empty-transactional-id": lambda v: [find_coordinator(v, "", key_type=1, until=None)] if v >= 1 else None,
    "unknown-key-type": lambda v: [find_coordinator(v, G, key_type=7, until=None)] if v >= 1 else None,
    "no-keys": lambda v: [find_coordinator(v, until=None)] if v >= 4 else None,
}

SCENARIOS = each_version("FindCoordinator", CASES, config="coordinators")
