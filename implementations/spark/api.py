"""The public DataFrame API: evaluate Kafka-source-shaped records under a profile.

    from ktc.implementations.spark import api
    from ktc.spark import session
    out = api.evaluate(records_df, profile="kafka-4")
    out.batches   # ProduceResponse v8 per batch: size, error_code, base_offset, lat, batch_max, ...
    out.errors    # per batch: record_errors and warnings (their texts), sorted by offset
    out.records   # one verdict row per input record: verdict, rule_id, error_code, reason, now_ms, ts_ms, lower, upper

Each output is its own query, built on first use and holding only what it returns.  ``known`` columns (a topic's
config, a CreateTime-only input) are given as Python values instead of columns and folded into the plan:
``api.evaluate(df, "kafka-4", known={"topic_type": "CreateTime", "timestampType": 0, ...})``.

``records_df`` carries contract.RECORD_COLUMNS plus the topic config columns of
contract.TOPIC_COLUMNS (minus ``scenario``/``topic``), each as a column or, when ``known``, as a value.
``scenario`` and ``topic`` may be absent: the input is then one topic of one scenario, grouped by
``partition`` (and ``batch_id``) alone, and the outputs have no such columns either.  ``header_max``
may be absent, as in Spark's Kafka source: the batch header's MaxTimestamp is then the producer's own,
``max(-1, timestamps)`` of the batch, computed (one window) only over the records of LogAppendTime
batches (``timestampType = 1``), the only ones whose verdict reads it, and not at all where ``known``
rules them out.  Bad input (a missing or mistyped column or known value, an unknown profile) raises
ContractError naming it, before any job runs; a null timestamp fails the job that reads it with the same
kind of message (no separate scan of the input first).  A null offset is printed as ``null`` in a
record-error text.
"""

from __future__ import annotations

import functools

from pyspark.sql import DataFrame

from ktc.specs.profiles import ProfileError
from ktc.specs.profiles import get as get_profile

from . import append, contract
from .contract import ContractError
from .sql import FALSE, TRUE, Switches, aliased, both, case, literal, query, statement, typed

CONFIG_COLUMNS = {k: v for k, v in contract.TOPIC_COLUMNS.items() if k not in ("scenario", "topic", "created_clocks")}
SWITCHES = (
    "arithmetic",
    "validation",
    "long_max_fallback",
    "default_before_max_ms",
    "default_after_max_ms",
    "lat_batch_check",
    "future_warning",
    "negative_timestamps",
    "batch_max_floor",
    "dual_timestamps",
)


BATCH_VERDICTS = ("errs", "read_time")  # what the batch figures read of each record
ERROR_VERDICTS = ("record_error", "errs", "warning", "warns")
RECORD_VERDICTS = ("record_error", "errs", "read_time", "checked")


class Outputs:
    """``batches``, ``errors`` and ``records``: each one query over the input with the record verdicts it reads
    as a CTE (analysed once), built on first use and holding only what it returns: a caller of ``batches``
    alone plans no error text, warning or per-record verdict (Spark would prune them, but only after parsing
    and analysing them on every call)."""

    def __init__(self, records: DataFrame, switches: Switches, prepared: str):
        self._input, self._switches, self._prepared = records, switches, prepared
        self._columns = records.columns

    def query(self, wanted: tuple[str, ...], text: str) -> DataFrame:
        verdicts = append.with_record_verdicts(self._prepared, self._switches, wanted)
        return query(self._input.sparkSession, f"WITH verdicts AS {verdicts} {text}", records=self._input)

    def figures(self) -> str:
        return append.batches("verdicts", self._columns, self._switches, with_records=False, texts=False)

    @functools.cached_property
    def batches(self) -> DataFrame:
        return self.query(BATCH_VERDICTS, statement(self.figures()))

    @functools.cached_property
    def errors(self) -> DataFrame:
        return self.query(ERROR_VERDICTS, statement(append.errors("verdicts", self._columns)))

    @functools.cached_property
    def records(self) -> DataFrame:
        key = ", ".join(append.partition_key(self._columns) + ["batch_id"])
        outcome = f"(SELECT {key}, error_code AS batch_error, lat FROM {self.figures()})"
        columns = aliased(record_columns(self._switches))
        return self.query(
            RECORD_VERDICTS, f"SELECT {key}, offset, {columns} FROM verdicts JOIN {outcome} USING ({key})"
        )


