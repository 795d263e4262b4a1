"""Spark test fixtures: one session-scoped local[2] SparkSession, and three replicas' log dirs (helpers:
``harness.spark_logs``). The session has Spark's own Kafka connector on its classpath (``spark.jars``, fetched by
``tests/kafka/fetch.sh tests/kafka/spark/pom.xml``) for the side-by-side tests of ``test_kafka_connector.py``.

pyspark is imported at module level on purpose: without it these tests fail (they must not be skipped in CI).
"""

from __future__ import annotations

import pyspark  # a missing pyspark is an error here, not a skip
import pytest

from harness.kafka import spark_connector_jars
from harness.spark_logs import write_node_log

PYSPARK_VERSION = pyspark.__version__


@pytest.fixture(scope="session")
def spark():
    from kraftwire.spark import session

    s = session("local[2]", "kraftwire-tests", {"spark.sql.shuffle.partitions": "2",
                                                  "spark.default.parallelism": "2",
                                                  "spark.driver.memory": "1g",
                                                  "spark.jars": ",".join(spark_connector_jars())})
    yield s
    s.stop()


@pytest.fixture(scope="session")
def node_logs(tmp_path_factory):
    """Three healthy replicas of the same history (node 1, 2, 3) in one parent dir."""
    parent = tmp_path_factory.mktemp("replicas")
    out = {}
    for n in (1, 2, 3):
        out[n] = write_node_log(str(parent / f"node-{n}"), n)
    return {"parent": str(parent), "nodes": out}
