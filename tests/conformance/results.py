"""The session's scenario results, written at its end as ``results.json`` and the conformance table ``TABLE.md``
(in ``$KRAFTWIRE_CONFORMANCE_OUT``, default ``build/conformance/``)."""

from __future__ import annotations

import datetime
import json
import os
import re

from conformance import allowed, table
from conformance.pair import CONFIGURATIONS
from conformance.runner import Outcome

from harness.kafka import KAFKA_DIR

from kraftwire import error_codes


def levels() -> str:
    """The levels the configurations were formatted at (``--release-version`` and ``--feature`` arguments), the
    most common one first with the configurations at another named: "4.4-IV0 (no-auto-create: 3.9)"."""
    def described(args: tuple[str, ...]) -> str:
        pairs = dict(zip(args[::2], args[1::2]))
        features = [v for k, v in zip(args[::2], args[1::2]) if k == "--feature"]
        return pairs.get("--release-version", "?") + (f" with {', '.join(features)}" if features else "")

    by_level: dict[str, list[str]] = {}
    for config in CONFIGURATIONS.values():
        level = described(tuple(a for a in config.format_args if not a.startswith("SCRAM")
                                and a != "--add-scram"))
        by_level.setdefault(level, []).append(config.name)
    common, *others = sorted(by_level, key=lambda level: -len(by_level[level]))
    return common + "".join(f" ({', '.join(by_level[level])}: {level})" for level in others)


def kafka_version() -> str:
    """The Kafka version the oracle runs, as pinned in ``tests/kafka/pom.xml``."""
    with open(os.path.join(KAFKA_DIR, "pom.xml"), encoding="utf-8") as f:
        return re.search(r"<kafka.version>(.*?)</kafka.version>", f.read()).group(1)


class Results:
    def __init__(self, collected: int) -> None:
        self.collected = collected
        self.scenarios: list[dict] = []
        self.used: set[allowed.Allowance] = set()

    def record(self, outcome: Outcome) -> list[dict]:
        """Judge an outcome's differences against the allow-list and keep them; the unexplained ones."""
        s = outcome.scenario
        differences = []
        for d in outcome.differences:
            entry = allowed.allowance(s.id, d.path)
            if entry is not None:
                self.used.add(entry)
            differences.append({"path": d.path, "kafka": d.kafka, "kraftwire": d.kraftwire,
                                "reason": entry.reason if entry else None})
        unexplained = [d for d in differences if d["reason"] is None]
        status = "differs" if unexplained else "documented" if differences else "match"
        provoked = {api: sorted(error_codes.name_of(code) for code in codes)
                    for api, codes in sorted(outcome.error_codes().items())}
        self.scenarios.append({"id": s.id, "api": s.api, "version": s.version, "name": s.name, "config": s.config,
                               "status": status, "differences": differences, "error_codes": provoked})
        return unexplained

    def error(self, scenario, exc: BaseException) -> None:
        self.scenarios.append({"id": scenario.id, "api": scenario.api, "version": scenario.version,
                               "name": scenario.name, "config": scenario.config, "status": "error",
                               "differences": [{"path": "<run>", "kafka": "", "kraftwire": repr(exc)[:500],
                                                "reason": None}]})

    def write(self) -> str | None:
        if not self.scenarios:
            return None
        out = table.out_dir()
        os.makedirs(out, exist_ok=True)
        data = {"generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "kafka_version": kafka_version(), "metadata_version": levels(), "collected": self.collected,
                "scenarios": self.scenarios,
                "unused_allowances": [a._asdict() for a in allowed.ALLOWED if a not in self.used]}
        with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        with open(os.path.join(out, "TABLE.md"), "w", encoding="utf-8") as f:
            f.write(table.render(data))
        return out
