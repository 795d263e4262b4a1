"""Sends a stream of fuzz cases to one listener of a running node and checks, after every case:

* the request was answered or its connection closed within ``ANSWER_TIMEOUT_S`` (silence is a hang; only a Produce
  may go unanswered, for acks=0), answers come in order with the request's correlation id and decode;
* the node answers a probe: an ApiVersions sent right behind the case on the same connection, or on a new one when
  the node closed it;
* no answer carries UNKNOWN_SERVER_ERROR (-1) in any error code, unless Kafka answers that request so too
  (``kafka_rules.kafka_fails_too``);
* no node process logged a ``Traceback`` (what a node logs for an unhandled exception) or exited;
* a request Kafka refuses whatever else it says (``kafka_rules``) is refused;
* with the authorizer on: the APIs that need an operation on the cluster are refused as Kafka refuses a principal
  without ACLs (CLUSTER_AUTHORIZATION_FAILED; a replica's Fetch on a broker, TOPIC_AUTHORIZATION_FAILED per
  partition); before a SASL login, nothing but ApiVersions and SaslHandshake is answered;
* a request that changes metadata and was refused everywhere (every error code non-zero, or the connection closed)
  changed nothing: topics, partitions, configs, ACLs, SCRAM users and features read from the controller
  before and after are equal. When the fuzzed principal may change nothing at all (``Target.frozen``), every
  reading must equal the first.

A failure names the case (seed, stream, index, API, version, what was hostile) and the command that replays it.
"""

from __future__ import annotations

import os
import struct
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from fuzz.client import RawConnection, Silent, api_versions_frame
from fuzz.generator import Case, Pools, cases
from fuzz.kafka_rules import broken_rule, kafka_fails_too
from kraftwire.errors import KraftwireError
from kraftwire.metadata.controller.acls import request_error
from kraftwire.protocol import framing
from kraftwire.protocol import messages as w
from kraftwire.protocol.messages import APIS, Base

ANSWER_TIMEOUT_S = 20.0
MAX_FAILURES = 20
UNKNOWN_SERVER_ERROR, TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = -1, 29, 31
PROBE_ID = 0x5EED
PRODUCE = w.api("Produce").key

#: the APIs that change the metadata a controller keeps (what ``state`` reads)
MUTATING = frozenset({
    "CreateTopics", "DeleteTopics", "CreatePartitions", "AlterConfigs", "IncrementalAlterConfigs", "CreateAcls",
    "DeleteAcls", "AlterUserScramCredentials", "UpdateFeatures", "BrokerRegistration", "BrokerHeartbeat",
    "UnregisterBroker", "AlterPartition", "AlterPartitionReassignments", "ElectLeaders", "AllocateProducerIds",
    "AssignReplicasToDirs", "ControlledShutdown", "AlterClientQuotas", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch",
    "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter", "ControllerRegistration", "Envelope"})
#: Kafka's APIs that need an operation on the cluster (KafkaApis / ControllerApis authorize it before anything
#: else): a principal without ACLs gets CLUSTER_AUTHORIZATION_FAILED from every one, and so does every Fetch on a
#: controller listener (the quorum's) and an AddPartitionsToTxn v4+ (a broker's verification). See
#: ``Runner.expected_refusal`` for a replica's Fetch on a broker.
CLUSTER_APIS = frozenset({
    "Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "FetchSnapshot", "BrokerRegistration", "BrokerHeartbeat",
    "AlterPartition", "AllocateProducerIds", "AssignReplicasToDirs", "UnregisterBroker", "UpdateFeatures",
    "ElectLeaders", "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter", "ControlledShutdown", "ControllerRegistration",
    "DescribeQuorum", "CreateAcls", "DeleteAcls", "DescribeAcls", "AlterUserScramCredentials",
    "DescribeUserScramCredentials", "WriteTxnMarkers", "AlterPartitionReassignments", "ListPartitionReassignments",
    "AlterClientQuotas", "DescribeClientQuotas", "DescribeLogDirs"})
#: APIs whose requests Kafka's parser refuses for some decoded values (an ACL request naming an UNKNOWN element),
#: closing the connection as for an undecodable one (kraftwire.server.edge.dispatcher)
PARSE_CHECKED = frozenset({"CreateAcls", "DeleteAcls", "DescribeAcls"})
#: what a SASL listener answers before a login (anything else closes the connection, as Kafka's authenticator does)
BEFORE_LOGIN = frozenset({"ApiVersions", "SaslHandshake"})


