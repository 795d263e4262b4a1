"""kraftwire: a KRaft (Kafka Raft) quorum node that speaks the Kafka wire protocol."""

__version__ = "0.1.0"
