"""The Spark (PySpark) implementation under test: every clause, every profile, in bulk.

``SparkImplementation.run(histories)`` evaluates all histories in one Spark job: the append path
declaratively (append.py), segments per partition in ``applyInArrow`` (segments.py).  It never
imports the reference's rules; it shares only plain types (reference.types) and profile data
(specs.profiles).  Timestamps stay LongType milliseconds end to end.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ktc.implementations.protocol import Capabilities
from ktc.reference.types import (
    Ack,
    Crash,
    CreateTopicResult,
    DescribeLogResult,
    FetchResult,
    History,
    ListOffsetsResult,
    ProduceResult,
    RecordError,
    RetentionResult,
    SegmentInfo,
    StoredBatch,
    StoredRecord,
    TimestampType,
)
from ktc.spark import session
from ktc.specs.profiles import all_profiles
from ktc.specs.profiles import get as get_profile

from . import contract, topics
from .api import SWITCHES
from .segments import CLIENT_MAX_VERSION

BUCKETS = 8
MISSING = {
    "Produce": ProduceResult(3),
    "Fetch": FetchResult((), 3),
    "ListOffsets": ListOffsetsResult(-1, -1, 3),
    "RetentionPass": RetentionResult((), -1, 3),
    "DescribeLog": DescribeLogResult((), 3),
}
PROFILE_SWITCHES = [
    *SWITCHES,  # the append path's (api.py), then the rest of a profile's switches
    "roll_basis",
    "retention_basis",
    "list_offsets_scope",
    "event_time_retention",
    "max_timestamp_offset",
    "list_offsets_max_version",
    "list_offsets_targets",
    "unknown_negative_target",
]


class SparkImplementation:
    name = "spark"
    bulk = True  # the ktc harness batches histories into one run() call
    # ... every history of every test of the session: one Spark job for a whole run (ktc/plugin/bulk.py),
    # as a job's cost is mostly fixed; on one worker with the Spark tier's own tests (suites/spark, marked
    # "spark"), so one JVM serves them all (apart, the volume test started a second JVM at the run's end)
    bulk_session = True
    xdist_group = "spark"

    @property
    def version(self) -> str:
        import pyspark

        return pyspark.__version__

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=frozenset(all_profiles()), cannot_run=no_crash)

    def describe(self) -> str:
        return f"PySpark {self.version} (DataFrame plans, one run per test, every profile at once)"

    def prepare(self) -> None:
        """Start the JVM (about 5 s) while the harness draws the histories of a bulk run."""
        session.get()

    def run(self, histories: Sequence[History]) -> list[tuple]:
        histories = list(histories)
        flat = contract.flatten(histories, topics.config_error)
        payloads = self.evaluate(histories, flat) if flat.records or flat.events else {}
        return [assemble(i, h, flat, payloads) for i, h in enumerate(histories)]

    def evaluate(self, histories: list[History], flat: contract.Flat) -> dict:
        from .pipeline import run_pipeline

        spark = session.get()
        buckets = max(1, min(BUCKETS, spark.sparkContext.defaultParallelism))  # one Python call per core
        return run_pipeline(spark, histories, flat, profile_rows(histories), buckets)


def profile_rows(histories: list[History]) -> list[dict]:
    rows = []
    for scenario, h in enumerate(histories):
        p = get_profile(h.profile)
        row = {k: getattr(p, k) for k in PROFILE_SWITCHES}
        row["log_append_time_rule"] = p.log_append_time
        row["sentinel"] = h.no_timestamp if p.sentinel == "parameter" else -1
        rows.append({"scenario": scenario, **row})
    return rows


def assemble(scenario: int, history: History, flat: contract.Flat, payloads: dict) -> tuple:
    out = []
    for op_index, op in enumerate(history.ops):
        kind = type(op).__name__
        direct = flat.direct.get((scenario, op_index))
        if direct and direct[0] == "CreateTopic":
            out.append(CreateTopicResult(direct[1]))
        elif direct:
            out.append(missing(op, get_profile(history.profile)))
        elif kind in ("Advance", "StepClock", "ElectLeader"):
            out.append(Ack())
        else:
            out.append(decode(kind, json.loads(payloads[(scenario, op_index)])))
    return tuple(out)


def missing(op, profile):
    """The answer for a topic or partition that does not exist; but a ListOffsets target the broker refuses
    at this version is refused first (UNSUPPORTED_VERSION, 3.9+), whether or not the partition exists."""
    kind = type(op).__name__
    if kind == "ListOffsets" and profile.unknown_negative_target == "unsupported-version" and op.target < 0:
        least = dict(profile.list_offsets_targets).get(op.target)
        version = min(profile.list_offsets_max_version, CLIENT_MAX_VERSION) if op.version is None else op.version
        if least is None or version < least:
            return ListOffsetsResult(-1, -1, 35)
    return MISSING[kind]


def decode(kind: str, p: dict):
    if kind == "Produce":
        return ProduceResult(
            p["error_code"],
            p["error_message"],
            tuple(RecordError(i, m) for i, m in p["record_errors"]),
            p["base_offset"],
            p["log_append_time"],
            p["log_start_offset"],
            p["rolled"],
            tuple(p["warnings"]),
        )
    if kind == "Fetch":
        return FetchResult(
            tuple(
                StoredBatch(
                    b["base"],
                    TimestampType(b["type"]),
                    b["max"],
                    tuple(StoredRecord(o, t, c) for o, t, c in b["records"]),
                )
                for b in p["batches"]
            )
        )
    if kind == "ListOffsets":
        return ListOffsetsResult(p["offset"], p["timestamp"], p.get("error_code", 0))
    if kind == "RetentionPass":
        return RetentionResult(tuple(p["deleted"]), p["log_start_offset"])
    return DescribeLogResult(
        tuple(SegmentInfo(b, e, m, tuple(tuple(x) for x in idx)) for b, e, m, idx in p["segments"])
    )


def no_crash(history: History) -> str | None:
    """A Crash stops a broker process uncleanly; DataFrame plans have no process to stop and start again."""
    if any(isinstance(op, Crash) for op in history.ops):
        return "a Crash restarts a broker process: the Spark implementation evaluates plans, with none to restart"
    return None
