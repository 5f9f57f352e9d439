"""Strategies for whole scenarios: histories of operations that ``reference.run`` interprets."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ktc.reference.types import Batch, History, TopicConfig

from . import _histories
from ._histories import BatchesArg
from ._repr import shown
from ._validation import check_int64, check_profile, check_range, check_sequence, check_strategy

__all__ = ["histories", "append_histories", "leader_change_histories"]


def histories(
    *,
    profile: str,
    brokers: int = 1,
    max_ops: int = 12,
    topic_configs: st.SearchStrategy[TopicConfig] | None = None,
    batches: BatchesArg = None,
    skew_ms: int = 0,
) -> st.SearchStrategy[History]:
    """Histories for ``profile`` on ``brokers`` brokers.

    ``start_ms`` is a round value (1.7e12 first) or within a year of 1.7e12; broker 0's clock
    offset is 0, the others' within ±``skew_ms``; under a profile whose sentinel is a history
    parameter, ``no_timestamp`` is -1 or INT64_MIN.  Ops: ``CreateTopic("t")`` (and sometimes
    ``"u"``) with configs from ``topic_configs`` (default ``topic_configs(profile=profile)``),
    then up to ``max_ops`` steps of Produce (twice as likely as each other kind; any partition of a
    topic), Advance (1 ms to 2 days), RetentionPass (half the time after a record stamped now and an
    Advance just past the topic's retention.ms, so that the log start moves; half the time followed by
    reads), ListOffsets (-1 to -5, other negatives, or >= 0 near the produced timestamps; at no version
    or any the profile's broker speaks; read committed or not), reads (a Fetch, EARLIEST, LATEST,
    MAX_TIMESTAMP and a lookup near a produced timestamp, of one partition), StepClock (±``skew_ms``, only
    when ``skew_ms`` > 0) and ElectLeader (only when ``brokers`` > 1), and last a Fetch and a DescribeLog
    for every partition.

    Produce batches come from ``batches``: a strategy is used as is; a callable (default
    ``batches``) is called with ``timestamps=timestamps(now=<leader clock>, bounds=<topic's
    limits and the profile's defaults>)``, so timestamps sit on the validation edges.

    Shrinks towards ``CreateTopic("t", TopicConfig())``, ``Fetch("t")``, ``DescribeLog("t")``.
    """
    check_profile(profile)
    check_range(brokers, "brokers", 1, 64)
    check_range(max_ops, "max_ops", 1, 10_000)
    check_int64(skew_ms, "skew_ms")
    if skew_ms < 0:
        raise InvalidArgument(f"skew_ms={skew_ms!r} must be >= 0 (it bounds clock offsets both ways)")
    check_strategy(topic_configs, "topic_configs")
    _check_batches(batches)
    return _histories.histories(
        **shown(
            histories,
            profile=profile,
            brokers=brokers,
            max_ops=max_ops,
            topic_configs=topic_configs,
            batches=batches,
            skew_ms=skew_ms,
        )
    )


def leader_change_histories(
    *,
    profile: str,
    clock_offsets: Sequence[int],
    max_ops: int = 6,
    topic_configs: st.SearchStrategy[TopicConfig] | None = None,
    batches: BatchesArg = None,
) -> st.SearchStrategy[History]:
    """Histories with exactly one leader change, on brokers whose clocks are fixed.

    The brokers' clock offsets are ``clock_offsets`` in a drawn order (broker b's is
    ``clock_offsets[order[b]]``: which broker leads first and which is elected is drawn, not their
    clocks).  Ops: ``CreateTopic("t")`` with one partition (its config otherwise from
    ``topic_configs``, default ``topic_configs(profile=profile)``), up to ``max_ops`` Produce (twice as
    likely), Advance and read bursts on the leader broker 0, ``ElectLeader("t", b)`` for a broker b > 0,
    up to ``max_ops`` more on b, and a last Fetch.  No retention pass, clock step or DescribeLog: what a
    cluster of running brokers can do (``--impl kafka-cluster`` halts the leader).  ``batches`` as in
    ``histories``, near the current leader's clock.

    Shrinks towards ``CreateTopic("t")``, the election of broker 1, ``Fetch("t")``, offsets in the given order.
    """
    check_profile(profile)
    offsets = check_sequence(clock_offsets, "clock_offsets")
    if len(offsets) < 2:
        raise InvalidArgument(
            f"clock_offsets={clock_offsets!r} needs two brokers or more: a leader change moves "
            "leadership to another broker"
        )
    for i, offset in enumerate(offsets):
        check_int64(offset, f"clock_offsets[{i}]")
    check_range(max_ops, "max_ops", 0, 1_000)
    check_strategy(topic_configs, "topic_configs")
    _check_batches(batches)
    return _histories.leader_change_histories(
        **shown(
            leader_change_histories,
            profile=profile,
            clock_offsets=offsets,
            max_ops=max_ops,
            topic_configs=topic_configs,
            batches=batches,
        )
    )


def _check_batches(batches: object) -> None:
    if batches is not None and not (isinstance(batches, st.SearchStrategy) or callable(batches)):
        raise InvalidArgument(
            f"batches={batches!r} must be a SearchStrategy, a callable taking timestamps= and returning one, or None"
        )


def append_histories(
    *,
    profile: str,
    config: None | TopicConfig | st.SearchStrategy[TopicConfig] = None,
    batch: None | Batch | st.SearchStrategy[Batch] = None,
    now: None | int | st.SearchStrategy[int] = None,
) -> st.SearchStrategy[History]:
    """The single-append scenario most KIP-937 properties use.

    ``[CreateTopic("t", config), Produce("t", batch), Fetch("t")]`` with ``start_ms = now``
    on one broker, so the Produce is validated at exactly ``now``.  Each of ``now``,
    ``config`` and ``batch`` may be a value, a strategy, or None to draw it: ``now`` like
    ``histories``' start, ``config`` from ``topic_configs(profile=profile)``, ``batch`` from
    ``batches(timestamps=timestamps(now=now, bounds=<config's limits and profile defaults>))``.

    Shrinks towards start 1.7e12, ``TopicConfig()`` and one record stamped ``now``.
    """
    spec = check_profile(profile)
    _check_value_or_strategy(config, "config", TopicConfig)
    _check_value_or_strategy(batch, "batch", Batch)
    if now is not None and not isinstance(now, st.SearchStrategy):
        check_int64(now, "now")
    if isinstance(config, TopicConfig):
        unknown = [key for key in config.set_keys() if key not in spec.configs]
        if unknown:
            raise InvalidArgument(f"config sets {unknown!r}, which profile={profile!r} does not accept")
    return _histories.append_histories(**shown(append_histories, profile=profile, config=config, batch=batch, now=now))


def _check_value_or_strategy(value: object, name: str, kind: type) -> None:
    if value is not None and not isinstance(value, (kind, st.SearchStrategy)):
        raise InvalidArgument(f"{name}={value!r} must be a {kind.__name__}, a SearchStrategy of them, or None")
