"""The requests of ``kraftwire reassign-partitions`` (``reassign_partitions``): Metadata, the two reassignment APIs,
IncrementalAlterConfigs for the throttles, DescribeLogDirs and AlterReplicaLogDirs for log-directory moves — and the
admin client's error text."""

from __future__ import annotations

from kraftwire.error_codes import REPLICA_NOT_AVAILABLE, default_message, name_of
from kraftwire.tools.admin import until_decided


class Failed(Exception):
    """Any other failure: printed ``Error: <message>``, exit 1."""


def replica_key(replica: tuple[str, int, int]):
    """Kafka's compareTopicPartitionReplicas: broker, then topic, then partition."""
    return replica[2], replica[0], replica[1]


def replica_name(replica: tuple[str, int, int]) -> str:
    return f"{replica[0]}-{replica[1]}-{replica[2]}"  # TopicPartitionReplica.toString


class Client:
    """The tool's requests: Metadata, the two reassignment APIs and a topic's IncrementalAlterConfigs on the
    bootstrap connection; a broker's IncrementalAlterConfigs on a connection to that broker, as Kafka's admin client
    sends it (a broker decides its own configs only)."""

    def __init__(self, conn, timeout: float, tls=None, login=None) -> None:
        self.conn = conn
        self.timeout = timeout
        self.tls, self.login = tls, login

    async def metadata(self, topics: list[str] | None):
        from kraftwire.protocol import messages as w

        MD = w.MetadataRequest
        body = MD(topics=None if topics is None else [MD.MetadataRequestTopic(name=t) for t in topics],
                  allow_auto_topic_creation=False)
        return await self.conn.request(body, 12, timeout=self.timeout)

    async def brokers(self) -> dict[int, str | None]:
        return {b.node_id: b.rack for b in (await self.metadata([])).brokers}

    async def assignments(self, topics) -> dict[tuple[str, int], list[int]]:
        """Every partition of ``topics`` and its replicas; a topic that does not exist fails as Kafka's does."""
        answer = await self.metadata(sorted(set(topics)))
        out = {}
        for t in answer.topics:
            if t.error_code:
                raise Failed(f"org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic {t.name} not "
                             "found." if t.error_code == 3 else f"{t.name}: {name_of(t.error_code)}")
            for p in t.partitions:
                out[(t.name, p.partition_index)] = list(p.replica_nodes)
        return out

    async def reassigning(self) -> dict[tuple[str, int], object]:
        from kraftwire.protocol import messages as w

        answer = await until_decided(self.conn, w.ListPartitionReassignmentsRequest(
            timeout_ms=int(self.timeout * 1000), topics=None), 0, self.timeout, lambda a: [a.error_code])
        if answer.error_code:
            raise Failed(_message(answer.error_code, answer.error_message))
        return {(t.name, p.partition_index): p for t in answer.topics for p in t.partitions}

    async def alter(self, targets: dict[tuple[str, int], list[int] | None], allow_rf_change: bool = True):
        """AlterPartitionReassignments; {partition: message} of those refused."""
        from kraftwire.protocol import messages as w

        AR = w.AlterPartitionReassignmentsRequest
        by_topic: dict[str, list] = {}
        for (t, p), replicas in targets.items():
            by_topic.setdefault(t, []).append(AR.ReassignablePartition(partition_index=p, replicas=replicas))
        body = AR(timeout_ms=int(self.timeout * 1000), allow_replication_factor_change=allow_rf_change,
                  topics=[AR.ReassignableTopic(name=t, partitions=ps) for t, ps in by_topic.items()])
        answer = await until_decided(self.conn, body, 1, self.timeout,
                                     lambda a: [a.error_code] + [p.error_code for t in a.responses
                                                                 for p in t.partitions])
        errors = {}
        for t in answer.responses:
            for p in t.partitions:
                code = p.error_code or answer.error_code
                if code:
                    errors[(t.name, p.partition_index)] = _message(code, p.error_message or answer.error_message)
        return errors

    async def on_each(self, brokers, ask) -> None:
        """``await ask(broker, connection)`` for each of ``brokers`` that is alive, on a connection to it."""
        from kraftwire.server.edge.client import KafkaConnection

        endpoints = {b.node_id: (b.host, b.port) for b in (await self.metadata([])).brokers}
        for broker in brokers:
            if broker not in endpoints:
                continue
            host, port = endpoints[broker]
            conn = await KafkaConnection.open(host, port, timeout=self.timeout, client_id="reassign-partitions-tool",
                                              ssl_context=self.tls, sasl=self.login)
            try:
                await ask(broker, conn)
            finally:
                await conn.close()

    async def delete_broker_configs(self, brokers, keys: tuple[str, ...]) -> None:
        """``keys`` deleted from each of ``brokers`` that is alive, on its own listener."""
        await self.on_each(brokers, lambda broker, conn: self.delete_configs([(4, str(broker), keys)], conn))

    async def replica_dirs(self, assignment: dict[tuple[str, int], list[int]]) -> dict[tuple[str, int, int], str]:
        """(topic, partition, broker) -> the log directory holding that replica, asked of each broker
        (DescribeLogDirs, as Kafka's describeReplicaLogDirs); a replica not found is left out."""
        from kraftwire.protocol import messages as w

        DL = w.DescribeLogDirsRequest
        found: dict[tuple[str, int, int], str] = {}

        async def ask(broker, conn) -> None:
            mine = [(t, p) for (t, p), replicas in assignment.items() if broker in replicas]
            topics: dict[str, list[int]] = {}
            for t, p in mine:
                topics.setdefault(t, []).append(p)
            answer = await conn.request(DL(topics=[DL.DescribableLogDirTopic(topic=t, partitions=ps)
                                                   for t, ps in topics.items()]), 4, timeout=self.timeout)
            for result in answer.results:
                for t in result.topics:
                    for p in t.partitions:
                        if not p.is_future_key:
                            found[(t.name, p.partition_index, broker)] = result.log_dir

        await self.on_each(sorted({b for replicas in assignment.values() for b in replicas}), ask)
        return found

    async def replica_log_dirs(self, replicas) -> dict[tuple[str, int, int], tuple[str | None, str | None]]:
        """(topic, partition, broker) -> (its current log directory, its future one), None where its broker reports
        none; a replica whose broker is not alive is left out (Kafka's describeReplicaLogDirs, from each broker's
        DescribeLogDirs)."""
        from kraftwire.protocol import messages as w

        DL = w.DescribeLogDirsRequest
        found: dict[tuple[str, int, int], list] = {}

        async def ask(broker, conn) -> None:
            topics: dict[str, list[int]] = {}
            for t, p, b in replicas:
                if b == broker:
                    topics.setdefault(t, []).append(p)
                    found[(t, p, b)] = [None, None]
            answer = await conn.request(DL(topics=[DL.DescribableLogDirTopic(topic=t, partitions=ps)
                                                   for t, ps in topics.items()]), 4, timeout=self.timeout)
            for result in answer.results:
                if result.error_code:
                    continue
                for t in result.topics:
                    for p in t.partitions:
                        entry = found.setdefault((t.name, p.partition_index, broker), [None, None])
                        entry[1 if p.is_future_key else 0] = result.log_dir

        await self.on_each(sorted({b for _, _, b in replicas}), ask)
        return {r: tuple(v) for r, v in found.items()}

    async def alter_log_dirs(self, moves: dict[tuple[str, int, int], str]) -> set:
        """AlterReplicaLogDirs to each replica's broker: the replicas whose move started; REPLICA_NOT_AVAILABLE
        (not there yet) is left for the next round, any other error fails as Kafka's tool does."""
        from kraftwire.protocol import messages as w

        A = w.AlterReplicaLogDirsRequest
        started: set = set()

        async def ask(broker, conn) -> None:
            paths: dict[str, dict[str, list[int]]] = {}
            for (t, p, b), path in moves.items():
                if b == broker:
                    paths.setdefault(path, {}).setdefault(t, []).append(p)
            answer = await conn.request(A(dirs=[A.AlterReplicaLogDir(path=path, topics=[
                A.AlterReplicaLogDirTopic(name=t, partitions=ps) for t, ps in topics.items()])
                for path, topics in paths.items()]), 2, timeout=self.timeout)
            for t in answer.results:
                for p in t.partitions:
                    replica = (t.topic_name, p.partition_index, broker)
                    if p.error_code == 0:
                        started.add(replica)
                    elif p.error_code != REPLICA_NOT_AVAILABLE:
                        raise Failed(f"Failed to alter dir for {replica_name(replica)}")

        await self.on_each(sorted({b for _, _, b in moves}), ask)
        return started

    async def delete_configs(self, resources: list[tuple[int, str, tuple[str, ...]]], conn=None) -> None:
        await self.set_configs([(kind, name, dict.fromkeys(keys)) for kind, name, keys in resources], conn)

    async def set_configs(self, resources: list[tuple[int, str, dict[str, str | None]]], conn=None) -> None:
        """IncrementalAlterConfigs: each resource's keys set to their values (None: deleted)."""
        from kraftwire.protocol import messages as w

        IAC = w.IncrementalAlterConfigsRequest
        body = IAC(validate_only=False, resources=[
            IAC.AlterConfigsResource(resource_type=kind, resource_name=name, configs=[
                IAC.AlterableConfig(name=key, config_operation=1 if value is None else 0, value=value)
                for key, value in configs.items()])
            for kind, name, configs in resources])
        answer = await until_decided(conn or self.conn, body, 1, self.timeout,
                                     lambda a: [r.error_code for r in a.responses])
        for r in answer.responses:
            if r.error_code:
                raise Failed(_message(r.error_code, r.error_message))


def _message(code: int, message: str | None) -> str:
    """What Kafka's admin client's exception says: the answer's message, else the code's default text."""
    return message or default_message(code) or name_of(code)
