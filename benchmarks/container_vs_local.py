"""Kafka in a container against the same Kafka run locally: one seed, the same rows, the same verdicts?

    python benchmarks/container_vs_local.py                        # one ktc run of both, then the comparison
    python benchmarks/container_vs_local.py --seed 7 --version 3.9.2
    python benchmarks/container_vs_local.py --results reports/latest/tests/results.json   # a run already made

The container (``--impl kafka-container``) runs the local broker's JVM, configuration and clock in a
container (implementations/kafka/containers/launch.py), so every (clause, profile) row it has must carry the
verdict the local broker (``--impl kafka-<version>``) has in the same run.  Prints the verdict counts of
each and every row that differs; exits 1 when one does or when either has no rows, 0 otherwise.
``./run tests`` calls it on its own results (``--if-judged``: a container tier that could not run is
reported as such by its rows, not here).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTAINER = "kafka-container"


def verdicts(rows: list[dict], implementation: str) -> dict[tuple[str, str], str]:
    return {(r["clause"], r["profile"]): r["verdict"] for r in rows if r["implementation"] == implementation}


def compare(rows: list[dict], local: str) -> tuple[list[str], bool]:
    """Lines to print, and whether the two agree on every row (and both have rows)."""
    box, here = verdicts(rows, CONTAINER), verdicts(rows, local)
    lines = [
        f"{CONTAINER}: {len(box)} rows {dict(sorted(Counter(box.values()).items()))}",
        f"{local}: {len(here)} rows {dict(sorted(Counter(here.values()).items()))}",
    ]
    differ = sorted(k for k in box.keys() | here.keys() if box.get(k) != here.get(k))
    lines += [
        f"  {clause} under {profile}: container {box.get((clause, profile), '-')}, "
        f"local {here.get((clause, profile), '-')}"
        for clause, profile in differ
    ]
    agree = bool(box) and bool(here) and not differ
    lines.append(
        f"{'same' if agree else 'NOT the same'} verdicts: {len(differ)} of {len(box.keys() | here.keys())} rows differ"
    )
    return lines, agree


def local_name(rows: list[dict]) -> str | None:
    """The local broker of the container's version judged in the same run (``kafka-<version>``)."""
    version = next((r.get("implementation_version") for r in rows if r["implementation"] == CONTAINER), None)
    return f"kafka-{version}" if version else None


def not_judged(rows: list[dict]) -> bool:
    return all(r["verdict"] == "unsupported" for r in rows if r["implementation"] == CONTAINER)


def run_both(version: str, seed: int) -> Path:
    out = Path(tempfile.mkdtemp(prefix="ktc-container-vs-local-"))
    argv = [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        f"kafka-{version}",
        "--impl",
        CONTAINER,
        "--kafka-version",
        version,
        "--report",
        str(out),
        "--",
        f"--hypothesis-seed={seed}",
    ]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    print(f"ktc run, seed {seed}: exit {done.returncode}, {time.monotonic() - started:.0f} s, report in {out}")
    return out / "latest" / "results.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, help="compare the rows of this results.json (no run)")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--version", default="3.9.2")
    parser.add_argument(
        "--if-judged",
        action="store_true",
        help="with --results: a container that was not judged (no Docker engine) is no difference",
    )
    args = parser.parse_args()
    path = args.results or run_both(args.version, args.seed)
    if not path.exists():
        print(f"container_vs_local: no results at {path}", file=sys.stderr)
        return 2
    rows = json.loads(path.read_text())["rows"]
    if args.if_judged and not_judged(rows):
        print(f"container_vs_local: {CONTAINER} was not judged in {path} (every row unsupported), nothing to compare")
        return 0
    local = local_name(rows) or f"kafka-{args.version}"
    if args.if_judged and not verdicts(rows, local):
        print(f"container_vs_local: no {local} (the container's version, run locally) in {path}, nothing to compare")
        return 0
    lines, agree = compare(rows, local)
    print("\n".join(lines))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
