"""KIP-33: the time index and ListOffsets by timestamp."""

from __future__ import annotations

from collections.abc import Callable

from ktc.checks.common import LAT
from ktc.checks.reads import lookups, same_state, segment_of
from ktc.checks.registry import Compare, check
from ktc.checks.scenario import Scenario
from ktc.reference.configs import rebuilds
from ktc.reference.types import (
    LIST_OFFSETS_MAX_VERSION,
    DescribeLog,
    DescribeLogResult,
    ListOffsets,
    ListOffsetsResult,
    RetentionPass,
    RetentionResult,
    SegmentInfo,
    StoredBatch,
)


@check("KIP-33.time-index-running-max")
def time_index_conformance(s: Scenario, c: Compare) -> None:
    """Each entry is one the model has (the running max at that offset), in order; a rolled segment's
    index ends with its max.  The index is sparse: which entries it keeps is not judged (an entry every
    index.interval.bytes; even at 0 Kafka's first append to a segment adds none).  Each segment's
    largest timestamp, which a complete index ends with, is judged here too."""
    for i, _op, exp, obs in s.ops_of(DescribeLog, DescribeLogResult):
        c.eq(
            i,
            "largest timestamp per segment",
            [g.max_timestamp for g in exp.segments],
            [g.max_timestamp for g in obs.segments],
        )
        c.eq(
            i,
            "time index per segment",
            [kept_entries(e, o, rolled) for e, o, rolled in paired(exp, obs)],
            [list(g.time_index) for g in obs.segments],
        )


def paired(first: DescribeLogResult, second: DescribeLogResult) -> list[tuple[SegmentInfo, SegmentInfo | None, bool]]:
    """(segment of first, same-base segment of second or None, whether it is rolled), in first's order."""
    bases = {g.base_offset: g for g in second.segments}
    last = len(first.segments) - 1
    return [(g, bases.get(g.base_offset), n < last) for n, g in enumerate(first.segments)]


def kept_entries(expected: SegmentInfo, observed: SegmentInfo | None, rolled: bool) -> list[tuple[int, int]]:
    """The model's entries that the observed index kept, and a rolled segment's last entry."""
    seen = set(observed.time_index) if observed is not None else set()
    final = expected.time_index[-1:] if rolled else ()
    return [e for e in expected.time_index if e in seen or e in final]


@check("KIP-33.time-index-strictly-increasing")
def time_index_order_conformance(s: Scenario, c: Compare) -> None:
    for i, _op, _exp, obs in s.ops_of(DescribeLog, DescribeLogResult):
        for g in obs.segments:
            times = [ts for ts, _ in g.time_index]
            c.holds(
                i,
                f"time index of segment {g.base_offset} strictly increasing",
                all(a < b for a, b in zip(times, times[1:])),
                g.time_index,
            )


@check("KIP-33.time-index-skips-no-timestamp")
def time_index_negative_conformance(s: Scenario, c: Compare) -> None:
    for i, _op, _exp, obs in s.ops_of(DescribeLog, DescribeLogResult):
        for g in obs.segments:
            c.holds(
                i, f"no entry <= -1 in segment {g.base_offset}", all(ts >= 0 for ts, _ in g.time_index), g.time_index
            )


def list_offsets_where(
    s: Scenario, c: Compare, keep: Callable[[ListOffsets, ListOffsetsResult], bool], what: str
) -> None:
    for i, op, exp, obs in s.ops_of(ListOffsets, ListOffsetsResult):
        if keep(op, exp):
            c.eq(
                i,
                f"{what} (target {op.target})",
                (exp.error_code, exp.offset, exp.timestamp),
                (obs.error_code, obs.offset, obs.timestamp),
            )


@check("KIP-33.list-offsets-first-offset-at-or-after")
def list_offsets_found_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: op.target >= 0 and exp.offset >= 0, "ListOffsets by timestamp")


@check("KIP-33.list-offsets-not-found")
def list_offsets_missing_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: op.target >= 0 and exp.offset < 0, "ListOffsets with no match")


@check("KIP-33.list-offsets-first-segment-only")
def list_offsets_segments_conformance(s: Scenario, c: Compare) -> None:
    rolled = any(v.expected.rolled for v in s.produces()) or any(
        r.deleted_base_offsets for *_, r, _o in s.ops_of(RetentionPass, RetentionResult)
    )
    list_offsets_where(s, c, lambda op, exp: rolled and op.target >= 0, "ListOffsets over several segments")


