"""The network edge: bytes in and out. Inbound connections (``connection``: frames → ``dispatcher``), the Raft
RPCs' Kafka framing (``wire``), SASL (``sasl``), ACL checks (``access``), outbound links to the voters (``peers``)
and to other brokers (``broker_links``, ``client``), and the metrics endpoint (``metrics``)."""