@dataclass
class Stream:
    """One listener fuzzed as one principal. ``name`` appears in seeds and replays; ``login`` (user, password)
    logs in with SASL/PLAIN; ``controller``: a controller listener; ``before_login``: a SASL listener fuzzed on fresh
    connections that never log in."""

    name: str
    port: int
    login: tuple[str, str] | None = None
    controller: bool = False
    before_login: bool = False
    #: every API and version is sent well-formed first (see ``generator.cases``): with ACLs on, so that each
    #: refusal is checked at least once
    plausible_first: bool = False


@dataclass
class Target:
    """A running node configuration: its processes (``NodeProc``s: ``stderr_path``, ``running``), where the
    metadata is read (a controller listener, as a super user), what the fuzzer may use (``pools``), and the rules
    that apply (``authorizer``: ACL checks on; ``frozen``: the fuzzed principal can change no metadata). A run keeps
    its set-up topics (``restore``), so that later cases still reach what lies behind a topic lookup."""

    name: str
    procs: list
    state_port: int
    state_login: tuple[str, str] | None
    pools: Pools
    authorizer: bool = False
    frozen: bool = False
    #: creates again the set-up topics a fuzzed DeleteTopics removed, and refreshes ``pools`` (None: nothing to do)
    restore: Callable[[], None] | None = None


@dataclass
class Failure:
    case: Case
    problem: str
    replay: str

    def render(self) -> str:
        return f"{self.problem}\n  {self.case.describe()}\n  replay: {self.replay}"


@dataclass
class Report:
    target: str
    stream: str
    seed: int
    sent: int = 0
    outcomes: Counter = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    state_checks: int = 0
    #: API name -> how many of its answers were checked to refuse as Kafka refuses a principal without ACLs
    refusals_checked: Counter = field(default_factory=Counter)
    aborted: str = ""
    elapsed_s: float = 0.0

    def summary(self) -> str:
        return (f"{self.target}/{self.stream} seed {self.seed}: {self.sent} cases in {self.elapsed_s:.1f} s, "
                f"{dict(sorted(self.outcomes.items()))}, {self.state_checks} state checks, "
                f"{len(self.failures)} failures"
                + (f", {sum(self.refusals_checked.values())} refusals of {len(self.refusals_checked)} cluster APIs "
                   "checked" if self.refusals_checked else "")
                + (f"; ABORTED: {self.aborted}" if self.aborted else ""))

    def render(self) -> str:
        return "\n\n".join([self.summary()] + [f.render() for f in self.failures])


class LogWatch:
    """The text the node processes append to their logs, as it comes."""

    def __init__(self, procs) -> None:
        self.procs = procs
        self.positions = {p.stderr_path: os.path.getsize(p.stderr_path) for p in procs}

    def new_text(self) -> str:
        out = []
        for path, pos in self.positions.items():
            with open(path, "rb") as f:
                f.seek(pos)
                data = f.read()
            self.positions[path] = pos + len(data)
            out.append(data.decode("utf-8", "replace"))
        return "".join(out)


def error_codes(obj, version: int, path: str = "") -> list[tuple[str, int]]:
    """Every ``*error_code`` field of a decoded answer that its version has, with its path."""
    found = []
    if isinstance(obj, Base):
        for f in obj._info.fields:
            if not f.present(version):
                continue
            value = getattr(obj, f.attr)
            where = f"{path}.{f.attr}" if path else f.attr
            if f.attr.endswith("error_code") and isinstance(value, int):
                found.append((where, value))
            elif f.struct is not None:
                for i, item in enumerate(value if isinstance(value, list) else [value]):
                    found += error_codes(item, version, f"{where}[{i}]" if isinstance(value, list) else where)
    return found


@dataclass
class Exchange:
    """What came back for one case."""

    answer: bytes | None = None  # the case's answer frame
    closed: bool = False  # the node closed the connection
    probe_answered: bool = False
    problem: str = ""


