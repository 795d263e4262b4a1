"""Per-link TCP proxies between brokers, to partition one broker from its peers while both keep their controller
links. Each broker replicates over its own inter-broker listener name (broker 5 over ``R5``), and every broker
advertises its ``R5`` endpoint at the proxy of the link 5 -> it; so the fetches of broker 5 to broker 4 go through
``links[(5, 4)]`` alone, and cutting it cuts exactly that direction."""

from __future__ import annotations

import socket
import threading


class LinkProxy:
    """Forwards every connection to ``target_port``; ``cut()`` closes them and refuses new ones until ``heal()``."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(32)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.open: list[socket.socket] = []
        self.is_cut = False
        self.closed = False
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        with self.lock:
            self.is_cut = True
            doomed, self.open = self.open, []
        for s in doomed:
            _close(s)

    def heal(self) -> None:
        with self.lock:
            self.is_cut = False

    def close(self) -> None:
        self.closed = True
        self.cut()
        _close(self.listener)

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                refused = self.is_cut
            if refused:
                _close(client)
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
                server.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self.lock:
                self.open += [client, server]
                self.connections += 1
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(1 << 16)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    _close(src)
    _close(dst)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass


def per_link_brokers(broker_ids, links: dict):
    """``(extra_listeners, extra_props, node_props)`` for ``RolesCluster``: listeners ``R<id>`` on every broker, each
    broker replicating over its own, advertised through ``links[(fetcher, leader)]`` (filled in as the cluster binds
    its sockets)."""
    names = tuple(f"R{b}" for b in broker_ids)
    extra_props = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT,"
                   + ",".join(f"{n}:PLAINTEXT" for n in names) + "\n")

    def node_props(node_id: int, socks: dict) -> str:
        if node_id not in broker_ids:
            return ""
        advertised = [f"BROKER://localhost:{socks['BROKER'].getsockname()[1]}"]
        for fetcher in broker_ids:
            port = socks[f"R{fetcher}"].getsockname()[1]
            if fetcher != node_id:
                proxy = links[(fetcher, node_id)] = LinkProxy(port)
                port = proxy.port
            advertised.append(f"R{fetcher}://localhost:{port}")
        return f"advertised.listeners={','.join(advertised)}\ninter.broker.listener.name=R{node_id}\n"

    return names, extra_props, node_props
