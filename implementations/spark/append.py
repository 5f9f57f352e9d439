"""The append path as declarative Spark SQL (no Python UDFs), built as text (sql.py: a query costs a few py4j calls).

Per record: which timestamp the broker reads, whether it is exempt, whether it is out of range
(Java long emulated in decimal), the exact error text.  Per batch: the ProduceResponse v8 shape
(error_code, error_message, record_errors), then, over the batches of a partition in arrival
order, the base offset (running sum of accepted sizes), the LogAppendTime (the clock, or its
running max where the profile keeps it monotonic) and the stored timestamps and batch max.
Every function returns SQL: an expression, a select list, or a relation over the one it is given.
"""

from __future__ import annotations

from . import int64
from .sql import FALSE, TRUE, Switches, adding, aliased, both, case, either, literal, negated, same

MAX = "9223372036854775807L"
OFFSET = "coalesce(CAST(offset AS STRING), 'null')"  # a record's offset in a text, printed as Java prints a null
BATCH_REJECTED = "One or more records have been rejected due to invalid timestamp"
PARTITION_KEY = ["scenario", "topic", "partition"]


def partition_key(columns: list[str]) -> list[str]:
    """The columns of PARTITION_KEY the input has: ``partition`` always; an input without ``scenario``
    or ``topic`` holds one of each, and is not grouped on a column it does not have."""
    return [c for c in PARTITION_KEY if c in columns or c == "partition"]


def configured(s: Switches, name: str, default: str) -> str:
    """``coalesce(name, default)``: a topic config, or the default where it is unset; folded when known."""
    if not s.known(name):
        return f"coalesce({name}, {default})"
    return default if s.values[name] is None else s[name]


def limits(s: Switches) -> dict[str, str]:
    """Effective before/after: profile defaults, abs-difference, and the Long.MAX fallback."""
    difference = configured(s, "difference_max_ms", MAX)
    fallback = lambda v: case((both(s.holds("long_max_fallback"), same(v, MAX)), difference), otherwise=v)
    legacy = s.equals("validation", "abs-difference")
    before = configured(s, "before_max_ms", s["default_before_max_ms"])
    after = configured(s, "after_max_ms", s["default_after_max_ms"])
    return {
        "eff_before": case((legacy, difference), otherwise=fallback(before)),
        "eff_after": case((legacy, difference), otherwise=fallback(after)),
    }


def no_ts(ts: str, s: Switches) -> str:
    """The broker's 'no timestamp': the sentinel, and -1 where a parameter sentinel leaves it unextended."""
    unset = both(negated(s.equals("sentinel", -1)), f"({ts}) = -1", negated(s.holds("extended")))
    return either(f"({ts}) = {s['sentinel']}", unset)


def wrapping(s: Switches) -> str:
    return s.equals("arithmetic", "wrapping")


VERDICTS = ("record_error", "errs", "create_time", "read_time", "warning", "warns")
WORK = ("behind", "legacy_diff", "ahead", "checked", "out_of_range")  # read by the verdicts; no column where read once


def with_record_verdicts(records: str, s: Switches, wanted: tuple[str, ...] = VERDICTS) -> str:
    """Four projections over the relation ``records``: what the broker reads; the Java long differences it
    compares, each computed once (a column, not an expression repeated in every test of it: a smaller plan,
    quicker to parse, optimize and compile); whether it is checked and in range; then the ``wanted`` verdict
    columns (of VERDICTS), and only the differences they read: Spark would prune the others, but only after
    parsing and analysing them.  Of the columns of WORK, those not ``wanted`` and read by one expression are read
    in place there (a projection less where known values leave one reader)."""
    read = {"seen_ms": case((typed_lat(s), "header_max"), otherwise="timestamp_ms"), "rebuild": rebuild(s)}
    checked = {
        "checked": both(s.equals("topic_type", "CreateTime"), negated(no_ts("seen_ms", s))),
        "out_of_range": out_of_range(s),
    }
    columns, steps = verdict_columns(s), ({**read, **limits(s)}, differences(s, wanted), checked)
    return adding(records, *steps, {k: columns[k] for k in wanted if k in columns}, private=set(WORK) - set(wanted))


def typed_lat(s: Switches) -> str:
    """A LogAppendTime-typed batch whose header MaxTimestamp the profile reads."""
    return both(s.equals("timestampType", 1), negated(s.equals("lat_batch_check", "never")))


