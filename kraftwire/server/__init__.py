"""The asyncio edge around the pure layers: a process people run. One package per role, each importing only those
before it in ``edge``, ``runtime``, ``apis``, ``node``, ``test_server`` (``tests/test_layout.py``): the test server
plugs itself into the node, which never imports it.

* ``edge/``        — the network edge: inbound connections (``connection``), framing of Raft RPCs (``wire``), the
  dispatcher, SASL, ACL checks (``access``), outbound links to voters and brokers (``peers``, ``broker_links``,
  ``client``), the metrics endpoint
* ``runtime/``     — what executes the pure layers' decisions: the Raft driver, the metadata node, the hosted
  partitions (``replicas``, ``hosted``, ``log_dirs``, ``fetcher``, cleaning), the coordinator runtime, the waits
  (``purgatory``, ``waits``), the clocks
* ``apis/``        — the API handlers (decode → call a runtime → encode), one module per API family
* ``node/``        — the node's assembly: settings, the ``Node`` (``app``, ``raft_io``), the listener and broker
  roles (``roles``, ``kraft_roles``)
* ``test_server/`` — the raft test server (``server.RaftTestServer``): its log served to clients as a topic, with its
  own broker lifecycle

Other APIs plug in with ``node.dispatcher.register(api_key, min_version, max_version, handler)`` before
``node.start()``; a handler gets ``(request, conn)`` and answers with ``conn.send_response(body, version, cid)``.
Fetch is shared: set ``node.broker_fetch = (min_version, handler)`` to receive every Fetch that is not a Raft
replica's.
Leader writes go through ``node.driver.call(lambda raft, now: raft.append_batch(batch, now))``.
"""
