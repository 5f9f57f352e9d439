"""What a hunt writes into its report directory: results.json (the same rows as ``ktc run``: one per
clause x implementation x profile, so every renderer in reports/ reads it), hunt.json (examples, coverage
counts, explained failures, how it stopped), and per finding a folder with counterexample.json, the
standalone script and the unit-test sketch."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import TypedDict

import hypothesis

from ktc.hunt import script, sketch
from ktc.hunt.signals import COVERAGE
from ktc.plugin.artifacts import attach
from ktc.reports import results
from ktc.reports.files import write_atomically
from ktc.reports.loading import COUNTEREXAMPLE_SCHEMA
from ktc.reports.schema import Counterexample, Document, Row, Target
from ktc.reports.verdicts import Unknown, Validity, strongest


class FindingDoc(TypedDict):
    """A finding as hunt.json lists it: the clauses it breaks, its size, and its files."""

    clause: str
    clauses: list[str]
    profile: str
    ops: int
    records: int
    folder: str
    script: str
    sketch: str
    javap: str  # whether javap found the method the sketch tests
    counterexample: Counterexample  # counterexample.json


class Explained(TypedDict):
    """Failures an expectation or a known Kafka bug explains, counted per clause, profile and reason."""

    clause: str
    profile: str
    why: str
    examples: int


class HuntDoc(TypedDict):
    """hunt.json: what the search did and found."""

    target: str
    implementation: str
    version: str | None
    profiles: list[str]
    seed: int
    seconds: float
    rounds: int
    examples: int
    stopped: str
    coverage: dict[str, int]  # examples per input feature (signals.COVERAGE)
    explained: list[Explained]
    crashes: list[str]  # the last five
    findings: list[FindingDoc]
    hypothesis: str
    python: str


class HuntProvenance(TypedDict):
    """results.json's provenance for a hunt."""

    implementations: list[dict[str, str | None]]  # name, version, spec
    targets: list[Target]
    profiles: list[str]
    command: str
    hypothesis: dict[str, object]  # version, seed, profile


def rows(hunt, outcome) -> list[Row]:
    finding = outcome.finding
    found = {(v.clause, finding.history.profile) for v in finding.verdicts} if finding else set()
    reasons = {(c, p): why for (c, p, why) in hunt.tally.explained}
    out = [row(hunt, key, counts, reasons.get(key), key in found) for key, counts in hunt.tally.verdicts.items()]
    for key in found - set(hunt.tally.verdicts):
        out.append(row(hunt, key, {}, None, True))
    return sorted(out, key=lambda r: (r["profile"], r["clause"]))


def row(hunt, key, counts, why, finding) -> Row:
    clause, profile = key
    verdict = "fail" if finding else strongest(v for v in counts if counts[v])
    impl = hunt.impl
    out: Row = {
        "clause": clause,
        "implementation": impl.name,
        "implementation_version": getattr(impl, "version", None),
        "profile": profile,
        "verdict": verdict,
        "examples": sum(counts.values()),
        "tests": ["ktc hunt"],
        "seed": hunt.seed,
        "duration": 0.0,
        "reason": None,
        "counterexample": None,
        "features": dict(hunt.tally.features.get(key, {})),
    }
    if verdict == Validity.UNKNOWN:
        out["unknown"] = Unknown.UNDECIDED if any(counts.values()) else Unknown.UNEXERCISED
    if why and verdict in ("fail", "error") and not finding:
        out["expected"] = {"verdict": verdict, "reason": why, "source": "ktc hunt", "file": why.split(")")[0]}
        out["reason"] = why
    return out


def attach_finding(rows_: list[Row], finding, counterexample: Counterexample) -> None:
    for r in rows_:
        if r["verdict"] == "fail" and r["clause"] in {v.clause for v in finding.verdicts} and "expected" not in r:
            r["counterexample"], r["reason"] = counterexample, finding.verdicts[0].clause + " (a hunt finding)"


