"""`./run setup` on an empty machine: a commit's setup against a baseline commit's, in alternation.

Each run is a fresh `git clone` of the commit into a temporary folder with ``HOME`` an empty temporary folder, so
uv's, pip's, Maven's, Ivy's, Go's, npm's and ktc's caches all start empty (system packages stay installed: apt
is not timed).  The two commits alternate (A, B, A, B, ...), so a machine whose load drifts slows both alike.
Prints each run's wall time and exit code, the median and spread of each, and the ratio of the medians.  Every
run must succeed: a faster setup that fetched less is no figure.  Needs the network; the folders are removed.

    .venv/bin/python benchmarks/bench_setup.py --baseline 21a4f4f            # HEAD against 21a4f4f, one round
    .venv/bin/python benchmarks/bench_setup.py --baseline 21a4f4f --commit HEAD --rounds 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def resolved(commit: str) -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], cwd=ROOT, text=True, capture_output=True
    )
    return done.stdout.strip() or None


def setup_once(commit: str, log: Path) -> tuple[float, int]:
    """`./run setup` in a fresh clone of ``commit`` with an empty HOME: (wall seconds, exit code)."""
    scratch = Path(tempfile.mkdtemp(prefix="ktc-bench-setup-"))
    try:
        clone, home = scratch / "clone", scratch / "home"
        home.mkdir()
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", commit], cwd=clone, check=True)
        env = {key: value for key, value in os.environ.items() if not key.startswith(("XDG_", "KTC_"))}
        env["HOME"] = str(home)
        started = time.monotonic()
        with log.open("w") as out:
            code = subprocess.run([str(clone / "run"), "setup"], cwd=clone, env=env, stdout=out, stderr=out).returncode
        return time.monotonic() - started, code
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.0f} s ({min(values):.0f}-{max(values):.0f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="the commit measured against")
    parser.add_argument("--commit", default="HEAD", help="the commit measured (default HEAD)")
    parser.add_argument("--rounds", type=int, default=1, help="pairs of runs (default 1)")
    parser.add_argument("--logs", type=Path, default=Path(tempfile.gettempdir()), help="where each run's output goes")
    args = parser.parse_args(argv)
    commits = {"baseline": resolved(args.baseline), "commit": resolved(args.commit)}
    unknown = [
        given for given, sha in ((args.baseline, commits["baseline"]), (args.commit, commits["commit"])) if not sha
    ]
    if unknown or args.rounds < 1:
        print(
            f"bench_setup: {'unknown commit ' + unknown[0] if unknown else '--rounds must be 1 or more'}",
            file=sys.stderr,
        )
        return 2
    walls: dict[str, list[float]] = {"commit": [], "baseline": []}
    for n in range(args.rounds):
        for role in ("baseline", "commit"):
            log = args.logs / f"bench-setup-{role}-{n}.log"
            wall, code = setup_once(commits[role], log)
            print(f"{role} {commits[role][:8]}: {wall:.0f} s, exit {code} ({log})", flush=True)
            if code != 0:
                print(f"bench_setup: the {role}'s setup failed; see {log}", file=sys.stderr)
                return 1
            walls[role].append(wall)
    ratio = statistics.median(walls["commit"]) / statistics.median(walls["baseline"])
    print(f"commit {spread(walls['commit'])}, baseline {spread(walls['baseline'])}: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
