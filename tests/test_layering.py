"""The import rules of ARCHITECTURE.md, enforced by walking every import statement in the package.

Imports point one way: leaf modules -> protocol -> records -> log -> raft -> server/testing -> tools/spark -> cli.
The pure parts (protocol/, raft/, the pure log pieces) never touch I/O, the clock or module-level randomness.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kraftwire

PACKAGE = Path(kraftwire.__file__).resolve().parent

# Layer index of each top-level part of the package: a module may import its own layer and those to its left.
LAYERS: dict[str, int] = {
    "__init__": 0,
    "errors": 0,
    "error_codes": 0,
    "ids": 0,
    "config": 0,
    "properties": 0,
    "kafka_configs": 0,
    "java_order": 0,
    "re2j": 0,
    "protocol": 1,
    "security": 1,
    "records": 2,
    "log": 3,
    "snapshot": 3,
    "raft": 4,
    "metadata": 4,
    "replica": 4,
    "coordinator": 4,
    "testing": 5,
    "server": 5,
    "tools": 6,
    "spark": 6,
    "cli": 7,
    "__main__": 8,
}

FORBIDDEN_IN_PURE = {"asyncio", "socket", "time", "threading", "os", "random", "selectors", "subprocess"}


def _pure(rel: Path) -> bool:
    parts = rel.parts
    if parts[0] in ("protocol", "raft", "metadata", "replica", "coordinator"):
        return True
    return parts[0] == "log" and rel.stem in {"api", "base", "memory", "epoch_cache"}


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py"))


def _part_of(module: str) -> str | None:
    """'kraftwire.log.segment' -> 'log'; anything outside kraftwire -> None."""
    names = module.split(".")
    if names[0] != "kraftwire":
        return None
    # ``from kraftwire import __version__`` names an attribute of the package itself, not a part.
    return names[1] if len(names) > 1 and names[1] in LAYERS else "__init__"


def _imports(tree: ast.AST, rel: Path):
    """Yield (lineno, absolute module name) for every import, resolving relative imports."""
    package = ["kraftwire", *rel.parent.parts]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield node.lineno, mod
            if mod in ("kraftwire",) or (node.level and not node.module):
                for alias in node.names:
                    yield node.lineno, f"{mod}.{alias.name}"


def test_the_package_has_modules_to_check():
    assert len(_modules()) > 5


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path: Path):
    rel = path.relative_to(PACKAGE)
    own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
    assert own in LAYERS, f"{rel}: new top-level part {own!r}; give it a layer in tests/test_layering.py"
    tree = ast.parse(path.read_text(), str(path))
    bad = []
    for lineno, mod in _imports(tree, rel):
        part = _part_of(mod)
        if part is None or part == own:
            continue
        assert part in LAYERS, f"{rel}:{lineno} imports unknown part {mod}"
        if LAYERS[part] > LAYERS[own]:
            bad.append(f"{rel}:{lineno} imports {mod} (layer {part} is right of {own})")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "path", [p for p in _modules() if _pure(p.relative_to(PACKAGE))], ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_pure_modules_do_no_io(path: Path):
    rel = path.relative_to(PACKAGE)
    tree = ast.parse(path.read_text(), str(path))
    bad = []
    for lineno, mod in _imports(tree, rel):
        if mod.split(".")[0] in FORBIDDEN_IN_PURE:
            bad.append(f"{rel}:{lineno} imports {mod}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
            bad.append(f"{rel}:{node.lineno} calls open()")
    assert not bad, "\n".join(bad)


def test_the_checker_catches_a_violation(tmp_path):
    """The rule above must be able to fail: feed it a module that breaks both rules."""
    rel = Path("raft/bad.py")
    tree = ast.parse("import time\nfrom kraftwire.server import app\nopen('x')\n")
    mods = [m for _, m in _imports(tree, rel)]
    assert "time" in mods and "kraftwire.server" in mods
    assert LAYERS[_part_of("kraftwire.server")] > LAYERS["raft"]