def differences(s: Switches, wanted: tuple[str, ...] = VERDICTS) -> dict[str, str]:
    """``now - read`` (and ``read - now`` for abs-difference) as the broker computes them, and how far the
    record's own timestamp is ahead of the clock, exactly (NULL past a long), for the warnings."""
    found = {"behind": int64.sub_long("broker_now_ms", "seen_ms", wrapping(s))}
    if s.equals("validation", "abs-difference") != FALSE:
        found["legacy_diff"] = int64.sub_long("seen_ms", "broker_now_ms", wrapping(s))
    if future(s) != FALSE and {"warning", "warns"} & set(wanted):
        found["ahead"] = int64.sub_long("timestamp_ms", "broker_now_ms", "false")
    return found


def future(s: Switches) -> str:
    """A future-timestamp warning (the ``ahead`` difference decides it)."""
    unset = negated(no_ts("timestamp_ms", s))
    return both(s.equals("topic_type", "CreateTime"), s.holds("future_warning"), negated(s.holds("control")), unset)


def verdict_columns(s: Switches) -> dict[str, str]:
    typed = typed_lat(s)
    wrong_type = both(
        typed, either("NOT checked", both("NOT out_of_range", s.equals("lat_batch_check", "after-range-check")))
    )
    ranged = "(checked AND out_of_range)"
    kept = case((facts(s)["rebuild"], "seen_ms"), otherwise="timestamp_ms")
    ahead = case(("ahead IS NULL", "timestamp_ms > 0"), otherwise="ahead > 3600000")
    warned = both(future(s), ahead)
    return {
        "record_error": case((ranged, range_message(s)), (wrong_type, type_message(s))),
        "errs": has_text(ranged, wrong_type),
        "create_time": case((no_ts(kept, s), s["sentinel"]), otherwise=kept),
        "read_time": case((no_ts("seen_ms", s), s["sentinel"]), otherwise="seen_ms"),
        "warning": case((warned, "concat('future-timestamp:', offset)")),
        "warns": case((warned, "offset IS NOT NULL"), otherwise="false"),
    }


def has_text(ranged: str, wrong_type: str) -> str:
    """``record_error IS NOT NULL`` without building the text: which inputs each message needs non-null."""
    named = "(seen_ms IS NOT NULL)"  # the offset is printed as Java prints any value, null too: no read of it
    bounds = "(broker_now_ms IS NOT NULL AND eff_before IS NOT NULL AND eff_after IS NOT NULL)"
    return case((ranged, f"{named} AND {bounds}"), (wrong_type, named), otherwise="false")


def out_of_range(s: Switches) -> str:
    """Long arithmetic where it fits; the decimal emulation only on the rows that overflow."""
    legacy = int64.abs_exceeds("legacy_diff", "eff_before", wrapping(s))
    bounded = either(int64.exceeds("behind", "eff_before"), int64.negated_exceeds("behind", "eff_after", wrapping(s)))
    return case((s.equals("validation", "abs-difference"), legacy), otherwise=bounded)


def bounds(s: Switches) -> tuple[str, str]:
    """The range the broker allows, as text: ``[now - before, now + after]`` in its arithmetic."""
    return (
        f"CAST({int64.sub('broker_now_ms', 'eff_before', wrapping(s))} AS STRING)",
        f"CAST({int64.add('broker_now_ms', 'eff_after', wrapping(s))} AS STRING)",
    )


def range_message(s: Switches) -> str:
    low, high = bounds(s)
    return (
        f"concat('Timestamp ', CAST(seen_ms AS STRING), ' of message with offset ', {OFFSET}, "
        f"' is out of range. The timestamp should be within [', {low}, ', ', {high}, ']')"
    )


def type_message(s: Switches) -> str:
    # a compressed batch kept as it came is read as PartialDefaultRecords, which print a null key as -1 bytes
    partial = both(negated(s.equals("codec", "none")), negated(facts(s)["rebuild"]))
    key = f"coalesce(length(key), {case((partial, '-1'), otherwise='0')})"
    kind = case((partial, "'Partial'"), otherwise="''")
    return (
        f"concat('Invalid timestamp type in message ', {kind}, 'DefaultRecord(offset=', {OFFSET}, "
        f"', timestamp=', CAST(seen_ms AS STRING), ', key=', CAST({key} AS STRING), ' bytes, value=', "
        "CAST(coalesce(length(value), 0) AS STRING), "
        "' bytes). Producer should not set timestamp type to LogAppendTime.')"
    )


