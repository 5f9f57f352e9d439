"""Small builders shared by the suites: histories from a config and a few timestamps."""

from __future__ import annotations

import signal

from ktc.reference.types import (
    Batch,
    CreateTopic,
    DescribeLog,
    Fetch,
    History,
    Produce,
    Record,
    TimestampType,
    TopicConfig,
)
from ktc.specs.profiles import get as get_profile

NOW = 1_760_000_000_000
CT = TimestampType.CREATE_TIME
LAT = TimestampType.LOG_APPEND_TIME


def bounded(profile: str, before: int, after: int) -> TopicConfig:
    """before/after limits, or the deprecated difference.max.ms where the profile has nothing else."""
    if "message.timestamp.before.max.ms" in get_profile(profile).configs:
        return TopicConfig(before_max_ms=before, after_max_ms=after)
    return TopicConfig(difference_max_ms=min(before, after))


def batch(*timestamps: int, **attributes) -> Batch:
    return Batch(tuple(Record(ts) for ts in timestamps), **attributes)


def one_append(profile: str, config: TopicConfig, *timestamps: int, now: int = NOW, **attributes) -> History:
    """CreateTopic, one Produce of a batch with these record timestamps, Fetch, DescribeLog."""
    ops = (CreateTopic("t", config), Produce("t", batch(*timestamps, **attributes)), Fetch("t"), DescribeLog("t"))
    return History(profile, ops, start_ms=now)


def appends(profile: str, config: TopicConfig, batches, now: int = NOW, between=()) -> History:
    """Several produces to one topic; ``between`` ops (e.g. Advance) are inserted after each produce."""
    ops = [CreateTopic("t", config)]
    for b in batches:
        ops += [Produce("t", b), *between]
    return History(profile, tuple(ops) + (Fetch("t"), DescribeLog("t")), start_ms=now)


def interruptible() -> None:
    """``preexec_fn`` for a child a test will send SIGINT: Ctrl-C's default disposition, whatever ours is.
    A test run started in the background of a non-interactive shell (``cmd &``) ignores SIGINT, an ignored
    signal stays ignored across exec, and ktc rightly leaves an inherited SIG_IGN alone, so without this the
    child would never see the Ctrl-C the test sends (found on a clean clone run with ``nohup ./.ci/run &``)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# For a ``ktc audit`` child of a test: a few hundred records, so Spark's start-up decides its time, and the
# driver's JVM on the client compiler with the serial collector (the two planted audits of test_audit.py,
# measured together: 63 -> 53 s on a quiet machine).  ktc audit itself keeps Spark's defaults: a real topic
# may be large.  KTC_SPARK_CONF replaces the default extraJavaOptions, so the time zone is repeated.
SMALL_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"  # client compiler, serial collector: short-lived, small data
SMALL_SPARK_CHILD = {"KTC_SPARK_CONF": f"spark.driver.extraJavaOptions=-Duser.timezone=UTC {SMALL_JVM}"}
