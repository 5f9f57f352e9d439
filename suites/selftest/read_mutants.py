"""The read-side mutants of the catalogue (mutants.py lists every mutant; this module holds those that break
an invariant over reads, suites/stateful/test_read_invariants.py): each is the reference Model with one read
rule overridden.  A read cache is the plausible home of the first three: it serves a re-read of a partition,
so a history that reads each partition once, at its end, cannot see them, whatever clause it cites.

Mutants import the reference's rule logic on purpose; an implementation under test must not.
"""

from __future__ import annotations

from dataclasses import replace

from ktc.reference.model import Model
from ktc.reference.types import INVALID_TIMESTAMP, ListOffsetsResult, StoredBatch, StoredRecord, TimestampType

LAT = TimestampType.LOG_APPEND_TIME


def rereads(partition) -> int:
    """How often this partition has been fetched, this one included (state of the mutant's read cache)."""
    partition.reads = getattr(partition, "reads", 0) + 1
    return partition.reads


def restamped(result, stamp):
    """The Fetch result with each record's timestamp replaced by ``stamp(batch, record)``."""
    return replace(
        result,
        batches=tuple(
            replace(b, records=tuple(replace(r, timestamp=stamp(b, r)) for r in b.records)) for b in result.batches
        ),
    )


class RereadServesRefusedBatch(Model):
    """A read cache filled before validation: a re-read also serves the partition's last refused batch."""

    def op_Produce(self, cluster, op):
        result = super().op_Produce(cluster, op)
        partition = self.partition(cluster, op.topic, op.partition)
        if partition is not None and result.error_code == INVALID_TIMESTAMP:
            partition.refused = op.batch
        return result

    def op_Fetch(self, cluster, op):
        result, partition = super().op_Fetch(cluster, op), self.partition(cluster, op.topic, op.partition)
        refused = getattr(partition, "refused", None)
        if partition is None or rereads(partition) < 2 or refused is None:
            return result
        base = partition.next_offset
        ghost = StoredBatch(
            base,
            TimestampType.CREATE_TIME,
            max(r.timestamp for r in refused.records),
            tuple(StoredRecord(base + i, r.timestamp) for i, r in enumerate(refused.records)),
        )
        return replace(result, batches=(*result.batches, ghost))


class RereadStampsReadTime(Model):
    """A re-read of a LogAppendTime partition stamps its records with the leader's clock at the read."""

    def op_Fetch(self, cluster, op):
        result, partition = super().op_Fetch(cluster, op), self.partition(cluster, op.topic, op.partition)
        if partition is None or rereads(partition) < 2 or cluster.topics[op.topic].config.timestamp_type is not LAT:
            return result
        return restamped(result, lambda b, r: cluster.now(partition.leader))


class RereadServesBatchMax(Model):
    """A re-read loses a CreateTime batch's type: every record reads as the batch's MaxTimestamp."""

    def op_Fetch(self, cluster, op):
        result, partition = super().op_Fetch(cluster, op), self.partition(cluster, op.topic, op.partition)
        if partition is None or rereads(partition) < 2 or cluster.topics[op.topic].config.timestamp_type is LAT:
            return result
        return restamped(result, lambda b, r: b.max_timestamp)


class MaxTimestampAtLatestBatch(Model):
    """MAX_TIMESTAMP answers the max at the latest batch's first offset (the active segment's last time index
    entry taken for the log's max)."""

    def max_timestamp_offset(self, partition):
        found = super().max_timestamp_offset(partition)
        latest = [b for s in partition.segments for b in s.batches]
        return found if found.offset < 0 or not latest else ListOffsetsResult(latest[-1].base_offset, found.timestamp)


class LookupAnswersBatchBase(Model):
    """A timestamp lookup answers the first offset of the batch holding the first match (the offset
    index's granularity), with the match's timestamp."""

    def offset_for_timestamp(self, partition, target):
        found = super().offset_for_timestamp(partition, target)
        batch = next(
            (b for s in partition.segments for b in s.batches if any(r.offset == found.offset for r in b.records)), None
        )
        return found if batch is None else ListOffsetsResult(batch.base_offset, found.timestamp)


class EarliestIgnoresRetention(Model):
    """EARLIEST answers the partition's first offset ever, 0, after retention moved the log start too."""

    def special_offset(self, partition, target):
        found = super().special_offset(partition, target)
        return ListOffsetsResult(0, -1) if target == -2 else found
