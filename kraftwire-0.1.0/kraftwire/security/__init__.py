"""Security of listeners and connections: TLS contexts from Kafka's ``ssl.*`` keys (``tls``) and the principal of
an authenticated connection (``principal``)."""
