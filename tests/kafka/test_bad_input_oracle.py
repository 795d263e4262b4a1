"""Bad input (issue #37), kraftwire beside Apache Kafka 4.4: the scenarios of ``harness.bad_input`` — Produce data
that is not one magic-2 batch per partition, strings over 32,767 bytes, ids of exactly 32,767 bytes, and accepted
requests whose answer Kafka cannot write — must come out the same from both: the same answers, or both closing the
connection. ``tests/server/test_bad_input_node.py`` checks the same outcomes on kraftwire alone (and its logs)."""

from __future__ import annotations

from harness import bad_input, processes, roles
from harness.kafka import KafkaNode

SCENARIOS = (bad_input.produce_shapes, bad_input.oversized_strings, bad_input.max_size_ids,
             bad_input.unwritable_answers)


def test_bad_input_is_met_as_kafka_4_4_meets_it(tmp_path):
    (tmp_path / "kraftwire").mkdir()
    with KafkaNode(tmp_path / "kafka", bad_input.PROPS + "offsets.topic.num.partitions=3\n") as kafka, \
            processes.CombinedNode(tmp_path / "kraftwire", bad_input.PROPS + "offsets.topic.replication.factor=1\n"
                                   "offsets.topic.num.partitions=3\ntransaction.state.log.replication.factor=1\n"
                                   "transaction.state.log.min.isr=1\n") as ours:
        roles.wait_until(lambda: roles.broker_ids(ours.port) == [1], "the kraftwire node online")
        roles.wait_until(lambda: roles.broker_ids(kafka.port) == [1], "the Kafka node online")
        problems = []
        for scenario in SCENARIOS:
            theirs, mine = scenario(kafka.port), scenario(ours.port)
            problems += [f"{scenario.__name__} / {case}: Kafka {theirs[case]!r}, kraftwire {mine.get(case)!r}"
                         for case in theirs if theirs[case] != mine.get(case)]
    assert not problems, f"{len(problems)} differences from Kafka 4.4:\n" + "\n".join(problems)
