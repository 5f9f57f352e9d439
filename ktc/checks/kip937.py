"""KIP-937: before/after.max.ms bounds, whole-batch rejection, error 32 and its messages, config validation."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ktc.checks.common import (
    CT,
    count,
    exempt,
    flagged,
    refused_as_invalid,
    topic_config_conformance,
)
from ktc.checks.reads import appended_by, fetches, records, where, writer
from ktc.checks.registry import Compare, check
from ktc.checks.scenario import ProduceView, Scenario
from ktc.reference import configs
from ktc.reference.types import (
    CONFIG_NAMES,
    INT64_MAX,
    INT64_MIN,
    INVALID_TIMESTAMP,
    RetentionPass,
    RetentionResult,
)


def validated(view: ProduceView) -> bool:
    """A CreateTime topic, a CreateTime-typed batch with an honest header: plain per-record validation."""
    batch = view.batch
    return view.config.timestamp_type is CT and batch.timestamp_type is CT and view.honest_header and not batch.control


def falls_back(s: Scenario, view: ProduceView) -> bool:
    """Whether difference.max.ms stands in for a Long.MAX (or unset) before/after (kafka-3.6)."""
    config = view.config
    if not s.profile.long_max_fallback or config.difference_max_ms is None:
        return False
    return any(v is None or v == INT64_MAX for v in (config.before_max_ms, config.after_max_ms))


def fits_int64(x: int) -> bool:
    return INT64_MIN <= x <= INT64_MAX


def overflows(scenario: Scenario, now: int, ts: int) -> bool:
    """Whether Kafka's long arithmetic on this record leaves the int64 range."""
    diff = ts - now if scenario.profile.validation == "abs-difference" else now - ts
    return not fits_int64(diff) or diff == INT64_MIN


def records_where(
    scenario: Scenario, keep: Callable[[ProduceView, int], bool], fallback: bool = False
) -> Iterator[tuple[ProduceView, int, int]]:
    """(view, index, timestamp) for validated records that are neither exempt nor overflowing.

    Records judged through the Long.MAX fallback are only seen with ``fallback=True``.
    """
    for view in scenario.produces():
        if not validated(view) or falls_back(scenario, view) != fallback:
            continue
        for i, record in enumerate(view.batch.records):
            ts = record.timestamp
            if not exempt(scenario, ts) and not overflows(scenario, view.now, ts) and keep(view, ts):
                yield view, i, ts


def compare_flags(compare: Compare, rows: Iterable[tuple[ProduceView, int, int]], what: str) -> None:
    for view, i, ts in rows:
        compare.eq(
            view.index,
            f"{what}: record {i} (ts={ts}, now={view.now}) rejected",
            i in flagged(view.expected),
            i in flagged(view.observed),
        )


def limits(scenario: Scenario, view: ProduceView) -> tuple[int, int]:
    return configs.effective_limits(view.config, scenario.profile)


def at_bound(s: Scenario, view: ProduceView, ts: int) -> bool:
    before, after = limits(s, view)
    return view.now - ts == before or ts - view.now == after


@check("KIP-937.before-bound")
def past_records_conformance(s: Scenario, c: Compare) -> None:
    """Records strictly inside or beyond the past bound (the bound itself is KIP-937.bounds-inclusive)."""
    compare_flags(c, records_where(s, lambda v, ts: ts <= v.now and not at_bound(s, v, ts)), "past")


@check("KIP-937.after-bound")
def future_records_conformance(s: Scenario, c: Compare) -> None:
    compare_flags(c, records_where(s, lambda v, ts: ts > v.now and not at_bound(s, v, ts)), "future")


@check("KIP-937.legacy-abs-difference")
def all_records_conformance(s: Scenario, c: Compare) -> None:
    compare_flags(c, records_where(s, lambda v, ts: True), "record")


@check("KIP-937.long-max-fallback")
def fallback_records_conformance(s: Scenario, c: Compare) -> None:
    compare_flags(c, records_where(s, lambda v, ts: True, fallback=True), "record under the difference fallback")


