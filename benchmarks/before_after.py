"""Run one benchmark against two checkouts, alternately, and print the medians side by side (issue #39's rule:
median of five interleaved runs of old and new on the same machine and day).

    python benchmarks/before_after.py --old /work/wt-base --new . [--runs 5] -- partition_bench.py cost --records 50000

The benchmark script is taken from ``--script-from`` (default: the new checkout) so both sides run the same
measurement; the kraftwire measured is the checkout's (``PYTHONPATH`` and ``KRAFTWIRE_ROOT`` point at it, the working
directory is it). Runs alternate old/new, the first of each round swapping, so a drift of the machine's load touches
both sides alike — on shared cores the spread (max - min of a side's runs) is the noise to compare a difference with.
Every numeric figure of the script's ``--json`` output is tabulated.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run_once(checkout: Path, script: Path, args: list[str]) -> dict:
    """One run of ``script`` against ``checkout``; its figures, flattened to 'a.b.c' keys."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        env = dict(os.environ, KRAFTWIRE_ROOT=str(checkout), PYTHONPATH=str(checkout))
        subprocess.run([sys.executable, str(script), *args, "--json", out], cwd=checkout, env=env, check=True)
        return flatten(json.loads(Path(out).read_text()))
    finally:
        os.unlink(out)


def flatten(tree, prefix: str = "") -> dict[str, float]:
    """The numeric leaves of a JSON tree, keyed by their dotted path (lists of rows keyed by a 'client' field or
    their index)."""
    out: dict[str, float] = {}
    if isinstance(tree, dict):
        items = tree.items()
    elif isinstance(tree, list):
        items = ((row.get("client", i) if isinstance(row, dict) else i, row) for i, row in enumerate(tree))
    else:
        if isinstance(tree, (int, float)) and not isinstance(tree, bool):
            out[prefix] = float(tree)
        return out
    for key, value in items:
        out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def table(old: list[dict], new: list[dict]) -> str:
    """Median and spread of each figure on both sides, and new/old."""
    keys = [k for k in old[0] if all(k in r for r in old + new)]
    rows = [("figure", "old median", "old spread", "new median", "new spread", "new/old")]
    for k in keys:
        a, b = [r[k] for r in old], [r[k] for r in new]
        ma, mb = statistics.median(a), statistics.median(b)
        rows.append((k, f"{ma:g}", f"{max(a) - min(a):g}", f"{mb:g}", f"{max(b) - min(b):g}",
                     f"{mb / ma:.3f}" if ma else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, type=Path, help="the checkout measured as before")
    ap.add_argument("--new", required=True, type=Path, help="the checkout measured as after")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--script-from", type=Path, help="the checkout whose benchmarks/ script runs (default: --new)")
    ap.add_argument("--json", help="also write every run's figures here")
    ap.add_argument("bench", nargs=argparse.REMAINDER, help="-- script.py and its arguments")
    args = ap.parse_args()
    bench = args.bench[1:] if args.bench[:1] == ["--"] else args.bench
    if not bench:
        ap.error("name the benchmark script after --")
    script = ((args.script_from or args.new) / "benchmarks" / bench[0]).resolve()
    old_root, new_root = args.old.resolve(), args.new.resolve()
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for i in range(args.runs):
        order = [("old", old_root), ("new", new_root)]
        for side, root in order if i % 2 == 0 else order[::-1]:
            figures = run_once(root, script, bench[1:])
            runs[side].append(figures)
            print(f"run {i + 1} {side}: {json.dumps(figures)}", flush=True)
    print(table(runs["old"], runs["new"]))
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
