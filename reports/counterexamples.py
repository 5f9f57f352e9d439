"""Failing rows as portable counterexample files, one per clause x implementation x profile.

Hypothesis's database is local, keyed by test and unreadable; these files are plain JSON a
broker team can attach to a bug, commit next to a fix, and replay with ``ktc replay FILE``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .files import write_atomically
from .loading import COUNTEREXAMPLE_SCHEMA
from .schema import Counterexample, Document, Provenance, Row, Target, provenance_of

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(row: Row) -> str:
    """``<clause>--<impl>--<profile>.json`` with anything unsafe in a file name replaced by ``_``."""
    parts = (row["clause"], row["implementation"], row["profile"])
    return "--".join(_UNSAFE.sub("_", p) for p in parts) + ".json"


def spec_of(implementation: str, provenance: Provenance) -> str:
    """How to load the implementation again: the --impl value it was run with, else its name."""
    for impl in provenance.get("implementations", ()):
        if impl.get("name") == implementation:
            return impl.get("spec") or implementation
    return implementation


def document(row: Row, provenance: Provenance) -> Counterexample:
    cx = row.get("counterexample") or Counterexample()  # written only for rows that have one
    spec = spec_of(row["implementation"], provenance)
    return {
        "schema_version": COUNTEREXAMPLE_SCHEMA,
        "clause": row["clause"],
        "implementation": row["implementation"],
        "implementation_spec": spec,
        "implementation_version": row.get("implementation_version"),
        "profile": row["profile"],
        "seed": row.get("seed"),
        "signature": row.get("signature"),
        "tests": row.get("tests", []),
        "history": cx["history"],
        "mismatch": cx["mismatch"],
        "first_divergence": cx.get("first_divergence"),
        "target": target_of(row["implementation"], provenance),
    }


def target_of(implementation: str, provenance: Provenance) -> Target | None:
    """Where the row was observed (a broker's bootstrap or the version ktc started), for ``ktc replay``."""
    return next((t for t in provenance.get("targets", ()) if t.get("implementation") == implementation), None)


def replay_command(path: Path | str, spec: str) -> str:
    return f"ktc replay {path} --impl {spec}"


def pytest_replay(test: str, spec: str, seed: int | None) -> str:
    """The pytest command that re-runs one test against one implementation with the run's seed."""
    return f"pytest '{test}' --impl {spec} --hypothesis-seed={seed}"


REPLAYED = ("fail", "error")  # rows that carry a ``replay`` command (schema 3)


def replay_line(row: Row, provenance: Provenance, counterexample_dir: str = "counterexamples") -> str:
    """``ktc replay`` of the row's counterexample file when it has one, else the pytest command."""
    spec = spec_of(row["implementation"], provenance)
    if row["verdict"] == "fail" and row.get("counterexample"):
        return replay_command(f"{counterexample_dir}/{file_name(row)}", spec)
    test = row.get("decided_by") or (row.get("tests") or ["suites"])[0]  # the test whose reason the row shows
    return pytest_replay(test, spec, row.get("seed"))


def replay_of(row: Row, provenance: Provenance) -> str:
    """The row's replay command as results.json carries it (a schema 2 file: computed the same way)."""
    return row.get("replay") or replay_line(row, provenance)


def located(command: str, report_dir: str | None) -> str:
    """A replay command with its counterexample path (relative to the report) under ``report_dir``."""
    prefix = "ktc replay counterexamples/"
    if report_dir and command.startswith(prefix):
        return f"ktc replay {report_dir.rstrip('/')}/counterexamples/{command[len(prefix) :]}"
    return command


def write_all(directory: Path, doc: Document) -> list[Path]:
    """Write one file per failing row with a counterexample into ``directory/counterexamples``;
    files left from an earlier run are removed, so the folder always matches results.json."""
    target = directory / "counterexamples"
    written: list[Path] = []
    for row in doc["rows"]:
        if row["verdict"] == "fail" and row.get("counterexample"):
            path = target / file_name(row)
            write_atomically(path, json.dumps(document(row, provenance_of(doc)), indent=1, sort_keys=True))
            written.append(path)
    if target.is_dir():
        for stale in set(target.glob("*.json")) - set(written):
            stale.unlink()
    return written
