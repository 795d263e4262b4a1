"""The README's cluster tour and recipes, run as written: the blocks marked ``<!-- recipe: NAME -->`` in order, bash
blocks with bash and python blocks with a given interpreter, all in one working directory holding a copy of the
clone's ``config/``, with a given ``bin`` directory first on the path (a fresh venv's). Run as a script inside
network and mount namespaces of its own (``unshare -n -m``): the fixed ports the recipes name are free whatever else
runs on the machine, and the tour's ``/tmp/kraft-combined-logs`` (``config/server.properties``) is a directory of the
working directory bound over that path, so nothing of the machine's is read or written there:

    unshare -n -m python readme_tour.py README.md WORKDIR VENV_BIN OUT.json [PYTHON]

Between blocks it does what a reader does: after a block that starts nodes it waits until they serve (every broker
listed by Metadata, through the recipe's own client properties where it has them); before the next cluster it stops
the previous one (SIGTERM to each start block's process group, SIGKILL after a bound). Each block's exit code, standard
output and standard error go into OUT.json, keyed by the recipe's name; a python block is skipped without PYTHON.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

BLOCK = re.compile(r"<!-- recipe: (?P<name>[\w-]+) -->\n```(?P<lang>\w+)\n(?P<body>.*?)\n```", re.S)
#: after these blocks: the broker ids to wait for, where, and the client properties file to reach them with
WAIT = {"tour-start": ("localhost:9092", [1], None),
        "combined-start": ("localhost:9092", [1, 2, 3], None),
        "separate-start": ("localhost:9201", [4, 5, 6], None),
        "secure-clients": ("localhost:9392", [1], "admin.properties"),
        "kafka-start": ("localhost:9401", [1], None),
        "join-broker-start": ("localhost:9401", [1, 2], None)}
#: the blocks after which the running cluster is stopped (every start block's nodes since the last stop)
STOP_AFTER = {"tour-use", "combined-use", "separate-use", "spark", "join-use"}
#: the tour's log directory (config/server.properties), which must exist as a mount point before the run
TOUR_LOGS = "/tmp/kraft-combined-logs"
READY_S = 90.0
BLOCK_S = 240.0
STOP_S = 30.0


def recipes(readme: str) -> list[tuple[str, str, str]]:
    """(name, language, body) of every recipe block, in README order."""
    with open(readme, encoding="utf-8") as f:
        return [(m["name"], m["lang"], m["body"]) for m in BLOCK.finditer(f.read())]


def brokers_listed(bootstrap: str, command_config: str | None) -> list[int] | None:
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import parse_host_port, request_once
    from kraftwire.tools.command_config import client_security

    host, port = parse_host_port(bootstrap)
    tls, login = client_security(command_config)
    try:
        answer = asyncio.run(request_once(host, port, w.MetadataRequest(topics=[], allow_auto_topic_creation=False),
                                          12, timeout=3.0, ssl_context=tls, sasl=login))
    except Exception:  # noqa: BLE001 - starting: refused, closed, login not yet possible
        return None
    return sorted(b.node_id for b in answer.brokers)


def wait_ready(bootstrap: str, want: list[int], command_config: str | None) -> bool:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if brokers_listed(bootstrap, command_config) == want:
            return True
        time.sleep(0.3)
    return False


def stop(group: int | None) -> bool:
    """SIGTERM to a start block's process group (its nodes), SIGKILL after ``STOP_S``; whether they ended in time."""
    if group is None:
        return True
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + STOP_S
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    os.killpg(group, signal.SIGKILL)
    return False


def private_tour_logs(workdir: str) -> None:
    """Bind ``<workdir>/kraft-combined-logs`` over ``TOUR_LOGS``, only inside a mount namespace of our own."""
    if os.readlink("/proc/self/ns/mnt") == os.readlink(f"/proc/{os.getppid()}/ns/mnt"):
        raise SystemExit("readme_tour: run me under unshare -m (I bind a directory over /tmp/kraft-combined-logs)")
    private = os.path.join(workdir, "kraft-combined-logs")
    os.makedirs(private)
    subprocess.run(["mount", "--bind", private, TOUR_LOGS], check=True)


def main(readme: str, workdir: str, venv_bin: str, out: str, python: str | None = None) -> int:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    private_tour_logs(workdir)
    shutil.copytree(os.path.join(os.path.dirname(os.path.abspath(readme)), "config"), os.path.join(workdir, "config"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    results: dict[str, dict] = {}
    groups: list[int] = []
    try:
        for name, lang, body in recipes(readme):
            if lang == "python":
                if python is None:
                    continue
                from kraftwire.tools.local_cluster import kraftwire_env

                # the kraftwire this driver imports (the installed one in CI), whatever the working directory
                cmd, block_env = [python, "-c", body], kraftwire_env()
            else:
                cmd, block_env = ["bash", "-c", body], env
            started = time.monotonic()
            proc = subprocess.Popen(cmd, cwd=workdir, env=block_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL, text=True, start_new_session=True)
            try:
                stdout, stderr = proc.communicate(timeout=BLOCK_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                stdout, stderr = proc.communicate()
            result = {"rc": proc.returncode, "stdout": stdout, "stderr": stderr,
                      "seconds": round(time.monotonic() - started, 1)}
            results[name] = result
            if name.endswith("-start"):
                groups.append(proc.pid)
            if name in WAIT:
                bootstrap, want, config = WAIT[name]
                result["ready"] = wait_ready(bootstrap, want, os.path.join(workdir, config) if config else None)
            if name in STOP_AFTER:
                result["stopped"] = all([stop(g) for g in groups])
                groups.clear()
    finally:
        for g in groups:
            stop(g)
        with open(out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