def rebuild(s: Switches) -> str:
    """Whether the broker rebuilds the batch: the topic's compression (``producer``: keep the batch's own) is not
    the batch's codec.  TRUE or FALSE when both are known, FALSE for a known ``producer`` topic."""
    if not s.known("compression_type"):
        target = case(("compression_type = 'uncompressed'", "'none'"), otherwise="compression_type")
        return f"(({target}) <> 'producer' AND ({target}) <> {s['codec']})"
    kept = "none" if s.values["compression_type"] == "uncompressed" else s.values["compression_type"]
    if kept == "producer":
        return FALSE
    if s.known("codec"):
        return TRUE if kept != s.values["codec"] else FALSE
    return f"({literal(kept)} <> codec)"


BATCH_CONSTANTS = [
    "topic_type",
    "timestampType",
    "broker_now_ms",
    "clocks",
    "broker_id",
    "control",
    "codec",
    "rebuild",
    "negative_timestamps",
    "log_append_time_rule",
    "batch_max_floor",
    "sentinel",
    "dual_timestamps",
]
FIXED_WIDTH = ["timestampType", "broker_now_ms", "broker_id", "control", "rebuild"]  # max() of a constant
SHOWN = ["topic_type", "codec", "clocks"]  # string/array constants: output only
PROFILE_SWITCHES = ["negative_timestamps", "log_append_time_rule", "batch_max_floor", "sentinel", "dual_timestamps"]
LIST_TYPES = {
    "record_errors": "array<struct<offset:bigint,record_error:string>>",
    "warnings": "array<struct<offset:bigint,warning:string>>",
}


def batches(records: str, columns: list[str], s: Switches, with_records: bool = True, texts: bool = True) -> str:
    """One row per produce request (``records``: a relation of record verdicts, with these ``columns``): the
    response fields, then offsets and LogAppendTime in order.

    Everything per batch comes from one aggregate grouped by the batch key: the figures every response
    needs (fixed width: counts, flags as the bits of one ``bit_or``, maxima), and what only some queries
    read (the string/array constants of ``SHOWN``; with ``texts`` the lists of record errors and warnings;
    with ``with_records`` every record's create time too, which the segment stage and Fetch need).  Known
    switches and input columns are put back on the per-batch rows as constants (they need not ride through
    the shuffle, and a fact they decide is no bit of the flags); columns (many profiles) are grouped on.
    """
    batch_key = partition_key(columns) + ["batch_id"]
    grouped_switches = [name for name in PROFILE_SWITCHES if name not in s.values]
    keys = ", ".join(batch_key + grouped_switches)
    aggregates = {**figures(s), **shown(s), **(lists() if texts else {}), **(creates() if with_records else {})}
    grouped = f"(SELECT {keys}, {aliased(aggregates)} FROM {records} GROUP BY {keys})"
    code = error_code(s)
    coded = {**constants(s), "has_negative": f"CAST({flag('has_negative', s)} AS INT)", "error_code": code}
    return response(grouped, {**coded, **positions(batch_key[:-1], s, code)}, batch_key, s, with_records, texts)


def constants(s: Switches) -> dict[str, str]:
    """The batch columns ``s`` knows: profile switches, known input columns, a rebuild they decide."""
    known = {name: s[name] for name in [*PROFILE_SWITCHES, *FIXED_WIDTH, *SHOWN] if s.known(name)}
    decided = facts(s)["rebuild"]
    return {**known, **({"rebuild": decided} if decided in (TRUE, FALSE) else {})}


def error_code(s: Switches) -> str:
    rebuild_fails = both(s.equals("negative_timestamps", "rebuild-fails"), flag("rebuild", s), flag("has_negative", s))
    return case((flag("control", s), "87"), (flag("any_error", s), "32"), (rebuild_fails, "-1"), otherwise="0")


FLAGS = {"any_error": 1, "has_negative": 2, "control": 4, "rebuild": 8, "lat_topic": 16}


def facts(s: Switches) -> dict[str, str]:
    """The batch's yes/no facts, as conditions on its records; TRUE or FALSE where ``s`` decides them."""
    rebuilt = rebuild(s)
    return {
        "any_error": "errs",
        "has_negative": "(seen_ms < 0 AND seen_ms <> -1)",
        "control": s.holds("control"),
        "rebuild": rebuilt if rebuilt in (TRUE, FALSE) else "rebuild",
        "lat_topic": s.equals("topic_type", "LogAppendTime"),
    }


def figures(s: Switches) -> dict[str, str]:
    """Fixed-width aggregates only; the batch's undecided yes/no facts as the bits of one ``bit_or``."""
    found = facts(s)
    open_facts = {name: fact for name, fact in found.items() if fact not in (TRUE, FALSE)}
    bits = " | ".join(case((fact, str(FLAGS[name])), otherwise="0") for name, fact in open_facts.items())
    real = case((f"read_time <> {s['sentinel']}", "read_time"))  # the header is written from reads
    lat_now = {} if found["lat_topic"] == FALSE else {"lat_now": f"max({case((found['lat_topic'], 'broker_now_ms'))})"}
    decided = constants(s)
    return {
        "size": "count(*)",
        "flags": f"bit_or({bits})",
        "max_create": f"max({real})",
        **lat_now,
        **{c: f"max({c})" for c in FIXED_WIDTH if c not in decided},
    }


