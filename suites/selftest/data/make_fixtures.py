"""Rebuild the recorded results files the renderer tests read (suites/selftest/data/README.md says what
each holds and where its rows come from).

  python -m suites.selftest.data.make_fixtures REFERENCE_RESULTS MUTANTS_RESULTS

REFERENCE_RESULTS: ``ktc run --impl reference --workers 0`` (every profile, Hypothesis ci).
MUTANTS_RESULTS: ``ktc run --profile kafka-4 --hypothesis-profile dev --workers 0`` with the eight mutants
of ``MUTANTS`` as ``--impl suites.selftest.mutants:<name>``.
"""
from __future__ import annotations

import copy
import gzip
import json
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

from ktc.judge.timeline import timeline
from ktc.plugin.artifacts import attach
from reports.outcomes import targets

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
MUTANTS = ("exact_arithmetic", "after_bound_exclusive", "before_after_swapped", "wrong_error_code",
           "trusts_header_max", "max_timestamp_last_offset", "rolls_by_wall_clock", "keeps_create_time_on_lat_topic")
# Releases whose profile is a root (specs/profiles.toml): the reference ran every clause under it, as the
# release itself would (under a descendant profile the reference runs only the clauses it differs on).
KAFKA = {"kafka-3.5.2": ("3.5.2", "kafka-3.5"), "kafka-3.6.2": ("3.6.2", "kafka-3.6"),
         "kafka-4.1.2": ("4.1.2", "kafka-4")}
KFAKE = "kfake-v0.0.0-20260918054303-01f206a7e32c"
NO_DOCKER = ("no Docker engine answers (DOCKER_HOST=unset): Error while fetching server API version: "
             "('Connection aborted.', FileNotFoundError(2, 'No such file or directory'))")
SHOWN_MUTANTS = ("exact_arithmetic", "keeps_create_time_on_lat_topic")


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
        impl = name[name.index("[") + 1:].split("-kafka-")[0].split("-kip")[0].rstrip("]") if "[" in name else ""
        found[impl] = found.get(impl, 0.0) + float(case.get("time") or 0)
    return found


def renamed(row: dict, name: str, version: str) -> dict:
    """A reference row as a Kafka release that passes its own profile reports it (the expectations files
    say each release passes its own profile); tests and features kept, the seed too."""
    return {**copy.deepcopy(row), "implementation": name, "implementation_version": version}


def expected_rows(reference: list[dict], name: str, version: str, entries: list[dict], file: str) -> list[dict]:
    """The rows an expectations file names, failing as it says, built on the reference's row of that clause
    and profile (no counterexample: the excerpt has none)."""
    at = {(r["clause"], r["profile"]): r for r in reference}
    out = []
    for entry in entries:
        base = at.get((entry["clause"], entry["profile"]))
        if base is not None:
            out.append({**renamed(base, name, version), "verdict": entry["verdict"], "reason": entry["reason"],
                        "signature": None, "signatures": {}, "expected": {**{k: entry.get(k) for k in (
                            "verdict", "reason", "source")}, "file": file}})
    return out


def kafka_target(reference: list[dict], name: str, version: str, profile: str, file: str) -> tuple[list, dict]:
    data = tomllib.loads((ROOT / "expectations" / file).read_text())
    expected = expected_rows(reference, name, version, data["expect"], file)
    named = {(r["clause"], r["profile"]) for r in expected}
    own = [renamed(r, name, version) for r in reference if r["profile"] == profile
           and (r["clause"], profile) not in named]
    record = {"implementation": name, "version": version, "description": f"Apache Kafka {version} (local KRaft "
              "broker from Maven Central)", "profile": profile, "evidence": f"release line {version[:3]}",
              "not_run": None}  # no duration_s: derived rows have no wall time; readers sum the rows' (shown ~)
    return own + expected, record