@check("KIP-937.bounds-inclusive")
def bound_records_conformance(s: Scenario, c: Compare) -> None:
    compare_flags(c, records_where(s, lambda v, ts: at_bound(s, v, ts)), "at bound")


@check("KIP-937.default-before-unbounded")
def default_before_conformance(s: Scenario, c: Compare) -> None:
    unset = lambda v, ts: ts <= v.now and v.config.before_max_ms is None and v.config.difference_max_ms is None
    compare_flags(c, records_where(s, unset), "past, before unset")


@check("KIP-937.default-after-unbounded", "KIP-937.default-after-one-hour")
def default_after_conformance(s: Scenario, c: Compare) -> None:
    unset = lambda v, ts: ts > v.now and v.config.after_max_ms is None and v.config.difference_max_ms is None
    compare_flags(c, records_where(s, unset), "future, after unset")


@check("KIP-937.int64-wraparound")
def overflow_conformance(s: Scenario, c: Compare) -> None:
    for view in filter(validated, s.produces()):
        for i, record in enumerate(view.batch.records):
            if exempt(s, record.timestamp) or not overflows(s, view.now, record.timestamp):
                continue
            c.eq(
                view.index,
                f"record {i} (ts={record.timestamp}, now={view.now}) rejected",
                i in flagged(view.expected),
                i in flagged(view.observed),
            )
        if bounds_overflow(s, view):
            c.eq(
                view.index,
                "record error texts (bounds overflow)",
                view.expected.record_errors,
                view.observed.record_errors,
            )


def bounds_overflow(s: Scenario, view: ProduceView) -> bool:
    before, after = limits(s, view)
    return not (fits_int64(view.now - before) and fits_int64(view.now + after))


@check("KIP-937.default-allows-minimum")
def minimum_timestamp_conformance(s: Scenario, c: Compare) -> None:
    for view in filter(validated, s.produces()):
        for i, record in enumerate(view.batch.records):
            if record.timestamp == INT64_MIN:
                c.eq(
                    view.index,
                    f"record {i} (Long.MIN_VALUE) rejected",
                    i in flagged(view.expected),
                    i in flagged(view.observed),
                )


@check("KIP-937.per-record-validation")
def per_record_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if view.batch.control or (view.honest_header and view.batch.timestamp_type is CT):
            continue
        c.eq(
            view.index,
            "rejected record indices (header max or attribute disagrees with records)",
            flagged(view.expected),
            flagged(view.observed),
        )


@check("KIP-937.whole-batch-rejection")
def whole_batch_conformance(s: Scenario, c: Compare) -> None:
    """A batch the implementation refuses leaves nothing behind: no base offset, no stored record."""
    refused = [v for v in s.produces() if v.observed.error_code != 0]
    for view in refused:
        c.eq(view.index, "base_offset of a refused batch", -1, view.observed.base_offset)
    if refused and not any(True for _ in s.ops_of(RetentionPass, RetentionResult)):
        for i, topic, partition, _exp, obs in s.last_fetches():
            kept = sum(
                len(v.batch.records)
                for v in s.produces()
                if v.observed.error_code == 0 and (v.op.topic, v.op.partition) == (topic, partition)
            )
            c.eq(i, f"records stored on {topic!r} = records of accepted batches", kept, count(obs))


def both_refused(view: ProduceView) -> bool:
    return view.expected.error_code != 0 and view.observed.error_code != 0


@check("KIP-937.error-code-32")
def error_code_conformance(s: Scenario, c: Compare) -> None:
    """Whether to refuse is the bounds' business; how to refuse is this clause's."""
    for view in filter(both_refused, s.produces()):
        c.eq(view.index, "error_code of a refused batch", view.expected.error_code, view.observed.error_code)


@check("KIP-937.batch-error-message")
def batch_message_conformance(s: Scenario, c: Compare) -> None:
    for view in filter(both_refused, s.produces()):
        if view.expected.error_code == INVALID_TIMESTAMP:
            c.eq(view.index, "error_message", view.expected.error_message, view.observed.error_message)


