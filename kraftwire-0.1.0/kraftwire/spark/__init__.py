"""kraftwire on Spark: a PySpark Python Data Source over Raft log dirs/snapshots (batch), over topics on the wire with
the options and row schema of Spark's Kafka connector (batch and streaming), over a live quorum's consumer Fetch
(streaming), a sink writing topics, and the replica audit.

Modules: ``files`` (what PATH names, byte ranges from the ``.index``), ``scan`` (a range -> Arrow batches, the
schema, the corruption contract), ``datasource`` (the source: a PATH or ``kafka.bootstrap.servers`` chooses),
``topics`` (topics over the wire: the connector's options, schema, planner and readers), ``sink`` (writing
DataFrames and streams to topics, at-least-once or exactly-once), ``stream`` (tailing the quorum's log with
``bootstrap.servers``), ``audit`` (replica comparison as DataFrame work; CLI: ``kraftwire audit``).

    from kraftwire.spark import register, session
    spark = session("local[2]")            # or any SparkSession, then register(spark)
    df = spark.read.format("kraftwire").load("/var/lib/kraftwire/node-1")
    orders = (spark.read.format("kraftwire").option("kafka.bootstrap.servers", "localhost:9092")
              .option("subscribe", "orders").load())          # as format("kafka") would

``register(spark)`` registers the ``kraftwire`` source and turns on ``spark.sql.python.filterPushdown.enabled``.
Spark's Python workers must import kraftwire and pyarrow: ``session()`` sets ``PYSPARK_PYTHON`` to this interpreter
and puts this kraftwire's parent directory on ``PYTHONPATH`` before the JVM starts (workers inherit the
environment), which covers source trees and virtualenvs; ``PYTHONSAFEPATH`` keeps a worker started inside a source
checkout from importing that checkout (without its compiled extension) instead. pyspark is imported only when these functions run.
"""

from __future__ import annotations

import os
import sys

__all__ = ["register", "session", "worker_environment"]


def worker_environment() -> dict[str, str]:
    """The environment Spark's Python workers need to import this kraftwire (applied by :func:`session`)."""
    import kraftwire

    root = os.path.dirname(os.path.dirname(os.path.abspath(kraftwire.__file__)))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        paths.insert(0, root)
    # PYTHONSAFEPATH: a worker started in a source checkout must not import the checkout (no compiled extension)
    return {"PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON") or sys.executable,
            "PYTHONPATH": os.pathsep.join(paths), "PYTHONSAFEPATH": "1"}


def register(spark) -> None:
    """Register the ``kraftwire`` data source with ``spark`` and enable Python filter pushdown."""
    from kraftwire.spark.datasource import KraftwireDataSource

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(KraftwireDataSource)


def session(master: str = "local[2]", app_name: str = "kraftwire", conf: dict | None = None):
    """A SparkSession (getOrCreate) ready for kraftwire: worker environment set, source registered, UI off."""
    from pyspark.sql import SparkSession

    os.environ.update(worker_environment())
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4",
                "spark.sql.python.filterPushdown.enabled": "true",
                "spark.executorEnv.PYTHONPATH": os.environ["PYTHONPATH"], "spark.executorEnv.PYTHONSAFEPATH": "1"}
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    register(spark)
    return spark