# Kafka 3.9+'s timestampMinSupportedVersion: the request version each special target needs.  Which clause
# an answer belongs to follows from the request alone; what the answer should be is the profile's business.
SPECIAL = {
    -1: ("latest", 1),
    -2: ("earliest", 1),
    -3: ("max", 7),
    -4: ("earliest-local", 8),
    -5: ("latest-tiered", 9),
    -6: ("earliest-pending-upload", 11),
}


def target_kind(op: ListOffsets) -> str:
    """'timestamp' (>= 0), a special target's name, or 'unknown' (not special, or below its version)."""
    if op.target >= 0:
        return "timestamp"
    name, least = SPECIAL.get(op.target, ("unknown", 0))
    return "unknown" if op.version is not None and op.version < least else name


CLAUSE_OF_KIND = {
    "latest": "latest",
    "earliest": "earliest",
    "max": "max-timestamp(-compressed, -log-append-time)",
    "earliest-local": "earliest-local",
    "latest-tiered": "latest-tiered",
    "earliest-pending-upload": "earliest-pending-upload",
    "unknown": "unknown-negative-target",
    "timestamp": "first-offset-at-or-after / not-found / first-segment-only",
}


def coverage_lines(newest_by_profile: dict[str, int], top: int = LIST_OFFSETS_MAX_VERSION) -> list[str]:
    """Which KIP-33.list-offsets-* clause judges each target at each request version, and the newest
    version each profile's broker answers (ktc sends v1 to ``top``)."""
    probes = [("target >= 0", 0), *((f"target {t}", t) for t in SPECIAL), ("other negative", -7)]
    lines = [f"ListOffsets coverage (KIP-33.list-offsets-*; request v1-v{top}, a broker answers up to its newest):"]
    for label, target in probes:
        kinds = [target_kind(ListOffsets("t", target, 0, v)) for v in range(1, top + 1)]
        runs = [(k, kinds.index(k) + 1, len(kinds) - kinds[::-1].index(k)) for k in dict.fromkeys(kinds)]
        lines.append(f"  {label:<15} " + "; ".join(f"{versions(a, b)}: {CLAUSE_OF_KIND[k]}" for k, a, b in runs))
    lines.append("  newest version per profile: " + ", ".join(f"{p} v{v}" for p, v in newest_by_profile.items()))
    return lines


def versions(low: int, high: int) -> str:
    return f"v{low}" if low == high else f"v{low}-v{high}"


@check("KIP-33.list-offsets-latest")
def list_offsets_latest_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: target_kind(op) == "latest", "ListOffsets LATEST")


@check("KIP-33.list-offsets-earliest")
def list_offsets_earliest_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: target_kind(op) == "earliest", "ListOffsets EARLIEST")


@check("KIP-33.list-offsets-earliest-local")
def list_offsets_earliest_local_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: target_kind(op) == "earliest-local", "ListOffsets EARLIEST_LOCAL")


@check("KIP-33.list-offsets-latest-tiered")
def list_offsets_latest_tiered_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: target_kind(op) == "latest-tiered", "ListOffsets LATEST_TIERED")


@check("KIP-33.list-offsets-earliest-pending-upload")
def list_offsets_earliest_pending_upload_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(
        s, c, lambda op, exp: target_kind(op) == "earliest-pending-upload", "ListOffsets EARLIEST_PENDING_UPLOAD"
    )


@check("KIP-33.list-offsets-unknown-negative-target")
def list_offsets_unknown_target_conformance(s: Scenario, c: Compare) -> None:
    list_offsets_where(s, c, lambda op, exp: target_kind(op) == "unknown", "ListOffsets of an unknown negative")


@check("KIP-33.list-offsets-max-timestamp")
def list_offsets_max_conformance(s: Scenario, c: Compare) -> None:
    max_timestamp_where(s, c, "uncompressed")


@check("KIP-33.list-offsets-max-timestamp-compressed")
def list_offsets_max_compressed_conformance(s: Scenario, c: Compare) -> None:
    max_timestamp_where(s, c, "compressed")


@check("KIP-33.list-offsets-max-timestamp-log-append-time")
def list_offsets_max_log_append_time_conformance(s: Scenario, c: Compare) -> None:
    max_timestamp_where(s, c, "log-append-time")


def max_timestamp_where(s: Scenario, c: Compare, kind: str) -> None:
    """MAX_TIMESTAMP answers whose maximum sits in a batch written ``kind``-wise (see ``holder_kind``)."""
    list_offsets_where(
        s,
        c,
        lambda op, exp: target_kind(op) == "max" and holder_kind(s, op, exp) == kind,
        f"ListOffsets MAX_TIMESTAMP, max in a {kind} batch",
    )