def write_finding(directory: Path, hunt, finding, observed, spec: str = "") -> FindingDoc:
    """counterexample.json, reproduce.py and the unit-test sketch; their paths and the javap check."""
    from ktc.judge.harness import ClauseViolation

    folder = directory / "findings" / finding.verdicts[0].clause
    folder.mkdir(parents=True, exist_ok=True)
    counterexample: Counterexample = {
        **ClauseViolation(finding.verdicts, finding.history, hunt.impl.name).counterexample(),
        "schema_version": COUNTEREXAMPLE_SCHEMA,
        "profile": finding.history.profile,  # for ktc replay
        "implementation_spec": spec or hunt.impl.name,
    }
    (folder / "counterexample.json").write_text(json.dumps(counterexample, indent=1, sort_keys=True))
    version = str(getattr(hunt.impl, "version", ""))
    found_on = f"{hunt.impl.name} {version}".strip()
    reproducer = script.write(folder / "reproduce.py", finding, observed, found_on)
    test_class = sketch.under_test(finding.verdicts[0].clause)[0]
    java, checked = sketch.write(folder / f"{test_class}Sketch.java", finding, version)
    return {
        "clause": finding.verdicts[0].clause,
        "clauses": sorted({v.clause for v in finding.verdicts}),
        "profile": finding.history.profile,
        "ops": len(finding.history.ops),
        "records": records(finding.history),
        "folder": str(folder),
        "script": str(reproducer),
        "sketch": str(java),
        "javap": checked,
        "counterexample": counterexample,
    }


def records(history) -> int:
    return sum(len(op.batch.records) for op in history.ops if hasattr(op, "batch"))


def summary(hunt, outcome, finding_doc: FindingDoc | None, seconds: float, spec: str) -> HuntDoc:
    tally = hunt.tally
    return {
        "target": spec,
        "implementation": hunt.impl.name,
        "version": getattr(hunt.impl, "version", None),
        "profiles": list(hunt.profiles),
        "seed": hunt.seed,
        "seconds": round(seconds, 1),
        "rounds": tally.rounds,
        "examples": tally.examples,
        "stopped": outcome.stopped,
        "coverage": {name: tally.coverage.get(name, 0) for name in COVERAGE},
        "explained": [
            {"clause": c, "profile": p, "why": w, "examples": n} for (c, p, w), n in sorted(tally.explained.items())
        ],
        "crashes": tally.crashes[-5:],
        "findings": [finding_doc] if finding_doc else [],
        "hypothesis": hypothesis.__version__,
        "python": platform.python_version(),
    }


def provenance(hunt, spec: str, seconds: float) -> HuntProvenance:
    version = getattr(hunt.impl, "version", None)
    return {
        "implementations": [{"name": hunt.impl.name, "version": version, "spec": spec}],
        "targets": [{"implementation": hunt.impl.name, "version": version, "duration_s": round(seconds, 1)}],
        "profiles": list(hunt.profiles),
        "command": "ktc hunt",
        "hypothesis": {"version": hypothesis.__version__, "seed": hunt.seed, "profile": "hunt"},
    }


def write(directory: Path, hunt, outcome, finding_doc: FindingDoc | None, seconds: float, spec: str) -> Path:
    doc = summary(hunt, outcome, finding_doc, seconds, spec)
    write_atomically(directory / "hunt.json", json.dumps(doc, indent=1, sort_keys=True))
    found_rows = rows(hunt, outcome)
    if outcome.finding is not None and finding_doc:
        attach_finding(found_rows, outcome.finding, finding_doc["counterexample"])
    script_path = finding_doc["script"] if finding_doc else None
    return results.write(
        directory, found_rows, provenance(hunt, spec, seconds), attach=lambda d: replays(attach(d), script_path)
    )


def replays(doc: Document, script_path: str | None) -> Document:
    """A hunt's failure is replayed by its script (or, explained, not at all): not by a pytest command."""
    for r in doc["rows"]:
        if "replay" in r:
            scripted = script_path and r.get("counterexample")
            r["replay"] = f"python3 {script_path} --bootstrap HOST:PORT" if scripted else "explained: see hunt.json"
    return doc


def lines(doc: HuntDoc) -> list[str]:
    """The hunt's own lines, after the table: examples, coverage, explained failures, findings."""
    cov = ", ".join(f"{name} {doc['coverage'].get(name, 0)}" for name in COVERAGE)
    out = [
        f"ktc hunt: {doc['examples']} examples in {doc['rounds']} rounds, {doc['seconds']} s; "
        f"stopped: {doc['stopped']}",
        f"  examples with: {cov}",
    ]
    out += [f"  explained: {e['clause']} ({e['profile']}) x{e['examples']}: {e['why'][:140]}" for e in doc["explained"]]
    for f in doc["findings"]:
        out += [
            f"  FINDING {', '.join(f['clauses'])} ({f['profile']}): minimised to {f['ops']} ops, "
            f"{f['records']} records",
            f"    script: {f['script']}",
            f"    sketch: {f['sketch']} ({f['javap']})",
        ]
    return out
