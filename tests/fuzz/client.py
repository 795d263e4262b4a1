"""A blocking socket that speaks size-prefixed frames and nothing more, so the fuzzer can send any bytes and see
exactly what comes back: an answer, the node closing the connection, or silence until a deadline."""

from __future__ import annotations

import socket
import struct
import time

from kraftwire.protocol import framing
from kraftwire.protocol import messages as w


class Silent(Exception):
    """Nothing came back before the deadline, and the connection stayed open."""


class RawConnection:
    """One TCP connection to ``127.0.0.1:port``; ``login=(user, password)`` authenticates with SASL/PLAIN first."""

    def __init__(self, port: int, timeout_s: float, login: tuple[str, str] | None = None) -> None:
        self.timeout_s = timeout_s
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = bytearray()
        self.closed = False
        self.used = False  # a fuzz case went on it
        self._next_id = 1
        if login is not None:
            self._login(*login)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.sock.close()

    def send(self, data: bytes) -> bool:
        """False when the node had already closed the connection."""
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.close()
            return False

    def read_frame(self, deadline: float) -> bytes | None:
        """The next answer (without its size prefix); None when the node closed the connection; ``Silent`` when
        neither happened by ``deadline`` (``time.monotonic()``)."""
        while True:
            if len(self._buf) >= 4:
                (size,) = struct.unpack_from(">i", self._buf, 0)
                if len(self._buf) >= 4 + size:
                    frame = bytes(self._buf[4:4 + size])
                    del self._buf[:4 + size]
                    return frame
            if self.closed:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise Silent()
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                raise Silent() from None
            except OSError:  # reset by the node
                chunk = b""
            if not chunk:
                self.close()
                if len(self._buf) >= 4 and len(self._buf) >= 4 + struct.unpack_from(">i", self._buf, 0)[0]:
                    continue
                return None
            self._buf += chunk

    def request(self, body, version: int):
        """A well-formed request and its decoded answer (the harness's own traffic: logins, probes, state)."""
        cid = self._next_id
        self._next_id += 1
        if not self.send(b"".join(framing.encode_request(body, version, cid, "fuzz-harness"))):
            raise ConnectionError(f"the node closed the connection before {type(body).__name__}")
        frame = self.read_frame(time.monotonic() + self.timeout_s)
        if frame is None:
            raise ConnectionError(f"the node closed the connection instead of answering {type(body).__name__}")
        got, answer = framing.decode_response(frame, body.API_KEY, version)
        if got != cid:
            raise AssertionError(f"{type(body).__name__}: answer for correlation id {got}, sent {cid}")
        return answer

    def _login(self, user: str, password: str) -> None:
        hs = self.request(w.SaslHandshakeRequest(mechanism="PLAIN"), 1)
        if hs.error_code != 0:
            raise AssertionError(f"SaslHandshake refused: {hs}")
        auth = self.request(w.SaslAuthenticateRequest(auth_bytes=b"\0%s\0%s" % (user.encode(), password.encode())), 2)
        if auth.error_code != 0:
            raise AssertionError(f"SASL/PLAIN login of {user} refused: {auth}")


def api_versions_frame(correlation_id: int) -> bytes:
    """An ApiVersions v3 request: the probe sent behind every fuzzed request."""
    return b"".join(framing.encode_request(w.ApiVersionsRequest(client_software_name="fuzz-probe",
                                                                client_software_version="1"), 3,
                                           correlation_id, "fuzz-probe"))


def advertised(port: int, timeout_s: float, login=None) -> dict[int, tuple[int, int]]:
    """What the listener on ``port`` advertises: api key -> (min, max) version."""
    conn = RawConnection(port, timeout_s, login)
    try:
        answer = conn.request(w.ApiVersionsRequest(client_software_name="fuzz", client_software_version="1"), 3)
    finally:
        conn.close()
    return {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