def holder_kind(s: Scenario, op: ListOffsets, exp: ListOffsetsResult) -> str:
    """How the batch holding the expected answer was written: 'log-append-time' (the topic's type),
    'compressed' (a codec, or rebuilt into the topic's), else 'uncompressed' (also when nothing is found)."""
    view = next(
        (
            v
            for v in s.produces()
            if v.op.topic == op.topic
            and v.op.partition == op.partition
            and v.expected.error_code == 0
            and 0 <= exp.offset - v.expected.base_offset < len(v.batch.records)
        ),
        None,
    )
    if view is None:
        return "uncompressed"
    if view.on_log_append_time_topic:
        return "log-append-time"
    return "compressed" if view.batch.codec != "none" or rebuilds(view.config, "none") else "uncompressed"


@check("KIP-33.read-max-timestamp-holder")
def read_max_holder_conformance(s: Scenario, c: Compare) -> None:
    for i, op, obs, read in lookups(s, lambda op: target_kind(op) == "max"):
        top = max((ts for _off, ts, _b in read), default=-1)
        if top >= 0 and not (s.profile.lat_batch_check == "when-exempt" and client_log_append_time(s, op)):
            held = next((ts for off, ts, _b in read if off == obs.offset), None)
            c.holds(
                i,
                f"MAX_TIMESTAMP's offset holds a record read with the log's max {top}",
                held == top == obs.timestamp,
                (obs.offset, obs.timestamp, held),
            )


def client_log_append_time(s: Scenario, op: ListOffsets) -> bool:
    """Whether the partition was sent a LogAppendTime-typed batch while its topic was CreateTime: Kafka 3.6+
    stores it as a CreateTime batch with the header max it was sent and its records' own timestamps, so its
    MAX_TIMESTAMP names a record a consumer may read below the max, or none (KIP-33.read-max-timestamp-holder's
    deviation; findings/lat-batch-on-createtime-topic)."""
    return any(
        v.op.topic == op.topic
        and v.op.partition == op.partition
        and v.batch.timestamp_type is LAT
        and not v.on_log_append_time_topic
        for v in s.produces()
    )


def scope(s: Scenario, i: int, offset: int, batch: StoredBatch) -> tuple[int, int]:
    """The offsets before ``offset`` that a lookup answering it must have found nothing in: the whole log
    (kip), its segment (from a DescribeLog of the same state), or at least its batch."""
    if s.profile.list_offsets_scope == "all-segments":
        return -1, offset
    base = segment_of(s, i, offset)
    return (base if base is not None else batch.base_offset), offset


@check("KIP-33.read-lookup-first-match")
def read_lookup_first_match_conformance(s: Scenario, c: Compare) -> None:
    for i, op, obs, read in lookups(s, lambda op: target_kind(op) == "timestamp"):
        hit = next(((ts, b) for off, ts, b in read if off == obs.offset), None)
        if obs.offset < 0:
            if s.profile.list_offsets_scope == "all-segments":
                c.holds(
                    i,
                    f"no record read at or after target {op.target}",
                    all(ts < op.target for _o, ts, _b in read),
                    obs.offset,
                )
            continue
        c.holds(
            i,
            f"the answered offset {obs.offset} holds a record read at or after target {op.target}",
            hit is not None and hit[0] == obs.timestamp >= op.target,
            (obs.offset, obs.timestamp, hit and hit[0]),
        )
        if hit is not None:
            low, high = scope(s, i, obs.offset, hit[1])
            earlier = [off for off, ts, _b in read if low <= off < high and ts >= op.target]
            c.holds(
                i,
                f"no record before offset {obs.offset} in its scope at or after target {op.target}",
                not earlier,
                earlier,
            )


@check("KIP-33.read-log-start")
def read_log_start_conformance(s: Scenario, c: Compare) -> None:
    for i, op, obs, read in lookups(s, lambda op: True):
        if read:
            start = read[0][0]
            if target_kind(op) == "earliest":
                c.holds(i, f"EARLIEST answers the first offset read, {start}", obs.offset == start, obs.offset)
            elif obs.offset >= 0:
                c.holds(
                    i,
                    f"ListOffsets (target {op.target}) answers no offset below the log start {start}",
                    obs.offset >= start,
                    obs.offset,
                )
        elif target_kind(op) == "earliest":
            latest = same_state_latest(s, i)
            if latest is not None:
                c.holds(
                    i, f"EARLIEST of a log that reads empty answers its end {latest}", obs.offset == latest, obs.offset
                )


def same_state_latest(s: Scenario, i: int) -> int | None:
    """The answer of a LATEST ListOffsets of op ``i``'s partition and log state, if the history asks one."""
    paired = same_state(s, i, ListOffsets, ListOffsetsResult, lambda op: target_kind(op) == "latest")
    return None if paired is None else paired[1].offset
