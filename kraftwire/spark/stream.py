"""``spark.readStream.format("kraftwire").option("bootstrap.servers", "h:p,h:p").load()``: tail a live quorum.

Committed records only, through the Kafka Fetch API (read_committed; kraftwire's consumer Fetch serves nothing at
or above the high watermark). Offsets are log offsets: Spark's offset is ``{"offset": N}`` = the next offset to
read, so a micro-batch ``[start, end)`` is fixed before it runs and is re-read identically after a failure —
with a checkpoint and a file sink, a restart neither loses nor repeats a record.

* ``initialOffset`` — option ``startingOffsets``: ``earliest`` (default: the log start), ``latest`` (the high
  watermark when the query starts) or a number.
* ``latestOffset`` — the high watermark the leader reports in a Fetch response (capped by ``maxOffsetsPerTrigger``
  when given).
* ``partitions(start, end)`` — offset ranges of at most ``maxOffsetsPerPartition`` (default 100,000), read in
  parallel by the workers, each fetching from the leader and decoding with the columnar codec.

Rows have the batch source's schema: ``node`` = the node that served the fetch, ``path`` null, ``committed`` true.
Control records are included (flagged) unless ``includeControl`` is false. Other options: ``topic`` (default: the
quorum's one topic from Metadata), ``fetch.max.bytes`` (default 8 MiB), ``timeoutMs`` (default 30,000).

Reading topics as Spark's Kafka connector does (``kafka.bootstrap.servers``, ``subscribe``, ...: any topics and
partitions, the connector's schema and checkpointed offsets) is :mod:`kraftwire.spark.topics`; this module is the
older tail of one partition, kept for the ``bootstrap.servers`` option.
"""

from __future__ import annotations

import asyncio
import time
from typing import Iterator

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

__all__ = ["KraftwireStreamReader", "OffsetRangePartition", "QuorumClient"]

_NOT_LEADER = {6, 74, 75}  # NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH
_FETCH_VERSION = 12  # topic names (no topic ids needed)
_METADATA_VERSION = 9


class QuorumClient:
    """Blocking helper over kraftwire's asyncio Kafka client: Metadata for the topic and leader, then Fetch."""

    def __init__(self, bootstrap: str, topic: str | None = None, timeout: float = 30.0) -> None:
        from kraftwire.server.edge.client import parse_host_port

        self.servers = [parse_host_port(s) for s in bootstrap.split(",") if s.strip()]
        if not self.servers:
            raise ValueError("kraftwire: option bootstrap.servers is empty")
        self.topic = topic
        self.timeout = timeout

    def _call(self, coro_fn):
        return asyncio.run(coro_fn())

    async def _request(self, host, port, body, version):
        from kraftwire.server.edge.client import request_once

        return await request_once(host, port, body, version, timeout=self.timeout, client_id="kraftwire-spark")

    def leader(self) -> tuple[str, tuple[str, int], int]:
        """(topic, leader address, leader id) from the first server that answers Metadata."""
        from kraftwire.protocol import messages as w

        last = None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for host, port in self.servers:
                try:
                    md = self._call(lambda: self._request(host, port, w.MetadataRequest(topics=None), _METADATA_VERSION))
                except (OSError, asyncio.TimeoutError, Exception) as exc:  # noqa: BLE001 (try the next server)
                    last = exc
                    continue
                topics = [t for t in md.topics if t.error_code == 0 and (self.topic is None or t.name == self.topic)]
                if not topics:
                    last = RuntimeError(f"topic {self.topic or '(any)'} not in metadata from {host}:{port}")
                    continue
                t = topics[0]
                leader_id = t.partitions[0].leader_id if t.partitions else -1
                brokers = {b.node_id: (b.host, b.port) for b in md.brokers}
                if leader_id in brokers:
                    return t.name, brokers[leader_id], leader_id
                last = RuntimeError("no leader yet")
            time.sleep(0.2)
        raise RuntimeError(f"kraftwire: no leader found through {self.servers}: {last}")

    def fetch(self, offset: int, max_bytes: int, max_wait_ms: int = 0):
        """(records bytes, high watermark, log start, serving node id) for a fetch at ``offset`` from the leader."""
        from kraftwire.protocol import messages as w

        deadline = time.monotonic() + self.timeout
        while True:
            topic, (host, port), node = self.leader()
            req = w.FetchRequest(
                replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1 if max_wait_ms else 0, max_bytes=max_bytes,
                isolation_level=1,
                topics=[w.FetchRequest.FetchTopic(topic=topic, partitions=[
                    w.FetchRequest.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=max_bytes)])])
            try:
                resp = self._call(lambda: self._request(host, port, req, _FETCH_VERSION))
            except Exception as exc:  # noqa: BLE001 (leader moved or went away: ask again)
                if time.monotonic() > deadline:
                    raise RuntimeError(f"kraftwire: fetch at offset {offset} failed: {exc}") from exc
                time.sleep(0.2)
                continue
            pd = resp.responses[0].partitions[0]
            if pd.error_code in _NOT_LEADER and time.monotonic() < deadline:
                time.sleep(0.2)
                continue
            if pd.error_code:
                raise RuntimeError(f"kraftwire: fetch at offset {offset} from {host}:{port}: error {pd.error_code}")
            return bytes(pd.records or b""), pd.high_watermark, pd.log_start_offset, node

    def high_watermark(self) -> tuple[int, int]:
        """(high watermark, log start) as the leader reports them."""
        _, hw, start, _ = self.fetch(0, 1)
        return hw, start


