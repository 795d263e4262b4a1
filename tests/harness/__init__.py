"""Test helpers shared by the suite and the benchmarks: plain modules, imported by name (``tests/`` is put on
``sys.path`` by ``tests/conftest.py``; the benchmarks add it relative to their own file). Conftests hold fixtures only.

* ``processes`` — real node processes: ``Cluster``, ``NodeProc``, ``kw`` (``python -m kraftwire ...``), DescribeQuorum.
* ``roles``     — controllers and brokers as processes (``RolesCluster``) and broker Metadata helpers.
* ``clusters``  — three combined nodes of Apache Kafka or of kraftwire from the same keys (``KafkaCluster``,
  ``KraftwireCluster``), for ``benchmarks/vs_kafka.py`` and the tests beside Kafka.
* ``clients``   — the interop quorum (``Quorum``, ``start_quorum``), tagged values, deadlines, ``FaultProxy``.
* ``raft``      — one Raft node driven by hand through the production Ready executor (``NodeHarness``).
* ``batches``   — record batch builders and the ``LogHarness`` that opens, reopens and crashes a log.
* ``codec``     — comparing the two codec implementations (``outcome``, ``read_all``, ``fix_crc``, ...).
* ``messages``  — hypothesis strategies derived from the protocol declarations.
* ``wire``      — reading what a connection wrote (``answered_ids``).
* ``spark_logs``— node log dirs written through a real ``SegmentedLog`` for the Spark source tests.
* ``kafka_tools``— Kafka's own tools and Java clients in one JVM (``KafkaTools``) and a one-node kraftwire cluster
  for them (``start_single_node``).
"""