class Runner:
    def __init__(self, target: Target, stream: Stream, seed: int, advertised: dict[int, tuple[int, int]],
                 test_id: str) -> None:
        """``test_id``: the pytest node id that runs this stream (for the replay command)."""
        self.target, self.stream, self.seed, self.advertised, self.test_id = target, stream, seed, advertised, test_id
        self.logs = LogWatch(target.procs)
        self.conn: RawConnection | None = None
        self.state_conn: RawConnection | None = None
        self.first_state = None
        self.state = None  # the last reading, None when something may have changed since
        self.report = Report(target.name, stream.name, seed)

    def replay(self, case: Case | None = None) -> str:
        cmd = f"PYTHONPATH=. python -m pytest '{self.test_id}' --fuzz-seed {self.seed}"
        return cmd + (f" --fuzz-case {case.index}" if case is not None else "")

    # ---------------------------------------------------------------------------------------------- the run
    def run(self, count: int, only: int | None = None) -> Report:
        """Cases 0 .. ``count`` - 1 of the stream, or case ``only`` alone (a replay)."""
        start = time.monotonic()
        self.first_state = self.state = self.read_state()
        self.logs.new_text()  # what the set-up logged is not the fuzzer's doing
        try:
            for case in cases(self.seed, self.stream.name, self.advertised, self.target.pools,
                              count if only is None else only + 1, start=0 if only is None else only,
                              plausible_first=self.stream.plausible_first):
                self.one(case, self.decoded(case))
                if self.report.aborted or len(self.report.failures) >= MAX_FAILURES:
                    break
            if self.target.frozen and not self.report.aborted:
                self.check_state(None)
        finally:
            for conn in (self.conn, self.state_conn):
                if conn is not None:
                    conn.close()
            self.report.elapsed_s = time.monotonic() - start
        return self.report

    def fail(self, case: Case, problem: str) -> None:
        self.report.failures.append(Failure(case, problem, self.replay(case)))

    def one(self, case: Case, request) -> None:
        """Send one case (``request``: as the node decodes it, None if it cannot) and check what follows."""
        api = APIS.get(case.api_key)
        mutating = api is not None and api.name in MUTATING
        if mutating and self.state is None:
            self.state = self.read_state()  # what it was before
        self.report.sent += 1
        ex = self.exchange(case)
        self.report.outcomes["answered" if ex.answer is not None else "closed" if ex.closed else "unanswered"] += 1
        if ex.problem:
            self.fail(case, ex.problem)
        answer = self.check_answer(case, request, ex)
        if not ex.probe_answered and not self.probe():
            self.fail(case, f"the node answers no ApiVersions on a new connection within {ANSWER_TIMEOUT_S} s")
            self.report.aborted = "the node stopped answering"
        text = self.logs.new_text()
        if "Traceback" in text:
            at = text.index("Traceback")
            self.fail(case, "a node logged a traceback (maybe for an earlier case, if it came late):\n"
                      + text[max(0, at - 300):at + 3000])
        dead = [p.node_id for p in self.target.procs if not p.running]
        if dead:
            self.fail(case, f"node(s) {dead} exited")
            self.report.aborted = "a node exited"
            return
        refused = ex.answer is None or (answer is not None and _refused(answer, case.sent_key_version[1]))
        if self.target.frozen:
            if mutating:
                self.check_state(case)
        elif mutating and refused:
            self.check_state(case)
        elif not refused:
            self.state = None  # it may have changed something: read it again before the next refusal
            if api.name == "DeleteTopics" and self.target.restore is not None:
                self.target.restore()

    # ------------------------------------------------------------------------------------------- the wire
    def connection(self) -> RawConnection:
        """The connection the next case goes on: a new one (logged in, for a SASL stream) once the node closed the
        last; a new one for every case of a stream that never logs in."""
        if self.conn is None or self.conn.closed or self.stream.before_login and self.conn.used:
            if self.conn is not None:
                self.conn.close()
            self.conn = RawConnection(self.stream.port, ANSWER_TIMEOUT_S,
                                      None if self.stream.before_login else self.stream.login)
        return self.conn

    def exchange(self, case: Case) -> Exchange:
        """Send the case (and, when its frame is whole, the probe right behind it) and read what comes back."""
        conn = self.connection()
        conn.used = True
        ex = Exchange()
        probe_id = PROBE_ID if case.correlation_id != PROBE_ID else PROBE_ID + 1
        whole = not (case.incomplete or case.trailing_garbage)
        if not conn.send(case.frame + (api_versions_frame(probe_id) if whole else b"")):
            ex.closed = True
            return ex
        # silence is no hang when the node cannot answer (the frame never completes) or may not (a Produce, for
        # acks=0, with garbage behind it that the node waits to complete): then a short look is enough
        silence_ok = case.incomplete or case.trailing_garbage and _says_produce(case)
        deadline = time.monotonic() + (0.2 if silence_ok else ANSWER_TIMEOUT_S)
        try:
            while True:
                frame = conn.read_frame(deadline)
                if frame is None:
                    ex.closed = True
                    break
                cid = struct.unpack_from(">i", frame, 0)[0] if len(frame) >= 4 else None
                if whole and cid == probe_id and ex.answer is None and cid != case.correlation_id:
                    ex.probe_answered = True
                    if not _says_produce(case):  # (only a Produce may go unanswered: acks=0)
                        ex.problem = "the request went unanswered: the probe behind it was answered first"
                    break
                if whole and cid == probe_id and ex.answer is not None:
                    ex.probe_answered = True
                    break
                if ex.answer is not None or cid != case.correlation_id:
                    ex.problem = f"an answer with correlation id {cid}; the request's is {case.correlation_id}"
                    break
                if case.incomplete:
                    ex.problem = "an answer to a frame whose size prefix promised more bytes than came"
                    break
                ex.answer = frame
                if not whole:
                    break
        except Silent:
            if not silence_ok:
                ex.problem = (f"no answer and the connection still open after {ANSWER_TIMEOUT_S} s"
                              + (" (the request was answered, the probe behind it was not)" if ex.answer else ""))
        if not whole or ex.problem:
            conn.close()
        return ex

    def probe(self) -> bool:
        """Whether the node answers an ApiVersions on a new connection (kept for the next case)."""
        try:
            self.connection().request(w.ApiVersionsRequest(client_software_name="fuzz-probe",
                                                            client_software_version="1"), 3)
            return True
        except (OSError, ConnectionError, AssertionError, Silent):
            if self.conn is not None:
                self.conn.close()
            return False

    # ----------------------------------------------------------------------------------------- the checks
    def check_answer(self, case: Case, request, ex: Exchange):
        """The decoded answer (None if there is none or it does not decode), after the per-answer checks."""
        key_version = case.sent_key_version
        if ex.answer is None:
            # (garbage behind the frame may close the connection before the frame is answered, in Kafka too)
            if ex.closed and request is not None and not case.trailing_garbage and \
                    self.expected_refusal(request) is not None:
                self.fail(case, "closed the connection instead of refusing the request with an answer")
            return None
        key, version = key_version
        if key not in APIS:
            self.fail(case, f"answered a request for the unknown api key {key}")
            return None
        try:
            _, answer = framing.decode_response(ex.answer, key, version)
        except KraftwireError as exc:
            self.fail(case, f"the answer does not decode as {APIS[key].name} v{version}: {exc}; "
                      f"answer: {ex.answer[:64].hex()}")
            return None
        codes = error_codes(answer, version)
        unknown = [path for path, code in codes if code == UNKNOWN_SERVER_ERROR]
        if unknown and not kafka_fails_too(request):
            self.fail(case, f"UNKNOWN_SERVER_ERROR at {unknown} in the answer {_short_answer(answer)}")
        if self.stream.before_login and APIS[key].name not in BEFORE_LOGIN:
            self.fail(case, f"answered {APIS[key].name} before any login: {_short_answer(answer)}")
        broken = broken_rule(request, answer) if request is not None else ""
        if broken:
            self.fail(case, f"Kafka refuses this {request.api.name}: {broken}")
        expected = self.expected_refusal(request) if request is not None else None
        if expected is not None:
            self.report.refusals_checked[request.api.name] += 1
            wrong = [(path, code) for path, code in codes if code != expected[path != "error_code"]]
            if wrong:
                self.fail(case, f"{request.api.name} from a principal without ACLs must be refused with "
                          f"{expected[0]} at the top and {expected[1]} everywhere else, as Kafka refuses it; got "
                          f"{wrong} in {_short_answer(answer)}")
        return answer

    def decoded(self, case: Case):
        """The request as the node decodes it (the frame its size prefix delimits), or None when it cannot — a
        version the listener does not serve included; then the node closes the connection or answers an error."""
        if case.incomplete:
            return None
        size = struct.unpack_from(">i", case.frame, 0)[0]
        try:
            request = framing.decode_request(case.frame[4:4 + size])
        except KraftwireError:
            return None
        lo, hi = self.advertised.get(request.api.key, (0, -1))
        return request if lo <= request.version <= hi else None

    def expected_refusal(self, request) -> tuple[int, int] | None:
        """How Kafka refuses ``request`` from a principal without ACLs: (the top-level error code, every other error
        code) — or None when it needs no operation on the cluster."""
        if not self.target.authorizer or self.stream.before_login:
            return None
        name = request.api.name
        if name in PARSE_CHECKED and request_error(name, request.body, request.version) is not None:
            return None  # Kafka's request parser refuses it (the connection closes) before anything is authorized
        if name == "Fetch" and not self.stream.controller:  # KafkaApis: a follower, partition by partition
            return (0, TOPIC_AUTHORIZATION_FAILED) if _fetch_replica(request) >= 0 else None
        if name == "AddPartitionsToTxn" and request.version < 4:
            return None
        if name in CLUSTER_APIS or name in ("Fetch", "AddPartitionsToTxn"):
            return CLUSTER_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED
        return None

    def read_state(self):
        """What a controller holds that a refused request must leave alone (read as a super user)."""
        for attempt in range(2):
            try:
                if self.state_conn is None or self.state_conn.closed:
                    self.state_conn = RawConnection(self.target.state_port, ANSWER_TIMEOUT_S, self.target.state_login)
                return metadata_state(self.state_conn, self.target.authorizer, self.target.pools.node_ids)
            except (OSError, ConnectionError, Silent):
                if self.state_conn is not None:
                    self.state_conn.close()
                if attempt:
                    raise

    def check_state(self, case: Case | None) -> None:
        before = self.first_state if self.target.frozen else self.state
        now = self.read_state()
        self.report.state_checks += 1
        if before is not None and now != before:
            changed = {k: (before[k], now[k]) for k in now if before.get(k) != now[k]}
            what = ("the fuzzed principal may change nothing, yet the metadata changed" if self.target.frozen
                    else "a refused request changed the metadata")
            problem = f"{what}: {str(changed)[:3000]}"
            if case is None:
                self.report.failures.append(Failure(Case(self.seed, self.stream.name, -1, -1, -1, "end", {}, None,
                                                         b""), problem + " (seen at the end of the run)",
                                                    self.replay()))
            else:
                self.fail(case, problem)
        self.state = now


