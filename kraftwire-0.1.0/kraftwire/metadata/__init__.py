"""Kafka's metadata records and what is folded from them (the cluster layer; pure, no I/O)."""