def flag(name: str, s: Switches) -> str:
    """Whether the batch has the fact ``name``: its bit of the flags, or TRUE or FALSE where ``s`` decides it."""
    fact = facts(s)[name]
    return fact if fact in (TRUE, FALSE) else f"((flags & {FLAGS[name]}) <> 0)"


def shown(s: Switches) -> dict[str, str]:
    return {c: f"first({c})" for c in SHOWN if not s.known(c)}


def lists() -> dict[str, str]:
    """Record errors and warnings, sorted by offset."""
    only = lambda flag, value: f"array_sort(collect_list({case((flag, value))}))"
    return {
        "record_errors": only("errs", "struct(offset, record_error)"),
        "warnings": only("warns", "struct(offset, warning)"),
    }


def typed_lists() -> dict[str, str]:
    """The lists typed as they always were (an array whose elements may be null), whichever aggregate made them."""
    return {name: f"coalesce({name}, CAST(array() AS {kind}))" for name, kind in LIST_TYPES.items()}


def errors(records: str, columns: list[str]) -> str:
    """Per batch of ``records`` (a relation of record verdicts with these ``columns``): its record errors and
    warnings, as the response carries them."""
    key = ", ".join(partition_key(columns) + ["batch_id"])
    typed = {name: f"coalesce({aggregate}, CAST(array() AS {LIST_TYPES[name]}))" for name, aggregate in lists().items()}
    return f"(SELECT {key}, {aliased(typed)} FROM {records} GROUP BY {key})"


def creates() -> dict[str, str]:
    return {"creates": "array_sort(collect_list(struct(offset, create_time)))"}


def response(
    grouped: str, coded: dict[str, str], batch_key: list[str], s: Switches, with_records: bool, texts: bool
) -> str:
    """The response columns in order (``coded``: the per-batch columns over the aggregate ``grouped``), the batch
    max beside them; with ``texts`` the lists, with ``with_records`` the stored timestamps."""
    lists = typed_lists() if texts else {}
    stored = {"stored": "transform(creates, c -> coalesce(lat, c.create_time))"} if with_records else {}
    names = [*batch_key, "size", *list(lists)[:1], "has_negative", "max_create", *list(lists)[1:]]
    names += [*(["creates"] if with_records else []), *BATCH_CONSTANTS, "error_code", "base_offset", "lat", "batch_max"]
    return adding(grouped, coded, {**lists, "batch_max": batch_max(s), **stored}, selected=[*names, *stored])


def positions(key: list[str], s: Switches, code: str) -> dict[str, str]:
    """Over the batches of a partition in arrival order (``code``: a batch's error code): the base offset, and the
    LogAppendTime (NULL where the topic is known to be CreateTime: no window for it)."""
    order = f"PARTITION BY {', '.join(key)} ORDER BY batch_id ROWS BETWEEN UNBOUNDED PRECEDING AND"
    accepted = f"({code}) = 0"
    stamped = both(accepted, flag("lat_topic", s))
    running = f"max({case((stamped, 'lat_now'))}) OVER ({order} CURRENT ROW)"
    by_rule = case((s.equals("log_append_time_rule", "max-last-appended"), running), otherwise="lat_now")
    lat = "CAST(NULL AS BIGINT)" if stamped == FALSE else case((stamped, by_rule))
    return {"base_offset": f"coalesce(sum({case((accepted, 'size'))}) OVER ({order} 1 PRECEDING), 0)", "lat": lat}


def batch_max(s: Switches) -> str:
    """LogAppendTime, else the max CreateTime the broker read (Kafka floors it at -1; kip: the sentinel)."""
    floored = "greatest(CAST(-1 AS BIGINT), coalesce(max_create, CAST(-1 AS BIGINT)))"
    unfloored = f"coalesce(max_create, {s['sentinel']})"
    by_profile = case((s.equals("batch_max_floor", "minus-one"), floored), otherwise=unfloored)
    return f"coalesce(lat, {by_profile})"


def evaluate(records: str, columns: list[str], s: Switches) -> str:
    """records (joined with topic configs, and with the profile switches ``s`` does not know; a relation with
    these ``columns``) -> one row per batch."""
    return batches(with_record_verdicts(records, s), columns, s)
