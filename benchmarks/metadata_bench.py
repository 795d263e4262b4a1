"""Loading a metadata snapshot: records decoded and folded per second, against the codec's plain batch reader.

    python benchmarks/metadata_bench.py [--topics 1000] [--partitions 100] [--rounds 3]

Builds an image of ``topics x partitions`` partitions (three brokers, replication factor 3, one log directory each,
the default metadata.version), writes it as a snapshot file the way a node does (``metadata.snapshot``), then times,
over the same bytes (best of ``--rounds``):

* ``read_batches``: the codec walking every record of every batch (the floor any loader pays);
* ``decode``: that walk plus the metadata serde (frame, api key, version, the record's fields);
* ``load``: ``load_snapshot``, i.e. decode plus the fold into a ``MetadataImage`` (what a node does at start).

The issue's goal is ``load`` at >= 25 % of ``read_batches``' records per second. Figures depend on the machine and are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid


def build_image(topics: int, partitions: int):
    from kraftwire.metadata.image import replay_all
    from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
    from kraftwire.protocol import messages as m

    endpoint = m.RegisterBrokerRecord.BrokerEndpoint
    dirs = {b: uuid.UUID(int=100 + b) for b in (1, 2, 3)}
    recs = [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)]
    recs += [m.RegisterBrokerRecord(broker_id=b, incarnation_id=uuid.UUID(int=b), broker_epoch=b, fenced=False,
                                    end_points=[endpoint(name="PLAINTEXT", host="localhost", port=9090 + b,
                                                         security_protocol=0)],
                                    log_dirs=[dirs[b]]) for b in (1, 2, 3)]
    for t in range(topics):
        tid = uuid.UUID(int=(1 << 64) + t)
        recs.append(m.TopicRecord(name=f"topic-{t:05d}", topic_id=tid))
        for p in range(partitions):
            replicas = [1 + (p + i) % 3 for i in range(3)]
            recs.append(m.PartitionRecord(partition_id=p, topic_id=tid, replicas=replicas, isr=replicas,
                                          leader=replicas[0], directories=[dirs[r] for r in replicas]))
    return replay_all(recs)


def _best(fn, rounds: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from kraftwire.metadata import records as serde
    from kraftwire.metadata.snapshot import encode_snapshot, load_snapshot
    from kraftwire import records
    from kraftwire.records import read_batches

    image = build_image(args.topics, args.partitions)
    data = encode_snapshot(image, epoch=1, timestamp=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "00000000000000101004-0000000001.checkpoint")
        with open(path, "wb") as f:
            f.write(data)
        with open(path, "rb") as f:
            data = f.read()

    def walk():
        n = 0
        for batch in read_batches(data):
            for _record in batch:
                n += 1
        return n

    def decode():
        n = 0
        for batch in read_batches(data):
            for record in batch:
                if not batch.is_control:
                    serde.decode(record.value)
                n += 1
        return n

    n = walk()
    t_walk, _ = _best(walk, args.rounds)
    t_decode, _ = _best(decode, args.rounds)
    t_load, loaded = _best(lambda: load_snapshot(data, end_offset=image.offset + 1), args.rounds)
    assert loaded == image, "the loaded image differs from the one written"
    partitions = sum(len(t.partitions) for t in image.topics.values())
    print(f"snapshot: {partitions:,} partitions, {n:,} records, {len(data) / 2**20:.1f} MiB, codec {records.IMPLEMENTATION}")
    print(f"{'step':<14}{'seconds':>10}{'records/s':>14}{'vs read_batches':>18}")
    for name, t in (("read_batches", t_walk), ("decode", t_decode), ("load", t_load)):
        print(f"{name:<14}{t:>10.3f}{n / t:>14,.0f}{t_walk / t:>17.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