@check("KIP-937.record-error-message")
def record_message_conformance(s: Scenario, c: Compare) -> None:
    for view in s.produces():
        if bounds_overflow(s, view):
            continue
        observed = {e.batch_index: e.message for e in view.observed.record_errors}
        for error in view.expected.record_errors:
            if error.batch_index in observed:
                c.eq(
                    view.index,
                    f"record_errors[{error.batch_index}].message",
                    error.message,
                    observed[error.batch_index],
                )


@check("KIP-937.validation-before-append")
def offsets_after_rejection_conformance(s: Scenario, c: Compare) -> None:
    rejected, agreed = False, True
    for view in s.produces():
        if rejected and agreed and view.expected.error_code == 0 and view.observed.error_code == 0:
            c.eq(view.index, "base_offset after a rejected batch", view.expected.base_offset, view.observed.base_offset)
        rejected = rejected or view.expected.error_code != 0
        agreed = agreed and (view.expected.error_code == 0) == (view.observed.error_code == 0)


@check("KIP-937.log-append-time-skips-validation")
def log_append_time_acceptance_conformance(s: Scenario, c: Compare) -> None:
    """Whether a CreateTime batch on a LogAppendTime topic is refused as INVALID_TIMESTAMP: the validation this
    clause skips.  Any other refusal (a rebuild that throws on a negative timestamp) is KIP-228's to judge."""
    for view in s.produces():
        if view.on_log_append_time_topic and view.batch.timestamp_type is CT and not view.batch.control:
            expected, observed = (v.error_code == INVALID_TIMESTAMP for v in (view.expected, view.observed))
            c.eq(view.index, "refused as INVALID_TIMESTAMP on a LogAppendTime topic", expected, observed)


@check("KIP-937.future-timestamp-warning")
def warning_conformance(s: Scenario, c: Compare) -> None:
    """Every produce: a LogAppendTime topic validates nothing, so it warns of nothing either."""
    for view in s.produces():
        c.eq(view.index, "warnings", view.expected.warnings, view.observed.warnings)


@check("KIP-937.difference-deprecated")
def difference_config_conformance(s: Scenario, c: Compare) -> None:
    topic_config_conformance(s, c, "difference_max_ms")


@check("KIP-937.difference-removed")
def difference_config_removed_conformance(s: Scenario, c: Compare) -> None:
    topic_config_conformance(s, c, "difference_max_ms")


@check("KIP-937.limits-non-negative")
def limit_range_conformance(s: Scenario, c: Compare) -> None:
    """The bounds the profile has (a removed difference.max.ms is KIP-937.difference-removed's)."""
    limits = ("before_max_ms", "after_max_ms") + (("difference_max_ms",) if has_difference_config(s) else ())
    refused_as_invalid(s, c, limits)


def has_difference_config(s: Scenario) -> bool:
    return CONFIG_NAMES["difference_max_ms"] in s.profile.configs


def read_exempt(s: Scenario, view: ProduceView, ts: int) -> bool:
    """What the bounds say nothing of: the sentinel, a record whose arithmetic wraps (KIP-937.int64-wraparound),
    and, where Kafka validates a LogAppendTime-typed batch by its header (3.6+), that batch's own records."""
    typed_lat = view.batch.timestamp_type is not CT and s.profile.lat_batch_check == "when-exempt"
    return exempt(s, ts) or overflows(s, view.now, ts) or typed_lat


@check("KIP-937.read-within-bounds")
def read_within_bounds_conformance(s: Scenario, c: Compare) -> None:
    """Every record read on a CreateTime topic, against the clock of the append that wrote it."""
    spans = appended_by(s)
    for i, op, obs in fetches(s):
        config = s.config_of(op.topic)
        if config is None or config.timestamp_type is not CT:
            continue
        for offset, ts, _batch in records(obs):
            view = writer(spans.get(where(op), ()), offset, i)
            if view is None:
                c.holds(i, f"record {offset} read (ts={ts}) was written by an accepted append", False, ts)
                continue
            if read_exempt(s, view, ts):
                continue
            before, after = limits(s, view)
            c.holds(
                i,
                f"record {offset} read (ts={ts}) within [now - {before}, now + {after}] of its append "
                f"(now={view.now}, op #{view.index})",
                view.now - before <= ts <= view.now + after,
                ts,
            )