def container_target(reference: list[dict]) -> tuple[list, dict]:
    """kafka-container without a Docker engine: every clause of its profile unsupported, one reason."""
    rows = [{**renamed(r, "kafka-container", "apache/kafka:4.1.2"), "verdict": "unsupported", "examples": 0,
             "reason": f"unsupported: {NO_DOCKER}", "duration": 0.0, "features": {}, "tests": r["tests"][:1]}
            for r in reference if r["profile"] == "kafka-4"]
    record = {"implementation": "kafka-container", "version": "apache/kafka:4.1.2",
              "description": "apache/kafka:4.1.2 under testcontainers", "profile": "kafka-4",
              "evidence": "release line 4.1", "not_run": NO_DOCKER, "duration_s": 0.4}
    return rows, record


def mutant_records(doc: dict) -> list[dict]:
    """The run's own target records (the plugin writes one per implementation); for a run from before
    it did, records made from the rows and the junit.xml test times."""
    if doc["provenance"].get("targets"):
        return doc["provenance"]["targets"]
    return [{"implementation": t["implementation"], "version": t["version"], "profile": "kafka-4",
             "description": "a mutant of the reference (suites/selftest/mutants.py)",
             "evidence": "given with --profile",
             "not_run": None, "duration_s": round(doc["wall"].get(t["implementation"], 0.0), 1)} for t in targets(doc)]


def expect_all(rows: list[dict]) -> list[dict]:
    """The mutants' failures as known deviations, as ``ktc expectations update`` would list them."""
    for row in rows:
        if row["verdict"] in ("fail", "error"):
            row["expected"] = {"verdict": row["verdict"], "reason": "the mutant's planted defect",
                               "source": "suites/selftest/mutants.py", "file": f"{row['implementation']}.toml"}
    return rows


def conforming(reference: dict, mutants: dict) -> dict:
    """Eight targets, every failure expected: the reference, three Kafka releases and kfake (derived as
    above), two mutants with their failures expected, and kafka-container that could not run."""
    rows, records = list(reference["rows"]), [{"implementation": "reference", "version": "1", "description":
                                               "the executable model (reference/)", "profile": "every profile",
                                               "evidence": "the model of every profile", "not_run": None,
                                               "duration_s": round(reference["wall"].get("reference", 0.0), 1)}]
    for name, (version, profile) in KAFKA.items():
        found, record = kafka_target(reference["rows"], name, version, profile, f"{name}.toml")
        rows, records = rows + found, records + [record]
    found, record = kafka_target(reference["rows"], "kfake", KFAKE.split("-", 1)[1], "kafka-4", f"{KFAKE}.toml")
    rows, records = rows + found, records + [{**record, "description": "franz-go's kfake fake broker",
                                              "evidence": "follows Apache Kafka 4"}]
    shown = [r for r in mutants["rows"] if r["implementation"] in SHOWN_MUTANTS]
    rows += expect_all(copy.deepcopy(shown))
    records += [t for t in mutant_records(mutants) if t["implementation"] in SHOWN_MUTANTS]
    found, record = container_target(reference["rows"])
    specs = {i["name"]: i["spec"] for i in mutants["provenance"]["implementations"]}
    return document(reference, rows + found, records + [record], specs)


def document(base: dict, rows: list[dict], records: list[dict], specs: dict) -> dict:
    """The reference run's document (seed, Hypothesis settings, configuration) with these rows and targets."""
    prov = {**base["provenance"], "targets": records,
            "implementations": [{"name": t["implementation"], "version": t["version"],
                                 "spec": specs.get(t["implementation"], t["implementation"])} for t in records]}
    return attach({**without_wall(base), "schema_version": 3, "provenance": prov, "rows": rows})


def without_wall(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "wall"}


def failing(mutants: dict) -> dict:
    """The eight mutants as they ran."""
    return attach({**without_wall(mutants), "schema_version": 3,
                   "provenance": {**mutants["provenance"], "targets": mutant_records(mutants)}})


def save(doc: dict, name: str) -> None:
    with gzip.open(HERE / name, "wt") as out:
        json.dump(doc, out, sort_keys=True, separators=(",", ":"))


def main(reference_path: str, mutants_path: str) -> None:
    reference, mutants = load(reference_path), load(mutants_path)
    save(conforming(reference, mutants), "results-conforming.json.gz")
    save(failing(mutants), "results-failing.json.gz")


if __name__ == "__main__":
    main(*sys.argv[1:])
