"""kraftwire's leader epoch cache (``kraftwire.log.epoch_cache``) against Kafka 4.4's own ``LeaderEpochFileCache``
(``EpochCacheOracle.java``): the same scripts of assignments, truncations from the start and from the end, and
``endOffsetFor`` questions give the same answers and leave the same entries.

The first script is partition 1 of the partition simulation's seed 130: a leader's epoch 0 ended at 67, epoch 1
began there; once retention moves the log start to 90 the cache is ``[(1, 90)]`` and an epoch older than every entry
is answered with the first entry's start, the log start. A restarted old leader fetching at 90 with its last epoch 0
is then not told it diverges, whatever it holds below 90 (Kafka's ``Partition.readRecords`` sends DivergingEpoch only
when that answer's epoch or end is below the fetch's): the simulation's invariant allows for it
(``kraftwire.testing.partition_checks``)."""

from __future__ import annotations

import random

from kraftwire.log.epoch_cache import LeaderEpochCache

from harness.kafka import run_java

SEED_130 = "assign 0 0;assign 1 67;ask 0 109;start 38;ask 0 109;start 90;ask 0 109;ask 1 109;assign 2 114;ask 0 119"


def _random_script(rng: random.Random) -> str:
    ops, epoch, offset = [], 0, 0
    for _ in range(rng.randint(1, 12)):
        roll = rng.random()
        if roll < 0.4:
            epoch, offset = epoch + rng.randint(0, 2), offset + rng.randint(0, 30)
            ops.append(f"assign {epoch} {offset}")
        elif roll < 0.55:
            ops.append(f"start {rng.randint(0, offset + 5)}")
        elif roll < 0.65:
            ops.append(f"end {rng.randint(0, offset + 5)}")
        else:
            ops.append(f"ask {rng.randint(-1, epoch + 1)} {offset + rng.randint(0, 10)}")
    return ";".join(ops)


def _ours(script: str) -> str:
    cache, answers = LeaderEpochCache(), []
    for op in script.split(";"):
        word, *args = op.split()
        numbers = [int(a) for a in args]
        if word == "assign":
            cache.assign(*numbers)
        elif word == "start":
            cache.truncate_from_start(*numbers)
        elif word == "end":
            cache.truncate_from_end(*numbers)
        else:
            answers.append("%d %d" % cache.end_offset_for(*numbers))
    return "\t".join(answers) + "\t|\t" + "\t".join(f"{e.epoch}@{e.start_offset}" for e in cache.entries())


def test_the_epoch_cache_answers_as_kafkas(tmp_path):
    rng = random.Random(130)
    scripts = [SEED_130] + [_random_script(rng) for _ in range(300)]
    path = tmp_path / "scripts.txt"
    path.write_text("".join(s + "\n" for s in scripts))
    kafka = run_java("EpochCacheOracle.java", str(path)).splitlines()
    assert len(kafka) == len(scripts)
    # seed 130: (0, 67) while epoch 0's end is cached; (0, 90), the log start, once retention passed it
    assert kafka[0] == "0 67\t0 67\t0 90\t1 109\t0 90\t|\t1@90\t2@114"
    for script, theirs in zip(scripts, kafka):
        assert _ours(script) == theirs, script
