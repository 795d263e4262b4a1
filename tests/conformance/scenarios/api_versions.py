"""ApiVersions: the advertised APIs and version ranges, features, the client software name check (v3+), and whom the
client means to reach (v5, KIP-1242: another cluster's node is told to bootstrap again; a cluster id without a node id
is refused). Both nodes are node 1 of clusters of their own, so a cluster id names neither."""

from __future__ import annotations

from conformance.runner import Step, each_version, versions

from kraftwire.protocol import messages as w

AV = w.ApiVersionsRequest


def _ask(name: str, version: str):
    return lambda v: [Step(AV(client_software_name=name, client_software_version=version), v)]


#: an ApiVersions version neither side knows: both answer UNSUPPORTED_VERSION at v0 with their ranges (KIP-511)
UNKNOWN_VERSION = 99

SCENARIOS = each_version("ApiVersions", {
    "ranges": _ask("kraftwire-conformance", "1.0"),
    # KIP-511: the name and version must be [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?
    "bad-software-name": lambda v: _ask("-bad name!", "1.0")(v) if v >= 3 else None,
    "bad-software-version": lambda v: _ask("client", "1.0 beta")(v) if v >= 3 else None,
    "empty-software-name": lambda v: _ask("", "")(v) if v >= 3 else None,
    "another-cluster": lambda v: [Step(AV(client_software_name="c", client_software_version="1",
                                          cluster_id="Uc70e1ZARn6UM4iJHeByUw", node_id=1), v)] if v >= 5 else None,
    "cluster-without-node": lambda v: [Step(AV(client_software_name="c", client_software_version="1",
                                               cluster_id="Uc70e1ZARn6UM4iJHeByUw", node_id=-1), v)]
    if v >= 5 else None,
    # the header names version 99 over this version's body, as a client newer than the server sends it
    "unknown-version": lambda v: [Step(AV(client_software_name="kraftwire-conformance",
                                          client_software_version="1.0"), v, header_version=UNKNOWN_VERSION)]
    if v == versions("ApiVersions")[-1] else None,
})