def metadata_state(conn: RawConnection, acls: bool, broker_ids) -> dict:
    """Topics (name, id, partitions and their replicas), non-default topic configs and those of the brokers
    ``broker_ids`` and of the cluster, ACLs, SCRAM users and finalized features — everything a refused request must
    leave as it was. Left out, because they change later on their own after a request that was *not* refused (open
    to anyone without an authorizer, as in Kafka): which brokers are online (an unregistered broker registers again)
    and the internal topics (a deleted ``__consumer_offsets`` is created again by the next FindCoordinator, which is
    answered COORDINATOR_NOT_AVAILABLE meanwhile)."""
    md = conn.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
    topics = sorted((t.name, str(t.topic_id), tuple(sorted((p.partition_index, tuple(p.replica_nodes))
                                                           for p in t.partitions)))
                    for t in md.topics if not t.is_internal)
    D = w.DescribeConfigsRequest
    resources = [D.DescribeConfigsResource(resource_type=2, resource_name=t[0], configuration_keys=None)
                 for t in topics]
    resources += [D.DescribeConfigsResource(resource_type=4, resource_name=name, configuration_keys=None)
                  for name in ("", *map(str, broker_ids))]
    configs = conn.request(D(resources=resources, include_synonyms=False, include_documentation=False), 4)
    state = {
        "topics": topics,
        "configs": sorted((r.resource_type, r.resource_name, r.error_code,
                           tuple(sorted((c.name, c.value) for c in r.configs if c.config_source != 5)))
                          for r in configs.results),
        "scram": sorted((u.user, tuple((i.mechanism, i.iterations) for i in u.credential_infos))
                        for u in conn.request(w.DescribeUserScramCredentialsRequest(users=None), 0).results),
        "features": sorted((f.name, f.min_version_level, f.max_version_level) for f in conn.request(
            w.ApiVersionsRequest(client_software_name="fuzz", client_software_version="1"), 3).finalized_features),
    }
    if acls:
        answer = conn.request(w.DescribeAclsRequest(resource_type_filter=1, resource_name_filter=None,
                                                    pattern_type_filter=1, principal_filter=None, host_filter=None,
                                                    operation=1, permission_type=1), 3)
        state["acls"] = sorted((r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation,
                                a.permission_type) for r in answer.resources for a in r.acls)
    return state


def _refused(answer, version: int) -> bool:
    codes = error_codes(answer, version)
    return bool(codes) and all(code != 0 for _, code in codes)


def _says_produce(case: Case) -> bool:
    """Whether the frame's header names Produce (the one API a node may leave unanswered: acks=0)."""
    return case.sent_key_version is not None and case.sent_key_version[0] == PRODUCE


def _fetch_replica(request) -> int:
    body = request.body
    return body.replica_state.replica_id if request.version >= 15 else body.replica_id


def _short_answer(answer) -> str:
    text = repr(answer)
    return text if len(text) < 1500 else text[:1500] + " ..."
