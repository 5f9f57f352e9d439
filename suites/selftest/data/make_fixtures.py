"""Rebuild the recorded results files the renderer tests read (suites/selftest/data/README.md says what
each holds and where its rows come from).

  python -m ktc.suites.selftest.data.make_fixtures DEFAULT_RUN_RESULTS MUTANTS_RESULTS

DEFAULT_RUN_RESULTS: the results.json of ``./run conformance`` (the default run: every target ./run finds).
MUTANTS_RESULTS: ``ktc run --profile kafka-4 --hypothesis-profile dev --workers 0`` with the eight mutants
of ``MUTANTS`` as ``--impl suites.selftest.mutants:<name>``.
"""

from __future__ import annotations

import gzip
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from ktc.judge.timeline import timeline
from ktc.plugin.artifacts import attach
from ktc.reports.outcomes import targets

HERE = Path(__file__).parent
MUTANTS = (
    "exact_arithmetic",
    "after_bound_exclusive",
    "before_after_swapped",
    "wrong_error_code",
    "trusts_header_max",
    "max_timestamp_last_offset",
    "rolls_by_wall_clock",
    "keeps_create_time_on_lat_topic",
)


def load(path: str) -> dict:
    """A results file as this ktc writes it (clauses, timelines, replays joined), with the run's junit.xml
    test times per implementation under ``wall``."""
    doc = json.loads(Path(path).read_text())
    for row in doc["rows"]:
        if row.get("counterexample") and "timeline" not in row:
            row["timeline"] = timeline(row["counterexample"])
    return {**attach(doc), "wall": junit_seconds(Path(path).with_name("junit.xml"))}


def junit_seconds(junit: Path) -> dict[str, float]:
    """Seconds of the test cases run against each implementation (its id in the test's parameters)."""
    found: dict[str, float] = {}
    for case in ET.parse(junit).iter("testcase"):
        name = case.get("name", "")
        impl = name[name.index("[") + 1 :].split("-kafka-")[0].split("-kip")[0].rstrip("]") if "[" in name else ""
        found[impl] = found.get(impl, 0.0) + float(case.get("time") or 0)
    return found


def mutant_records(doc: dict) -> list[dict]:
    """The run's own target records (the plugin writes one per implementation); for a run from before
    it did, records made from the rows and the junit.xml test times."""
    if doc["provenance"].get("targets"):
        return doc["provenance"]["targets"]
    return [
        {
            "implementation": t["implementation"],
            "version": t["version"],
            "profile": "kafka-4",
            "description": "a mutant of the reference (suites/selftest/mutants.py)",
            "evidence": "given with --profile",
            "not_run": None,
            "duration_s": round(doc["wall"].get(t["implementation"], 0.0), 1),
        }
        for t in targets(doc)
    ]


def without_wall(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "wall"}


def failing(mutants: dict) -> dict:
    """The eight mutants as they ran."""
    return attach(
        {
            **without_wall(mutants),
            "schema_version": 3,
            "provenance": {**mutants["provenance"], "targets": mutant_records(mutants)},
        }
    )


def save(doc: dict, name: str) -> None:
    with gzip.open(HERE / name, "wt") as out:
        json.dump(doc, out, sort_keys=True, separators=(",", ":"))


def main(default_run_path: str, mutants_path: str) -> None:
    save(json.loads(Path(default_run_path).read_text()), "results-conforming.json.gz")  # as the run wrote it
    save(failing(load(mutants_path)), "results-failing.json.gz")


if __name__ == "__main__":
    main(*sys.argv[1:])
