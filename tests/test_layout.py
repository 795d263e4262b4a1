"""The layout rules of issue 39, kept true by a walk of the sources (as ``test_layering.py`` does for the layers):

* no import cycle among the ``kraftwire.server`` modules (module-level imports: what runs when a module loads), and
  its role packages import one way (``ROLE_ORDER``: a package imports only those before it);
* no module under ``kraftwire/`` over ``MAX_LINES`` lines, except the files listed in ``LONG_FILES`` with the reason;
* the KRaft node never imports the test server: only ``kraftwire/server/test_server/`` imports
  ``kraftwire.server.test_server`` (the test server plugs itself into the node, not the other way round), and the
  front doors listed in ``TEST_SERVER_IMPORTERS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kraftwire"
SERVER = "kraftwire.server"
TEST_SERVER = "kraftwire.server.test_server"
#: kraftwire.server's role packages, in the one direction they may import: each only those before it (and itself)
ROLE_ORDER = ("edge", "runtime", "apis", "node", "test_server")
#: modules outside test_server/ allowed to import it, each with its reason
TEST_SERVER_IMPORTERS = {
    "kraftwire.tools.test_server": "the `kraftwire test-server` command starts it (a front door, right of server/)",
}
MAX_LINES = 600
#: files allowed over MAX_LINES, each with its reason
LONG_FILES = {
    "protocol/schemas.py": "generated from Kafka's message specs: facts of the protocol, as data",
    # not server/'s (issue 39 splits server/): each is left to the engineer who owns its layer
    "coordinator/group/shard.py": "the group coordinator's shard, another engineer's; its split is planned there",
    "metadata/controller/topics.py": "the controller's topic manager (metadata layer), not server/'s",
    "raft/node.py": "the pure Raft core's RaftNode (raft layer), not server/'s",
    "spark/topics.py": "the Spark data source (spark layer), not server/'s",
    "testing/sim.py": "the Raft simulator (testing layer), not server/'s",
    "tools/consumer_groups.py": "the consumer-groups tool (tools layer), not server/'s",
    "tools/transactions.py": "the transactions tool (tools layer), not server/'s",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(path: Path, name: str, *, module_level: bool) -> set[str]:
    """The kraftwire modules ``path`` (module ``name``) imports; with ``module_level`` only the statements that run
    when it loads (not those inside a function, nor under ``if TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if not module_level:
                    visit(child, False)
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(up + ([base] if base else []))
                found.add(base)
                found.update(f"{base}.{a.name}" for a in child.names)
            visit(child, top)

    visit(tree, True)
    return {f for f in found if f.startswith("kraftwire")}


def test_no_import_cycle_in_server():
    mods = modules()
    server = {n: p for n, p in mods.items() if n == SERVER or n.startswith(SERVER + ".")}
    graph: dict[str, set[str]] = {}
    for name, path in server.items():
        edges = set()
        for target in imported(path, name, module_level=True):
            if target in server and target != name:
                edges.add(target)
            # importing a.b.c loads the packages a.b too
            parts = target.split(".")
            edges.update(".".join(parts[:i]) for i in range(3, len(parts)) if ".".join(parts[:i]) in server)
        graph[name] = edges - {name}
    # a package's __init__ is loaded before its modules: an edge to the package itself is not a cycle through them
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                walk(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node, [])
    assert not cycles, "import cycles in kraftwire.server:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_role_packages_import_one_way():
    wrong = []
    for name, path in modules().items():
        parts = name.split(".")
        if parts[:2] != ["kraftwire", "server"] or len(parts) < 3 or parts[2] not in ROLE_ORDER:
            continue
        allowed = set(ROLE_ORDER[:ROLE_ORDER.index(parts[2]) + 1])
        for target in imported(path, name, module_level=False):
            tparts = target.split(".")
            if tparts[:2] == ["kraftwire", "server"] and len(tparts) > 2 and tparts[2] in ROLE_ORDER \
                    and tparts[2] not in allowed:
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_no_module_over_the_line_limit():
    long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and rel not in LONG_FILES:
            long[rel] = lines
    assert not long, f"modules over {MAX_LINES} lines (split them, or list them in LONG_FILES with why): {long}"


def test_listed_long_files_are_still_long():
    """A listed file that was split (or moved) leaves ``LONG_FILES`` too, so the list only shrinks."""
    stale = [rel for rel in LONG_FILES
             if not (PACKAGE / rel).is_file() or len((PACKAGE / rel).read_text().splitlines()) <= MAX_LINES]
    assert not stale, stale


def test_only_the_test_server_imports_the_test_server():
    offenders = {}
    for name, path in modules().items():
        if name == TEST_SERVER or name.startswith(TEST_SERVER + ".") or name in TEST_SERVER_IMPORTERS:
            continue
        hits = sorted(t for t in imported(path, name, module_level=False)
                      if t == TEST_SERVER or t.startswith(TEST_SERVER + "."))
        if hits:
            offenders[name] = hits
    assert not offenders, f"the KRaft node (and everything outside test_server/) must not import it: {offenders}"


def test_the_walk_sees_imports(tmp_path):
    """The checks above cannot pass by seeing nothing: the walk finds module-level imports, and local ones only when
    asked (a function-local import runs when called, not when the module loads)."""
    mods = modules()
    app = "kraftwire.server.node.app"
    assert "kraftwire.server.edge.dispatcher" in imported(mods[app], app, module_level=True)
    probe = tmp_path / "probe.py"
    probe.write_text("from kraftwire.server.edge import wire\n"
                     "def f():\n    from kraftwire.server.test_server import scan\n")
    top = imported(probe, "kraftwire.probe", module_level=True)
    every = imported(probe, "kraftwire.probe", module_level=False)
    assert "kraftwire.server.edge.wire" in top and "kraftwire.server.test_server.scan" not in top
    assert "kraftwire.server.test_server.scan" in every
