"""Segments, rolling, retention, the time index and ListOffsets: a per-partition state machine.

These rules are sequential (a roll depends on the segment the previous roll opened), so they
run in ``applyInArrow`` over rows of one partition in arrival order: produce outcomes from the
declarative stage, and events (Fetch, ListOffsets, RetentionPass, DescribeLog).  Each call gets
a bucket of many partitions.  Output: one JSON payload per operation.
"""

from __future__ import annotations

import json
from itertools import groupby

import pyarrow as pa

CLIENT_MAX_VERSION = 11  # ListOffsets: a request without a version goes out at min(broker's newest, this)
OUTPUT = pa.schema([("scenario", pa.int64()), ("batch_id", pa.int32()), ("payload", pa.string())])


def jsub(a: int, b: int, wrapping: bool) -> int:
    d = a - b
    return (d + 2**63) % 2**64 - 2**63 if wrapping else d


class Segment:
    def __init__(self, base: int, clocks: list[int]):
        self.base, self.created, self.mtime = base, list(clocks), list(clocks)
        self.batches: list[dict] = []
        self.max = None
        self.max_offset = -1  # what MAX_TIMESTAMP answered before 3.8
        self.index: list[list[int]] = []
        self.roll_base = None
        self.event_max = None


class PartitionLog:
    def __init__(self, row: dict):
        self.p = row  # profile switches and topic config, constant per partition
        self.segments = [Segment(0, row["created_clocks"])]
        self.next_offset = 0
        self.max_event = None

    # -- produce ------------------------------------------------------------------------------
    def produce(self, row: dict) -> dict:
        accepted = row["error_code"] == 0
        rolled = accepted and self.should_roll(row)
        if rolled:
            self.segments.append(Segment(self.next_offset, row["clocks"]))
        if accepted:
            self.write(row)
        return {**response(row), "rolled": rolled, "log_start_offset": self.segments[0].base}

    def should_roll(self, row: dict) -> bool:
        active = self.segments[-1]
        if not active.batches:
            return False
        wrapping, leader = self.p["arithmetic"] == "wrapping", row["broker_id"]
        if active.roll_base is None:
            waited = jsub(row["broker_now_ms"], active.created[leader], wrapping)
        else:
            waited = jsub(row["batch_max"], active.roll_base, wrapping)
        segment_ms = self.p["segment_ms"] if self.p["segment_ms"] is not None else 604_800_000
        return waited > segment_ms

    def write(self, row: dict) -> None:
        seg, stored = self.segments[-1], list(row["stored"])
        offsets = list(range(row["base_offset"], row["base_offset"] + len(stored)))
        if not seg.batches:
            seg.roll_base = self.first_roll_base(row, stored)
        seg.batches.append(
            {
                "base": row["base_offset"],
                "max": row["batch_max"],
                "offsets": offsets,
                "stored": stored,
                "creates": [c["create_time"] for c in row["creates"]],
                "type": row["topic_type"],
            }
        )
        seg.mtime = list(row["clocks"])
        self.index(seg, row["batch_max"], self.recorded_offset(row, offsets, stored))
        self.event_time(seg, [c["create_time"] for c in row["creates"]])
        self.next_offset = offsets[-1] + 1

    def first_roll_base(self, row: dict, stored: list[int]):
        if self.p["roll_basis"] == "first-record":
            return None if stored[0] == self.p["sentinel"] else stored[0]
        return row["batch_max"] if row["batch_max"] >= 0 else None

    def index(self, seg: Segment, top: int, recorded: int) -> None:
        counts = top >= 0 if self.p["batch_max_floor"] == "minus-one" else top != self.p["sentinel"]
        if counts and (seg.max is None or top > seg.max):
            seg.max, seg.max_offset = top, recorded
            seg.index.append([top, recorded])  # LogSegment indexes the offset LogValidator gave with the max

    def recorded_offset(self, row: dict, offsets: list[int], stored: list[int]) -> int:
        """LogValidator's offsetOfMaxTimestamp before 3.8: record-level only for an uncompressed CreateTime
        batch kept as sent (3.0-3.6); the last offset otherwise, and always on 3.7."""
        record_level = (
            self.p["max_timestamp_offset"] == "record-level-in-place"
            and row["codec"] == "none"
            and not row["rebuild"]
            and row["topic_type"] == "CreateTime"
        )
        read = [row["batch_max"]] * len(stored) if row["timestampType"] == 1 else stored  # LAT-typed: header max
        return offsets[read.index(max(read))] if record_level else offsets[-1]

    def event_time(self, seg: Segment, creates) -> None:
        if not self.p["dual_timestamps"]:
            return
        times = [t for t in creates if t != self.p["sentinel"]]
        if times:
            seg.event_max = max([*times] + ([seg.event_max] if seg.event_max is not None else []))
            self.max_event = max([*times] + ([self.max_event] if self.max_event is not None else []))

    # -- retention ----------------------------------------------------------------------------
    def retention(self, row: dict) -> dict:
        leader, now = row["broker_id"], row["clocks"][row["broker_id"]]
        doomed = 0
        for seg in self.segments:
            if not seg.batches or not self.expired(seg, now, leader):
                break
            doomed += 1
        deleted = [s.base for s in self.segments[:doomed]]
        if doomed == len(self.segments):
            self.segments.append(Segment(self.next_offset, row["clocks"]))
        del self.segments[:doomed]
        return {"deleted": deleted, "log_start_offset": self.segments[0].base}

    def expired(self, seg: Segment, now: int, leader: int) -> bool:
        limit = self.p["retention_ms"] if self.p["retention_ms"] is not None else 604_800_000
        by_time = limit >= 0 and jsub(now, self.basis(seg, leader), self.p["arithmetic"] == "wrapping") > limit
        return by_time or self.event_expired(seg)

    def basis(self, seg: Segment, leader: int) -> int:
        if self.p["retention_basis"] == "last-record":
            last = seg.batches[-1]["stored"][-1]
            return seg.mtime[leader] if last == self.p["sentinel"] else last
        return seg.max if seg.max is not None and seg.max >= 0 else seg.mtime[leader]

    def event_expired(self, seg: Segment) -> bool:
        limit = self.p["retention_max_eventtime_ms"]
        if not self.p["event_time_retention"] or limit is None or seg.event_max is None:
            return False
        return self.max_event - seg.event_max > limit

    # -- reads ----------------------------------------------------------------------------------
    def fetch(self, row: dict) -> dict:
        batches = [b for s in self.segments for b in s.batches]
        return {
            "batches": [
                {
                    "base": b["base"],
                    "type": b["type"],
                    "max": b["max"],
                    "records": [
                        [o, t, c if self.keeps_both(b) else None]
                        for o, t, c in zip(b["offsets"], b["stored"], b["creates"])
                    ],
                }
                for b in batches
            ]
        }

    def keeps_both(self, batch: dict) -> bool:
        """KIP-870's second timestamp: the CreateTime under a LogAppendTime (a CreateTime topic has one)."""
        return self.p["dual_timestamps"] and batch["type"] == "LogAppendTime"

    def describe(self, row: dict) -> dict:
        ends = [s.base for s in self.segments[1:]] + [self.next_offset]
        return {
            "segments": [[s.base, end, -1 if s.max is None else s.max, s.index] for s, end in zip(self.segments, ends)]
        }

    def list_offsets(self, row: dict) -> dict:
        target = row["target"]
        if target < 0 and not self.special(target, row["version"]):
            if self.p["unknown_negative_target"] == "unsupported-version":
                return {"offset": -1, "timestamp": -1, "error_code": 35}
            return self.at_or_after(target, row["broker_id"])
        if target == -3:
            return self.max_timestamp()
        if target < 0:  # -1 log end, -2 and -4 log start (nothing is tiered), -5 and -6 none
            offset = {-1: self.next_offset, -2: self.segments[0].base, -4: self.segments[0].base}.get(target, -1)
            return {"offset": offset, "timestamp": -1}
        return self.at_or_after(target, row["broker_id"])

    def special(self, target: int, version) -> bool:
        """A target the broker knows, at a request version that has it (before 3.9 any version will do)."""
        version = min(self.p["list_offsets_max_version"], CLIENT_MAX_VERSION) if version is None else version
        least = dict((t, v) for t, v in self.p["list_offsets_targets"]).get(target)
        return least is not None and (self.p["unknown_negative_target"] == "search" or version >= least)

    def records(self, segments):
        return [(o, t) for s in segments for b in s.batches for o, t in zip(b["offsets"], b["stored"])]

    def at_or_after(self, target: int, leader: int) -> dict:
        segments = self.segments
        if self.p["list_offsets_scope"] == "first-segment":
            largest = lambda s: s.max if s.max is not None and s.max >= 0 else s.mtime[leader]
            segments = [next((s for s in self.segments if largest(s) >= target), None)]
            segments = [s for s in segments if s is not None]
        for offset, ts in self.records(segments):
            if ts >= target and (target < 0 or ts != self.p["sentinel"]):
                return {"offset": offset, "timestamp": ts}
        return {"offset": -1, "timestamp": -1}

    def max_timestamp(self) -> dict:
        if all(not s.batches for s in self.segments):
            return {"offset": -1, "timestamp": -1}
        if self.p["max_timestamp_offset"] != "first-record-with-max":  # up to 3.7: what the segment recorded
            best = max((s for s in self.segments if s.max is not None), key=lambda s: s.max, default=None)
            if best is not None:
                return {"offset": best.max_offset, "timestamp": best.max}
            first = self.segments[0].base  # an empty time index's last entry: (-1, the segment's base)
            return {"offset": first if first < self.next_offset else -1, "timestamp": -1}
        tops = [s.max for s in self.segments if s.max is not None]
        floor = -1 if self.p["batch_max_floor"] == "minus-one" else None
        top = max(tops) if tops else floor
        batch = next((b for s in self.segments for b in s.batches if top is not None and b["max"] == top), None)
        # only the first batch with that header max is searched (Kafka's find, then offsetOfMaxTimestamp)
        hit = next((o for o, t in zip(batch["offsets"], batch["stored"]) if t == top), None) if batch else None
        return {"offset": -1, "timestamp": -1} if hit is None else {"offset": hit, "timestamp": top}


