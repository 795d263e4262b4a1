"""The asyncio edge around the pure Raft core: a process people run.

* ``settings.py``   — Kafka properties → ``NodeSettings`` (listeners, voters, roles, timings); refusals name key and value
* ``app.py``        — ``Node``: wires log, quorum-state, core, driver, peers, listeners, metrics; graceful shutdown
* ``driver.py``     — executes each ``Ready`` in the contract's order (fsync off the loop, gated sends), fail-stop
* ``peers.py``      — outbound connections to the voters (timeouts, reconnect backoff, ``RequestFailed``); follows
  the KIP-853 voter set as it changes
* ``connection.py`` — inbound connections: bytes → frames → dispatcher
* ``dispatcher.py`` — api key → handler; ApiVersions derived from the registered handlers
* ``wire.py``       — core Raft messages ↔ Kafka's Vote/BeginQuorumEpoch/EndQuorumEpoch/Fetch/FetchSnapshot/DescribeQuorum
  and AddRaftVoter/RemoveRaftVoter (with Kafka's checks and messages)
* ``client.py``     — a minimal Kafka client (DescribeQuorum forwarding, admin tools)
* ``metrics.py``    — latency histogram; the Prometheus endpoint (prometheus_client, one registry per node)

Other APIs plug in with ``node.dispatcher.register(api_key, min_version, max_version, handler)`` before
``node.start()``; a handler gets ``(request, conn)`` and answers with ``conn.send_response(body, version, cid)``.
Fetch is shared: set ``node.broker_fetch = (min_version, handler)`` to receive every Fetch that is not a Raft
replica's.
Leader writes go through ``node.driver.call(lambda raft, now: raft.append_batch(batch, now))``.
"""
