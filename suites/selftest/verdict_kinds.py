"""A test double that gives the plugin every verdict kind, and the tests that draw each from it.

Not collected by itself (its name is not ``test_*``): suites/selftest/test_every_verdict.py runs it with
``ktc run --impl ktc.suites.selftest.verdict_kinds:EveryVerdict -- suites/selftest/verdict_kinds.py`` and
finds every kind of reports/verdicts.py in results.json, summary.txt, JUnit XML and the HTML page.

``EveryVerdict`` answers as the reference does, except by the topic a history creates: ``accepts`` accepts
the batches the model refuses (a fail), ``restamps`` reads records back a millisecond late (a fail),
``crash`` raises (an error), ``lost`` loses its connection after the CreateTopic (every clause the history
exercises is unknown: undecided); it cannot run a history on ``far`` (unsupported, ``Capabilities.cannot_run``)
and declares ``KIP-33.list-offsets-latest-tiered`` unsupported.  Like the mutants, it calls the reference on
purpose: it is the suite's own double, not an implementation under test.

Each clause below has one role: a single kind (``KINDS``: the verdict, the unknown kind, whether an
expectations file names it), or two tests contributing two neighbouring verdicts of the one order
(``MERGES``: what each contributes, and the merged row).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from ktc import reference
from ktc.implementations.protocol import Capabilities, Cut, JudgedTrace
from ktc.judge.declined import unexercised
from ktc.judge.harness import assert_conforms
from ktc.reference.types import (
    CreateTopic,
    DescribeLog,
    Fetch,
    FetchResult,
    History,
    Produce,
    ProduceResult,
    TopicConfig,
)
from ktc.suites._support import NOW, batch

TIERED = "KIP-33.list-offsets-latest-tiered"
KINDS = {  # clause -> (verdict, unknown kind, named by the expectations file)
    "KIP-32.offsets-contiguous": ("pass", None, False),
    "KIP-937.after-bound": ("fail", None, False),
    "KIP-32.mirror-maker-keeps-create-time": ("fail", None, True),
    "KIP-937.before-bound": ("error", None, False),
    "KIP-32.batch-max-timestamp": ("unknown", "undecided", False),
    "KIP-33.list-offsets-latest": ("unknown", "unexercised", False),
    "KIP-32.produce-response-log-append-time": ("unknown", "unexercised", False),
    "KIP-32.roll-by-first-timestamp": ("unknown", "skipped", False),
    TIERED: ("unsupported", None, False),
}
MERGES = {  # clause -> (the two contributions, weaker first, as (verdict, unknown kind)), and the merged row
    "KIP-33.list-offsets-earliest": ((("unknown", "unexercised"), ("unsupported", None)), ("unsupported", None)),
    "KIP-33.time-index-running-max": ((("unsupported", None), ("unknown", "undecided")), ("unknown", "undecided")),
    "KIP-33.time-index-strictly-increasing": ((("unknown", "undecided"), ("pass", None)), ("pass", None)),
    "KIP-937.read-within-bounds": ((("pass", None), ("error", None)), ("error", None)),
    "KIP-32.create-time-kept": ((("error", None), ("fail", None)), ("fail", None)),
}
EXPECTATIONS = f"""schema_version = 1
implementation = "every-verdict"

[[expect]]
clause = "KIP-32.mirror-maker-keeps-create-time"
profile = "kafka-4"
verdict = "fail"
reason = "the double reads records back a millisecond late"
source = "{__name__}"
"""


class EveryVerdict:
    name, version = "every-verdict", "double"

    def capabilities(self) -> Capabilities:
        return Capabilities(
            profiles=frozenset({"kafka-4"}),
            unsupported={TIERED: "the double has no tiered storage"},
            cannot_run=cannot_run,
        )

    def run(self, histories: Sequence[History]):
        return [answer(h) for h in histories]


def cannot_run(history: History) -> str | None:
    return "the double cannot reach topic far" if topic(history) == "far" else None


def topic(history: History) -> str:
    return history.ops[0].topic


def answer(history: History):
    trace, mode = tuple(reference.run(history)), topic(history)
    if mode == "crash":
        raise RuntimeError("the double crashed, as asked")
    if mode == "lost":
        lost = JudgedTrace(trace[:1])
        lost.cut = Cut("unknown", 1, "op #1 (Produce): connection lost after send (the double's)")
        return lost
    return tuple(changed(result, mode) for result in trace)


def changed(result, mode: str):
    if mode == "accepts" and isinstance(result, ProduceResult) and result.error_code:
        return replace(result, error_code=0)
    if mode == "restamps" and isinstance(result, FetchResult):
        late = tuple(
            replace(b, records=tuple(replace(r, timestamp=r.timestamp + 1) for r in b.records)) for b in result.batches
        )
        return replace(result, batches=late)
    return result


def kept(name: str) -> History:
    """One record the model keeps, read back, on a topic of this name."""
    ops = (CreateTopic(name, TopicConfig()), Produce(name, batch(NOW)), Fetch(name), DescribeLog(name))
    return History("kafka-4", ops, NOW)


def refused(name: str) -> History:
    """A batch the model refuses (a record two hours ahead of a one-hour after bound)."""
    ops = (
        CreateTopic(name, TopicConfig(after_max_ms=3_600_000)),
        Produce(name, batch(NOW, NOW + 7_200_000)),
        Fetch(name),
        DescribeLog(name),
    )
    return History("kafka-4", ops, NOW)


@pytest.mark.clause("KIP-32.offsets-contiguous", "KIP-33.time-index-strictly-increasing", "KIP-937.read-within-bounds")
def test_passes(impl):
    assert_conforms(impl, kept("ok"))


@pytest.mark.clause("KIP-937.after-bound")
def test_fails(impl):
    assert_conforms(impl, refused("accepts"))


@pytest.mark.clause("KIP-32.mirror-maker-keeps-create-time")
def test_fails_as_expected(impl):
    assert_conforms(impl, kept("restamps"))


@pytest.mark.clause("KIP-32.create-time-kept")
def test_fails_later(impl):
    assert_conforms(impl, kept("restamps"))


@pytest.mark.clause("KIP-937.before-bound", "KIP-937.read-within-bounds", "KIP-32.create-time-kept")
def test_errs(impl):
    assert_conforms(impl, kept("crash"))


@pytest.mark.clause(
    "KIP-32.batch-max-timestamp", "KIP-33.time-index-running-max", "KIP-33.time-index-strictly-increasing"
)
def test_decides_nothing(impl):
    assert_conforms(impl, kept("lost"))


@pytest.mark.clause("KIP-33.list-offsets-latest", "KIP-33.list-offsets-earliest")
def test_reaches_nothing(impl):
    assert_conforms(impl, kept("ok"))  # no ListOffsets: neither clause has anything to compare


@pytest.mark.clause("KIP-32.produce-response-log-append-time")
def test_declines_as_unexercised(impl):
    raise unexercised("this test reaches no clause by design")


@pytest.mark.clause("KIP-32.roll-by-first-timestamp")
def test_skips(impl):
    pytest.skip("a skip of the test's own")


@pytest.mark.clause("KIP-33.list-offsets-earliest", "KIP-33.time-index-running-max")
def test_cannot_run(impl):
    assert_conforms(impl, kept("far"))


@pytest.mark.clause(TIERED)
def test_unsupported_clause(impl):
    assert_conforms(impl, kept("ok"))
