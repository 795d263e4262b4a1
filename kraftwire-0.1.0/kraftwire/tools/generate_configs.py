"""Regenerate ``kraftwire/kafka_configs.tsv`` from the configuration definitions of the pinned Kafka release.

``python -m kraftwire.tools.generate_configs [--libs DIR] [--check]``

Runs ``tests/kafka/DumpConfigs.java`` on Kafka's jars (``tests/kafka/fetch.sh`` puts them in
``~/.cache/kraftwire/kafka-<version>/libs``) and writes its facts — every broker, topic and group key with its type,
default, validator, importance, dynamic update mode and synonyms — into the table, keeping the one column that is
kraftwire's own: what kraftwire does with the key (``honoured``, ``meaningless`` or ``unsupported``). A key new in
the release gets ``unsupported`` until someone implements it. ``--check`` writes nothing and exits 1 when the table
differs from the release's facts (the oracle test runs it).
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
from pathlib import Path

from kraftwire import kafka_configs

ROOT = Path(__file__).resolve().parents[2]
DUMPER = ROOT / "tests" / "kafka" / "DumpConfigs.java"


def default_libs() -> Path:
    return Path(os.environ.get("KRAFTWIRE_KAFKA_LIBS") or
                Path.home() / ".cache" / "kraftwire" / f"kafka-{kafka_configs.KAFKA_VERSION}" / "libs")


def dump(libs: Path) -> list[list[str]]:
    if not libs.is_dir():
        raise SystemExit(f"no Kafka jars in {libs}: run tests/kafka/fetch.sh first")
    out = subprocess.run(["java", "-cp", f"{libs}/*", str(DUMPER)], check=True, capture_output=True, text=True)
    return [line.split("\t") for line in out.stdout.splitlines() if line.strip()]


def render(rows: list[list[str]], kept: dict[tuple[str, str], str]) -> str:
    lines = [kafka_configs.HEADER]
    for row in rows:
        scope, name = row[0], row[1]
        lines.append("\t".join(row + [kept.get((scope, name), kafka_configs.UNSUPPORTED)]))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kraftwire.tools.generate_configs", description=__doc__)
    parser.add_argument("--libs", type=Path, default=None, help="the directory of Kafka's jars")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = parser.parse_args(argv)
    kept = {(k.scope, k.name): k.kraftwire for k in kafka_configs.ALL}
    text = render(dump(args.libs or default_libs()), kept)
    current = kafka_configs.TABLE_PATH.read_text(encoding="utf-8")
    if args.check:
        if text == current:
            print(f"{kafka_configs.TABLE_PATH.name}: the facts of Kafka {kafka_configs.KAFKA_VERSION}")
            return 0
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                                   "kafka_configs.tsv", f"Kafka {kafka_configs.KAFKA_VERSION}"))
        return 1
    kafka_configs.TABLE_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