def response(row: dict) -> dict:
    """The ProduceResponse v8 fields the declarative stage computed."""
    accepted = row["error_code"] == 0
    return {
        "error_code": row["error_code"],
        "error_message": REJECTED if row["error_code"] == 32 else None,
        "record_errors": [[e["offset"], e["record_error"]] for e in row["record_errors"] or []],
        "base_offset": row["base_offset"] if accepted else -1,
        "log_append_time": row["lat"] if accepted and row["lat"] is not None else -1,
        "warnings": [] if row["control"] else [w["warning"] for w in row["warnings"] or []],
    }


REJECTED = "One or more records have been rejected due to invalid timestamp"

HANDLERS = {
    "Produce": PartitionLog.produce,
    "RetentionPass": PartitionLog.retention,
    "Fetch": PartitionLog.fetch,
    "DescribeLog": PartitionLog.describe,
    "ListOffsets": PartitionLog.list_offsets,
}


def run_bucket(table: pa.Table) -> pa.Table:
    """applyInArrow body: every partition in the bucket, its ``Open`` row (batch_id -1: the constants its log
    is opened with) first, then its operations in arrival order."""
    rows = sorted(table.to_pylist(), key=lambda r: (r["scenario"], r["topic"], r["partition"], r["batch_id"]))
    out = {"scenario": [], "batch_id": [], "payload": []}
    for _key, group in groupby(rows, key=lambda r: (r["scenario"], r["topic"], r["partition"])):
        opening, *operations = group
        log = PartitionLog(opening)
        for row in operations:
            out["scenario"].append(row["scenario"])
            out["batch_id"].append(row["batch_id"])
            out["payload"].append(json.dumps(HANDLERS[row["kind"]](log, row)))
    return pa.table(out, schema=OUTPUT)
