"""The plug-in contract, checked before anything is judged: what ``run()`` must return.

One trace per history; each trace one result per operation; each result of the type that answers
its operation (``ANSWERS``).  The first broken answer is described in one line naming the
implementation, the history, the operation and the expected type: a contract error, never a
conformance verdict, and never a crash deep inside a check.
"""

from __future__ import annotations

from collections.abc import Sequence

from ktc.implementations.protocol import JudgedTrace
from ktc.reference.types import (
    Ack,
    Advance,
    CreateTopic,
    CreateTopicResult,
    DescribeLog,
    DescribeLogResult,
    ElectLeader,
    Fetch,
    FetchResult,
    History,
    ListOffsets,
    ListOffsetsResult,
    Op,
    Produce,
    ProduceResult,
    RetentionPass,
    RetentionResult,
    StepClock,
)

ANSWERS: dict[type, type] = {
    CreateTopic: CreateTopicResult,
    Produce: ProduceResult,
    Advance: Ack,
    StepClock: Ack,
    ElectLeader: Ack,
    RetentionPass: RetentionResult,
    ListOffsets: ListOffsetsResult,
    Fetch: FetchResult,
    DescribeLog: DescribeLogResult,
}


def traces_problem(histories: Sequence[History], traces: object) -> str | None:
    if not isinstance(traces, Sequence) or isinstance(traces, (str, bytes)):
        return f"returned {type(traces).__name__}; expected a sequence with one trace per history"
    if len(traces) != len(histories):
        return f"returned {len(traces)} traces for {len(histories)} histories; expected one per history"
    for index, (history, trace) in enumerate(zip(histories, traces)):
        problem = trace_problem(history, trace)
        if problem:
            return f"history {index + 1} of {len(histories)} ({history.profile}): {problem}"
    return None


def trace_problem(history: History, trace: object) -> str | None:
    if not isinstance(trace, (tuple, list)):
        return f"trace is {type(trace).__name__}; expected a tuple with one result per operation"
    if JudgedTrace.of(trace).cut is not None:  # a history the implementation could not run to its end
        return None
    if len(trace) != len(history.ops):
        return f"{len(trace)} results for {len(history.ops)} operations; expected one per operation"
    return next(filter(None, (answer_problem(i, op, r) for i, (op, r) in enumerate(zip(history.ops, trace)))), None)


def answer_problem(index: int, op: Op, result: object) -> str | None:
    expected = ANSWERS[type(op)]
    if isinstance(result, expected):
        return None
    return (
        f"operation {index} ({type(op).__name__}) answered {type(result).__name__}; "
        f"expected reference.types.{expected.__name__}"
    )
