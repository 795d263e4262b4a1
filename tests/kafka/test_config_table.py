"""``kraftwire/kafka_configs.tsv`` holds the facts of the pinned Kafka release: every broker, topic and group key
with Kafka's type, default, validator, importance, dynamic update mode and synonyms, exactly as Kafka's own
ConfigDefs (read through ``DumpConfigs.java`` on Kafka's jars) define them. Regenerate with
``python -m kraftwire.tools.generate_configs`` when the pin moves."""

from __future__ import annotations

from harness.kafka import run_java

from kraftwire import kafka_configs


def _table_facts() -> list[str]:
    text = kafka_configs.TABLE_PATH.read_text(encoding="utf-8")
    return ["\t".join(line.split("\t")[:-1]) for line in text.splitlines() if line and not line.startswith("#")]


def test_the_table_holds_the_facts_of_the_pinned_kafka_release():
    kafka = [line for line in run_java("DumpConfigs.java").splitlines() if line.strip()]
    ours = _table_facts()
    missing = sorted(set(kafka) - set(ours))
    extra = sorted(set(ours) - set(kafka))
    assert not missing and not extra, (f"the table differs from Kafka {kafka_configs.KAFKA_VERSION}: regenerate it\n"
                                       + "\n".join([f"- {x}" for x in extra] + [f"+ {x}" for x in missing]))
    assert ours == kafka  # and in Kafka's order (scope, then name)


def test_every_key_says_what_kraftwire_does_with_it():
    kinds = {kafka_configs.HONOURED, kafka_configs.MEANINGLESS, kafka_configs.UNSUPPORTED}
    assert {k.kraftwire for k in kafka_configs.ALL} <= kinds
    assert len(kafka_configs.BROKER) > 300 and len(kafka_configs.TOPIC) > 30 and len(kafka_configs.GROUP) > 10
    # the durability keys of issue #35 are honoured, through the topic keys they are synonyms of
    for name in ("min.insync.replicas", "unclean.leader.election.enable", "log.retention.ms", "log.retention.hours",
                 "log.segment.bytes", "message.max.bytes", "log.cleanup.policy"):
        assert kafka_configs.BROKER[name].kraftwire == kafka_configs.HONOURED, name
