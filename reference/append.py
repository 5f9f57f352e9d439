"""The append path: per-record validation, whole-batch rejection, LogAppendTime, batch max.

Each method is one rule, named after what it decides, so a mutant can override exactly one.
"""

from __future__ import annotations

from ktc.specs.profiles import Profile

from . import configs, int64
from .types import (
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    NO_TIMESTAMP,
    ONE_HOUR_MS,
    UNKNOWN_SERVER_ERROR,
    Batch,
    RecordError,
    StoredRecord,
    TimestampType,
    TopicConfig,
    header_max,
)

BATCH_REJECTED = "One or more records have been rejected due to invalid timestamp"
Refusal = tuple[int, str | None, tuple[RecordError, ...]]  # a refused batch: error code, message, record errors
LAT = TimestampType.LOG_APPEND_TIME


class AppendRules:
    profile: Profile
    sentinel: int

    # -- what a record's timestamp means ---------------------------------------------------
    def is_no_timestamp(self, ts: int, batch: Batch) -> bool:
        """KIP-228: the sentinel; under the Long.MIN draft an old-style -1 counts too."""
        legacy = self.sentinel != NO_TIMESTAMP and ts == NO_TIMESTAMP and not batch.timestamp_extended
        return ts == self.sentinel or legacy

    def seen_timestamps(self, batch: Batch) -> list[int]:
        """Timestamps as the broker reads them: a LogAppendTime-typed batch reads its header max (Kafka), or,
        where the profile does not check that attribute (kip), each record its own."""
        if batch.timestamp_type is LAT and self.profile.lat_batch_check != "never":
            return [header_max(batch)] * len(batch.records)
        return [r.timestamp for r in batch.records]

    # -- validation -----------------------------------------------------------------------
    def limits(self, config: TopicConfig) -> tuple[int, int]:
        return configs.effective_limits(config, self.profile)

    def out_of_range(self, ts: int, now: int, before: int, after: int) -> bool:
        wrapping = self.profile.wrapping
        if self.profile.validation == "abs-difference":
            diff = int64.sub(ts, now, wrapping)
            return (int64.wrap(abs(diff)) if wrapping else abs(diff)) > before
        diff = int64.sub(now, ts, wrapping)
        return diff > before or int64.neg(diff, wrapping) > after

    def out_of_range_message(self, ts: int, index: int, now: int, before: int, after: int) -> str:
        low = int64.sub(now, before, self.profile.wrapping)
        high = int64.add(now, after, self.profile.wrapping)
        return (
            f"Timestamp {ts} of message with offset {index} is out of range. "
            f"The timestamp should be within [{low}, {high}]"
        )

    def wrong_type_message(self, index: int, ts: int, batch: Batch, config: TopicConfig) -> str:
        """Kafka names the record by its class: a compressed batch kept in place (no rebuild) is read without
        its keys and values (LogValidator's skipKeyValueIterator), a ``PartialDefaultRecord``, which prints a
        null key as its wire size, -1; a ``DefaultRecord`` prints it as 0 bytes."""
        record = batch.records[index]
        partial = batch.codec != "none" and not configs.rebuilds(config, batch.codec)
        kind = "PartialDefaultRecord" if partial else "DefaultRecord"
        key = (-1 if partial else 0) if record.key is None else len(record.key)
        return (
            f"Invalid timestamp type in message {kind}(offset={index}, timestamp={ts}, "
            f"key={key} bytes, value={len(record.value)} bytes). "
            "Producer should not set timestamp type to LogAppendTime."
        )

    def record_error(self, index: int, ts: int, batch: Batch, config: TopicConfig, now: int) -> str | None:
        """LogValidator.validateTimestamp for one record: an error text or None."""
        checked = config.timestamp_type is TimestampType.CREATE_TIME and not self.is_no_timestamp(ts, batch)
        if checked:
            before, after = self.limits(config)
            if self.out_of_range(ts, now, before, after):
                return self.out_of_range_message(ts, index, now, before, after)
            if self.profile.lat_batch_check != "after-range-check":
                return None
        typed_lat = batch.timestamp_type is LAT and self.profile.lat_batch_check != "never"
        return self.wrong_type_message(index, ts, batch, config) if typed_lat else None

    def record_errors(self, batch: Batch, config: TopicConfig, now: int) -> tuple[RecordError, ...]:
        seen = self.seen_timestamps(batch)
        found = ((i, self.record_error(i, ts, batch, config, now)) for i, ts in enumerate(seen))
        return tuple(RecordError(i, text) for i, text in found if text is not None)

    def batch_error(self, batch: Batch, config: TopicConfig, now: int) -> Refusal | None:
        """(error_code, error_message, record_errors) when the whole batch is refused, else None."""
        if batch.control:
            return INVALID_RECORD, None, ()
        errors = self.record_errors(batch, config, now)
        if errors:
            return INVALID_TIMESTAMP, BATCH_REJECTED, errors
        if self.rebuild_fails(batch, config):
            return UNKNOWN_SERVER_ERROR, None, ()
        return None

    def rebuild_fails(self, batch: Batch, config: TopicConfig) -> bool:
        """Kafka's MemoryRecordsBuilder refuses negative timestamps other than -1 when it rebuilds."""
        if self.profile.negative_timestamps != "rebuild-fails" or not configs.rebuilds(config, batch.codec):
            return False
        return any(ts < 0 and ts != NO_TIMESTAMP for ts in self.seen_timestamps(batch))

    # -- what is stored -------------------------------------------------------------------
    def log_append_time(self, now: int, last: int | None) -> int:
        if self.profile.log_append_time == "max-last-appended" and last is not None:
            return max(last, now)
        return now

    def stored_create_times(self, batch: Batch, config: TopicConfig) -> list[int]:
        """CreateTimes as stored: rebuilt batches keep what the broker read; the sentinel is normalised."""
        own = [r.timestamp for r in batch.records]
        kept = self.seen_timestamps(batch) if configs.rebuilds(config, batch.codec) else own
        return [self.sentinel if self.is_no_timestamp(ts, batch) else ts for ts in kept]

    def stored_records(
        self, batch: Batch, config: TopicConfig, base_offset: int, lat: int | None
    ) -> tuple[StoredRecord, ...]:
        create_times = self.stored_create_times(batch, config)
        if lat is None:  # a CreateTime topic: the one timestamp is the CreateTime
            return tuple(StoredRecord(base_offset + i, ct) for i, ct in enumerate(create_times))
        dual = self.profile.dual_timestamps  # KIP-870: the CreateTime kept next to the LogAppendTime
        return tuple(StoredRecord(base_offset + i, lat, ct if dual else None) for i, ct in enumerate(create_times))

    def batch_max(self, lat: int | None, batch: Batch) -> int:
        """The MaxTimestamp header the broker writes: recomputed from what it read, never trusted."""
        if lat is not None:
            return lat
        stamps = [ts for ts in self.read_create_times(batch) if ts != self.sentinel]
        if self.profile.batch_max_floor == "minus-one":
            return max([NO_TIMESTAMP, *stamps])
        return max(stamps, default=self.sentinel)

    def warnings(self, batch: Batch, config: TopicConfig, now: int) -> tuple[str, ...]:
        """KIP-937's promised WARN for CreateTimes more than one hour ahead of the broker."""
        if not self.profile.future_warning or config.timestamp_type is LAT:
            return ()
        return tuple(
            f"future-timestamp:{i}"
            for i, r in enumerate(batch.records)
            if not self.is_no_timestamp(r.timestamp, batch) and r.timestamp - now > ONE_HOUR_MS
        )

    def read_create_times(self, batch: Batch) -> list[int]:
        """Each record's CreateTime as the broker read it, the sentinel normalised: a LogAppendTime-typed
        batch reads its header max even where the records keep their own (not rebuilt, 3.6+)."""
        return [self.sentinel if self.is_no_timestamp(ts, batch) else ts for ts in self.seen_timestamps(batch)]
