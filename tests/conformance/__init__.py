"""Differential conformance against Apache Kafka 4.4: see :mod:`conformance.runner`."""