class OffsetRangePartition(InputPartition):
    def __init__(self, start: int, end: int) -> None:
        super().__init__((start, end))
        self.start = start
        self.end = end


def _int_opt(options, key, default):
    v = options.get(key)
    return default if v is None or str(v).strip() == "" else int(v)


class KraftwireStreamReader(DataSourceStreamReader):
    def __init__(self, options: dict) -> None:
        opts = {k.lower(): v for k, v in options.items()}
        self.bootstrap = opts.get("bootstrap.servers")
        if not self.bootstrap:
            raise ValueError("kraftwire: streaming reads need option bootstrap.servers (HOST:PORT[,HOST:PORT])")
        self.topic = opts.get("topic")
        self.starting = str(opts.get("startingoffsets", "earliest")).strip().lower()
        self.max_per_trigger = _int_opt(opts, "maxoffsetspertrigger", None)
        self.max_per_partition = _int_opt(opts, "maxoffsetsperpartition", 100_000)
        self.fetch_bytes = _int_opt(opts, "fetch.max.bytes", 8 << 20)
        self.timeout = _int_opt(opts, "timeoutms", 30_000) / 1000.0
        include_control = str(opts.get("includecontrol", "true")).lower() == "true"
        self.is_control = None if include_control else False

    def _client(self) -> QuorumClient:
        return QuorumClient(self.bootstrap, self.topic, self.timeout)

    def initialOffset(self) -> dict:
        if self.starting not in ("earliest", "latest"):
            return {"offset": int(self.starting)}
        hw, start = self._client().high_watermark()
        return {"offset": start if self.starting == "earliest" else hw}

    def latestOffset(self, start: dict | None = None, limit=None) -> dict:
        hw, _ = self._client().high_watermark()
        if self.max_per_trigger and start is not None:
            hw = min(hw, start["offset"] + self.max_per_trigger)
        return {"offset": hw}

    def partitions(self, start: dict, end: dict):
        lo, hi = start["offset"], end["offset"]
        step = max(1, self.max_per_partition)
        return [OffsetRangePartition(a, min(a + step, hi)) for a in range(lo, hi, step)]

    def read(self, partition: OffsetRangePartition) -> Iterator:
        from kraftwire.records import decode_raw_columns, whole_batches_size
        from kraftwire.spark.files import Bounds, LogFile
        from kraftwire.spark.scan import RowFilter, _filter, _to_batch

        rf = RowFilter(bounds=Bounds(offset_lo=partition.start, offset_hi=partition.end - 1), is_control=self.is_control)
        client = self._client()
        offset = partition.start
        deadline = time.monotonic() + self.timeout
        while offset < partition.end:
            data, hw, _start, node = client.fetch(offset, self.fetch_bytes)
            whole = whole_batches_size(data)
            if whole == 0:
                # Planned offsets were below the HW, so they are committed; a new leader may briefly report a
                # lower HW until it commits in its epoch. Wait for it, within the timeout.
                if time.monotonic() > deadline:
                    raise RuntimeError(f"kraftwire: no records at offset {offset} within {self.timeout} s "
                                       f"(high watermark {hw}); was the log start moved past a planned micro-batch?")
                time.sleep(0.1)
                continue
            deadline = time.monotonic() + self.timeout
            raw = decode_raw_columns(memoryview(data)[:whole], True)
            src = LogFile(path="", kind="fetch", size=0, node=node, high_watermark=hw)
            batch = _to_batch(raw, src, with_path=False)
            offsets = batch.column("offset")
            offset = offsets[batch.num_rows - 1].as_py() + 1
            out = _filter(batch, rf)
            if out.num_rows:
                yield out

    def commit(self, end: dict) -> None:
        pass