def switches(profile: str, no_timestamp: int = -1, known: dict | None = None, kinds: dict | None = None) -> Switches:
    """The profile's switches and the input columns the caller knows (``kinds``: their Spark types), known: the
    plan holds only the branches they take."""
    try:
        p = get_profile(profile)
    except ProfileError as error:
        raise ContractError(str(error)) from None
    values = {k: getattr(p, k) for k in SWITCHES}
    values["log_append_time_rule"] = p.log_append_time
    values["sentinel"] = no_timestamp if p.sentinel == "parameter" else -1
    fixed = dict(known or {})
    literals = {name: typed(value, (kinds or {})[name]) for name, value in fixed.items()}
    return Switches({**values, **fixed}, literals)


def evaluate(records: DataFrame, profile: str, no_timestamp: int = -1, known: dict | None = None) -> Outputs:
    """``known``: input columns the caller knows hold one value on every row (a topic's config, a CreateTime-only
    input: ``{"topic_type": "CreateTime", "timestampType": 0, ...}``), given instead of as columns; the plan is
    built for those values, without the branches they rule out."""
    fixed = dict(known or {})
    columns = {**contract.RECORD_COLUMNS, **CONFIG_COLUMNS}
    kinds = contract.check_known(fixed, records, columns)
    contract.check_records(records, extra=CONFIG_COLUMNS, optional=("header_max", "scenario", "topic", *fixed))
    known_switches = switches(profile, no_timestamp, fixed, kinds)
    return Outputs(records, known_switches, prepared(records, known_switches))


def prepared(records: DataFrame, s: Switches) -> str:
    """The input as the verdicts read it: null timestamps refused (the job that reads one fails, naming the
    column), the known columns as literals, and the producer's header MaxTimestamp where the input has none:
    NULL where no verdict reads it (a known CreateTime input), else computed (one window) only over the records
    of LogAppendTime-typed batches, the only ones whose verdict reads it."""
    refused = case(
        ("timestamp_ms IS NULL", f"raise_error({literal(contract.NULL_TIMESTAMPS)})"), otherwise="timestamp_ms"
    )
    kept = ", ".join(
        [f"{refused} AS timestamp_ms" if c == "timestamp_ms" else c for c in records.columns]
        + [f"{s[name]} AS {name}" for name in s.literals]
    )
    read = append.typed_lat(s)
    if "header_max" in records.columns:
        return f"(SELECT {kept} FROM {{records}})"
    batch = f"PARTITION BY {', '.join(append.partition_key(records.columns))}, batch_id"
    own = f"greatest(max({refused}) OVER ({batch}), CAST(-1 AS BIGINT))"
    if read in (TRUE, FALSE):
        return f"(SELECT {kept}, {own if read == TRUE else 'CAST(NULL AS BIGINT)'} AS header_max FROM {{records}})"
    return (
        f"(SELECT {kept}, CAST(NULL AS BIGINT) AS header_max FROM {{records}} WHERE NOT (timestampType <=> 1) "
        f"UNION ALL SELECT {kept}, {own} AS header_max FROM {{records}} WHERE timestampType <=> 1)"
    )


def record_columns(s: Switches) -> dict[str, str]:
    """One verdict row per record: the outcome, the rule that decided it and the numbers behind it."""
    lower, upper = append.bounds(s)
    return {
        "verdict": verdict(),
        "rule_id": rule_id(s),
        "error_code": "batch_error",
        "reason": "record_error",
        "now_ms": "broker_now_ms",
        "ts_ms": "timestamp_ms",
        "lower": lower,
        "upper": upper,
    }


def verdict() -> str:
    return case(("batch_error <> 0", "'rejected'"), ("lat IS NOT NULL", "'overwritten'"), otherwise="'appended'")


def rule_id(s: Switches) -> str:
    own = "record_error IS NOT NULL"
    past = "seen_ms <= broker_now_ms"
    return case(
        (s.holds("control"), "'KIP-937.orthogonal-control-batch'"),
        (both(own, s.equals("validation", "abs-difference")), "'KIP-937.legacy-abs-difference'"),
        (f"{own} AND startswith(record_error, 'Invalid timestamp type')", "'KIP-937.per-record-validation'"),
        (f"{own} AND {past}", "'KIP-937.before-bound'"),
        (own, "'KIP-937.after-bound'"),
        ("batch_error = 32", "'KIP-937.whole-batch-rejection'"),
        ("batch_error = -1", "'KIP-228.rebuild-fails-on-negative'"),
        ("lat IS NOT NULL", "'KIP-32.log-append-time-assigned'"),
        ("NOT checked", "'KIP-228.minus-one-is-no-timestamp'"),
        otherwise="'KIP-32.create-time-kept'",
    )
