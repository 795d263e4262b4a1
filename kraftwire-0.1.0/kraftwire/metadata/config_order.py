"""The order DescribeConfigs lists a resource's keys in, as Kafka 4.4 lists them.

Kafka builds the answer from the resource's ``AbstractConfig``: the keys its ``nonInternalValues()`` map holds, in
that ``HashMap``'s iteration order (after the originals it does not define, which kraftwire never has). That map is
filled from ``values()``, itself a ``HashMap`` filled in the order the ``ConfigDef`` defines its keys (internal keys
included); so the order is a function of the definition order and of the two maps' sizes (``java_order``). The
definition orders are Kafka's facts, generated into ``kafka_config_order.tsv`` beside the package by
``tests/kafka/ConfigOrder.java`` (``tests/kafka/test_config_order.py`` checks the file and this order against the
release's jars). Keys Kafka does not describe (kraftwire's own) come after Kafka's, in the order given.
"""

from __future__ import annotations

from importlib import resources
from typing import Iterable

from kraftwire.java_order import hashmap_order, string_hash

ORDER_PATH = resources.files("kraftwire").joinpath("kafka_config_order.tsv")


def _definitions() -> dict[str, list[tuple[str, bool]]]:
    scopes: dict[str, list[tuple[str, bool]]] = {}
    for line in ORDER_PATH.read_text().splitlines():
        if line and not line.startswith("#"):
            scope, name, internal = line.split("\t")
            scopes.setdefault(scope, []).append((name, internal == "1"))
    return scopes


def described_order(definitions: list[tuple[str, bool]]) -> list[str]:
    """The keys of a configuration defined in this order (``(name, internal)``) as DescribeConfigs lists them."""
    values = hashmap_order([name for name, _ in definitions], string_hash)
    internal = {name for name, hidden in definitions if hidden}
    return hashmap_order([name for name in values if name not in internal], string_hash)


DEFINITIONS = _definitions()
#: scope (broker, topic, group) -> key -> its place in Kafka's answer
RANKS: dict[str, dict[str, int]] = {scope: {name: i for i, name in enumerate(described_order(defs))}
                                    for scope, defs in DEFINITIONS.items()}


def in_described_order(scope: str, names: Iterable[str]) -> list[str]:
    """``names`` in Kafka's DescribeConfigs order for ``scope``; names Kafka does not describe last, as given."""
    ranks, last = RANKS[scope], len(RANKS[scope])
    return [name for _, _, name in sorted((ranks.get(name, last), i, name) for i, name in enumerate(names))]
