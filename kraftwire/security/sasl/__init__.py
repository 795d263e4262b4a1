"""SASL on Kafka listeners: the JAAS option syntax, the mechanisms, and the per-connection exchange, pure (bytes in,
bytes out; the asyncio edge in ``server/edge/sasl.py`` moves them)."""
