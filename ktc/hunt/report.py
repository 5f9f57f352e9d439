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

from ktc.hunt import draft, script
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
    draft: str  # JIRA.md or ISSUE.md, in the form of the target's project (draft.py)
    test: str  # the draft's test, if any: Java (LogValidatorTest-style) or Go (pkg/kfake-style)
    test_check: str  # whether it compiles (javac) or builds (go vet), and how long that took
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


def rows(hunt, findings) -> list[Row]:
    """One row per clause and profile judged; a clause a finding breaks fails (every finding's clauses, the
    main one first)."""
    found = {(v.clause, f.history.profile) for f in findings for v in f.verdicts}
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
    elif verdict in ("fail", "error") and not finding:
        out["reason"] = "failed during the search, and not again when its history was replayed"
    return out


def attach_finding(rows_: list[Row], clauses: list[str], counterexample: Counterexample) -> None:
    """The finding's counterexample on each failing row of its clauses that has none yet."""
    for r in rows_:
        if r["verdict"] in ("fail", "error") and r["clause"] in clauses and not r["counterexample"]:
            if "expected" not in r:
                r["counterexample"], r["reason"] = counterexample, counterexample["clause"] + " (a hunt finding)"


def write_finding(directory: Path, hunt, finding, observed, spec: str = "") -> FindingDoc:
    """counterexample.json, reproduce.py and the draft in the target project's form with its test; their paths and
    whether the test compiles."""
    lead = finding.verdicts[0].clause
    folder = directory / "findings" / lead
    counterexample, reproducer = evidence(folder, hunt, finding, observed, spec)
    written = draft.write(folder)
    return {
        "clause": finding.verdicts[0].clause,
        "clauses": [lead, *sorted({v.clause for v in finding.verdicts} - {lead})],  # the one it is named after first
        "profile": finding.history.profile,
        "ops": len(finding.history.ops),
        "records": records(finding.history),
        "folder": str(folder),
        "script": str(reproducer),
        "draft": written["draft"],
        "test": written["test"],
        "test_check": written["test_check"],
        "counterexample": counterexample,
    }


def evidence(folder: Path, hunt, finding, observed, spec: str = "") -> tuple[Counterexample, Path]:
    """What a draft is generated from: counterexample.json (``ktc replay`` reads it) and reproduce.py."""
    from ktc.judge.harness import ClauseViolation

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
    return counterexample, script.write(folder / "reproduce.py", finding, observed, found_on)


def records(history) -> int:
    return sum(len(op.batch.records) for op in history.ops if hasattr(op, "batch"))


def summary(hunt, outcome, finding_docs: list[FindingDoc], seconds: float, spec: str) -> HuntDoc:
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
        "findings": finding_docs,
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


def write(directory: Path, hunt, findings, finding_docs: list[FindingDoc], seconds: float, spec: str, outcome) -> Path:
    """hunt.json and results.json: every failing row with the counterexample of the finding that breaks its clause
    (the main finding's first) and that finding's reproducer as its replay."""
    doc = summary(hunt, outcome, finding_docs, seconds, spec)
    write_atomically(directory / "hunt.json", json.dumps(doc, indent=1, sort_keys=True))
    found_rows = rows(hunt, findings)
    for found in finding_docs:
        attach_finding(found_rows, found["clauses"], found["counterexample"])
    scripts = {f["clause"]: f["script"] for f in finding_docs}
    return results.write(
        directory, found_rows, provenance(hunt, spec, seconds), attach=lambda d: replays(attach(d), scripts)
    )


def replays(doc: Document, scripts: dict[str, str]) -> Document:
    """A hunt's failure is replayed by its finding's script, not by a pytest command; an explained one is not
    replayed, and a failing row without a counterexample says why it has none."""
    for r in doc["rows"]:
        if "replay" not in r:
            continue
        example = r.get("counterexample")
        if example and example["clause"] in scripts:
            r["replay"] = f"python3 {scripts[example['clause']]} --bootstrap HOST:PORT"
        elif "expected" in r:
            r["replay"] = "explained: see hunt.json"
        else:
            r["replay"] = f"no counterexample: {r.get('reason') or 'the hunt stopped before its findings were written'}"
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
            f"    draft: {f['draft']}",
            f"    test: {f['test'] or 'none'} ({f['test_check']})",
        ]
    return out
