"""``config/jmx-exporter-rules.yaml`` applied as the Prometheus JMX exporter applies it, to Apache Kafka 4.4's MBeans
(``tests/kafka/mbeans-4.4.txt``), and the metric names a scrape or the Grafana dashboard holds: the checks that one
dashboard reads Kafka and kraftwire alike."""

from __future__ import annotations

import json
import os
import re

import yaml
from prometheus_client.parser import text_string_to_metric_families

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = os.path.join(ROOT, "config", "jmx-exporter-rules.yaml")
DASHBOARD = os.path.join(ROOT, "config", "grafana", "kraftwire-dashboard.json")
MBEANS = os.path.join(ROOT, "tests", "kafka", "mbeans-4.4.txt")


def load_rules() -> dict:
    with open(RULES, encoding="utf-8") as f:
        return yaml.safe_load(f)


def kafka_attributes() -> list[str]:
    """Every (MBean, attribute) of the list as the exporter writes it: ``domain<k=v, k=v><>Attribute: 0``."""
    out = []
    with open(MBEANS, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, attrs = line.rstrip("\n").split(" :: ")
            domain, keys = name.split(":", 1)
            props = ", ".join(keys.split(","))
            out += [f"{domain}<{props}><>{a}: 0" for a in attrs.split(",") if a]
    return out


def _expand(template: str, match: re.Match) -> str:
    return re.sub(r"\$(\d+)", lambda m: match.group(int(m.group(1))), template)


def apply(config: dict, attribute: str) -> tuple[str, dict] | None:
    """The (name, labels) the first matching rule gives ``attribute``, or None: patterns are unanchored, names
    lower-cased when the file says so, characters outside ``[a-zA-Z0-9:_]`` made ``_``."""
    for rule in config["rules"]:
        m = re.search(rule["pattern"], attribute)
        if m is None:
            continue
        name = re.sub(r"[^a-zA-Z0-9:_]", "_", _expand(rule["name"], m))
        if config.get("lowercaseOutputName"):
            name = name.lower()
        labels = {k: _expand(str(v), m) for k, v in (rule.get("labels") or {}).items()}
        return name, labels
    return None


def dashboard_metrics() -> set[str]:
    """The metric names the dashboard's queries read."""
    with open(DASHBOARD, encoding="utf-8") as f:
        dash = json.load(f)
    names = set()
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            names |= set(re.findall(r"\b((?:kafka|kraftwire)_[a-z0-9_]+)", target["expr"]))
    return names


def scrape_series(text: str) -> dict[str, set[frozenset]]:
    """name -> the sets of non-empty label names its samples carry (an empty label is an absent one)."""
    out: dict[str, set[frozenset]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, set()).add(frozenset(k for k, v in sample.labels.items() if v != ""))
    return out
