"""The conformance table: per API, how many scenarios matched Kafka 4.4 exactly, how many matched but for documented
differences, how many failed; then every documented difference with its reason.

``python -m tests.conformance.table [results.json]`` prints it from a run's results (default
``$KRAFTWIRE_CONFORMANCE_OUT/results.json``, else ``build/conformance/results.json``); the run itself writes it
beside them as ``TABLE.md``. ``tests/conformance/TABLE.md`` is a full run's table kept in the tree (for the README):
refresh it, and the README's copy of the per-API table, with ``python -m tests.conformance.table --refresh`` after a
full run. Standard library only, so it runs without the test dependencies.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict

from . import error_catalog

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STATUSES = ("match", "documented", "differs", "error")


def out_dir() -> str:
    return os.environ.get("KRAFTWIRE_CONFORMANCE_OUT") or os.path.join(REPO, "build", "conformance")


def _ranges(numbers: list[int]) -> str:
    numbers = sorted(set(numbers))
    spans, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            spans.append(str(start) if start == n else f"{start}–{n}")
            start = None
    return ", ".join(spans)


def _cell(text: str, limit: int = 160) -> str:
    text = str(text).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"


def render(results: dict) -> str:
    scenarios = results["scenarios"]
    lines = [f"## Conformance with Apache Kafka {results['kafka_version']}", "",
             f"Generated {results['generated']} by `pytest tests/conformance` ({len(scenarios)} of "
             f"{results['collected']} scenarios ran; metadata.version {results['metadata_version']}). "
             "Each scenario sends the same requests to Kafka and to kraftwire and compares the answers field by "
             "field; a documented difference is on the allow-list (`tests/conformance/allowed.py`) with its reason.",
             "", "| API | versions | scenarios | match | documented differences | failing |",
             "|---|---|---:|---:|---:|---:|"]
    by_api: dict[str, list[dict]] = defaultdict(list)
    for s in scenarios:
        by_api[s["api"]].append(s)
    for api in sorted(by_api):
        rows = by_api[api]
        count = {status: sum(1 for s in rows if s["status"] == status) for status in STATUSES}
        lines.append(f"| {api} | {_ranges([s['version'] for s in rows])} | {len(rows)} | {count['match']} | "
                     f"{count['documented']} | {count['differs'] + count['error']} |")
    total = {status: sum(1 for s in scenarios if s["status"] == status) for status in STATUSES}
    share = 100.0 * total["documented"] / len(scenarios) if scenarios else 0.0
    lines += ["", f"In all: {len(scenarios)} scenarios, {total['match']} match, {total['documented']} match but for "
              f"documented differences ({share:.1f} %), {total['differs'] + total['error']} failing."]
    documented: dict[tuple, tuple[set, set]] = defaultdict(lambda: (set(), set()))
    for s in scenarios:
        for d in s["differences"]:
            if d["reason"]:
                paths, ids = documented[(s["api"], d["reason"])]
                paths.add(d["path"])
                ids.add(s["id"])
    if documented:
        lines += ["", "### Documented differences", "", "| API | scenarios | fields | reason |", "|---|---:|---|---|"]
        for (api, reason), (paths, ids) in sorted(documented.items()):
            fields = ", ".join(f"`{p}`" for p in sorted(paths))
            lines.append(f"| {api} | {len(ids)} | {_cell(fields, 300)} | {_cell(reason, 700)} |")
    failing = [s for s in scenarios if s["status"] in ("differs", "error")]
    if failing:
        lines += ["", "### Failing", "", "| scenario | field | Kafka | kraftwire |", "|---|---|---|---|"]
        for s in failing:
            for d in s["differences"]:
                if not d["reason"]:
                    lines.append(f"| {s['id']} | `{_cell(d['path'])}` | {_cell(d['kafka'])} | {_cell(d['kraftwire'])} |")
    lines += _error_code_sections(scenarios)
    if results.get("unused_allowances"):
        lines += ["", "### Allow-list entries no difference used in this run", ""]
        lines += [f"- `{a['scenario']}` `{a['path']}`: {a['reason']}" for a in results["unused_allowances"]]
    return "\n".join(lines) + "\n"


def _error_code_sections(scenarios: list[dict]) -> list[str]:
    """Per API, the error codes Kafka's answers carried in this run (any step's, top-level or nested), and the codes
    :mod:`conformance.error_catalog` says a client can cause that no scenario provoked (issue #36's coverage)."""
    provoked: dict[str, set[str]] = defaultdict(set)
    for s in scenarios:
        for api, names in s.get("error_codes", {}).items():
            provoked[api].update(names)
    lines = ["", "### Error codes provoked", "", "| API | error codes Kafka answered with |", "|---|---|"]
    lines += [f"| {api} | {', '.join(sorted(provoked[api]))} |" for api in sorted(provoked)]
    unprovokable = error_catalog.NOT_PROVOKABLE
    missing = {api: sorted(set(names) - provoked[api] - {code for a, code in unprovokable if a == api})
               for api, names in error_catalog.CLIENT_CAUSED.items()}
    caused = sum(len(names) for names in error_catalog.CLIENT_CAUSED.values())
    provokable = caused - len(unprovokable)
    left = sum(len(names) for names in missing.values())
    lines += ["", "### Error codes not provoked", "",
              f"Of the {caused} (API, error code) pairs a client can cause (`tests/conformance/error_catalog.py`, "
              f"from Kafka's javadoc), {provokable} are provokable by a test and {provokable - left} were provoked: "
              f"{provokable - left} / {provokable} / {caused} (provoked / provokable / total). Not provoked:", "",
              "| API | not provoked |", "|---|---|"]
    lines += [f"| {api} | {', '.join(names)} |" for api, names in sorted(missing.items()) if names]
    lines += ["", "Not provokable by a test, with why:", "", "| API | error code | why |", "|---|---|---|"]
    lines += [f"| {api} | {code} | {_cell(why, 400)} |" for (api, code), why in sorted(unprovokable.items())]
    return lines


README_BEGIN, README_END = "<!-- conformance-table -->", "<!-- /conformance-table -->"


def refresh(table_path: str) -> None:
    """Copy a full run's table into the tree, and its summary (everything before the documented differences) into
    the README between its markers."""
    with open(table_path, encoding="utf-8") as f:
        table = f.read()
    with open(os.path.join(REPO, "tests", "conformance", "TABLE.md"), "w", encoding="utf-8") as f:
        f.write(table)
    summary = table.split("\n### ", 1)[0].split("\n", 2)[2].strip()  # without the heading and the differences
    readme_path = os.path.join(REPO, "README.md")
    with open(readme_path, encoding="utf-8") as f:
        readme = f.read()
    before, rest = readme.split(README_BEGIN, 1)
    after = rest.split(README_END, 1)[1]
    with open(readme_path, "w", encoding="utf-8") as f:
        f.write(f"{before}{README_BEGIN}\n{summary}\n{README_END}{after}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--refresh"]:
        refresh(argv[1] if len(argv) > 1 else os.path.join(out_dir(), "TABLE.md"))
        return 0
    path = argv[0] if argv else os.path.join(out_dir(), "results.json")
    with open(path, encoding="utf-8") as f:
        sys.stdout.write(render(json.load(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
