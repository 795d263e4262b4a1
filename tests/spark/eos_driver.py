"""A Spark driver for tests/spark/test_exactly_once_stream.py (run as its own process, in its own process group):
reads topic A over the wire, upper-cases the values, writes topic B exactly once (``exactlyOnce=true``), with
``Trigger.AvailableNow`` so that a run that is not killed ends by itself once A is consumed.

    python eos_driver.py BOOTSTRAP A B CHECKPOINT LOG KILL_AT

Every micro-batch the sink commits is appended to LOG as a JSON line (batch id, per task: partition, rows,
skipped). KILL_AT >= 0: when the sink's driver-side commit of that batch runs - every task's transaction is
committed in B, Spark's commit log does not have the batch yet - SIGKILL this driver's process group (the driver
and its JVM; the commit runs in a Python worker of pyspark's daemon, which has a process group of its own, killed
too): the worst moment for a sink without exactly-once.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def main() -> None:
    bootstrap, topic_a, topic_b, checkpoint, log, kill_at = sys.argv[1:7]
    kill_at = int(kill_at)
    os.environ["EOS_DRIVER_PGID"] = str(os.getpgid(0))  # inherited by the JVM and its Python workers
    from kraftwire.spark import session
    from kraftwire.spark.datasource import KraftwireDataSource
    from kraftwire.spark.sink import KraftwireStreamSinkWriter

    class LoggingWriter(KraftwireStreamSinkWriter):
        def commit(self, messages, batchId) -> None:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"batch": batchId, "pid": os.getpid(), "tasks": [
                    None if m is None else [m.partition, m.rows, m.skipped] for m in messages]}) + "\n")
            if batchId == kill_at:
                os.killpg(int(os.environ["EOS_DRIVER_PGID"]), signal.SIGKILL)
                os.killpg(os.getpgid(0), signal.SIGKILL)

    class TestSource(KraftwireDataSource):
        def streamWriter(self, schema, overwrite):
            return LoggingWriter(super().streamWriter(schema, overwrite).spec)

    spark = session("local[2]", "kraftwire-eos-test", {"spark.sql.shuffle.partitions": "2",
                                                       "spark.driver.memory": "512m"})
    spark.dataSource.register(TestSource)  # same name: replaces the registered kraftwire source
    q = (spark.readStream.format("kraftwire").option("kafka.bootstrap.servers", bootstrap)
         .option("subscribe", topic_a).option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "200")
         .load()
         .selectExpr("key", "upper(cast(value as string)) as value")
         .writeStream.format("kraftwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic_b)
         .option("exactlyOnce", "true").option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start())
    q.awaitTermination(300)
    ok = q.exception() is None and not q.isActive
    print("DONE" if ok else f"FAILED {q.exception()}", flush=True)
    spark.stop()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
