"""``ktc new-impl NAME`` writes an adapter skeleton; ``ktc check-impl SPEC`` holds an adapter to the
plug-in contract alone (what ``run()`` returns, for every operation kind), in seconds, without pytest
and without judging anything against the reference."""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from ktc.cli.common import UsageError
from ktc.judge.contract import ANSWERS, traces_problem
from ktc.reference.types import (
    Advance,
    Batch,
    CreateTopic,
    DescribeLog,
    ElectLeader,
    Fetch,
    History,
    ListOffsets,
    Produce,
    Record,
    RetentionPass,
    StepClock,
    TimestampType,
    TopicConfig,
)
from ktc.timeout import TimedOut, call_with_timeout

NOW = 1_700_000_000_000
LAT = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME)


def add_parsers(sub) -> None:
    new = sub.add_parser("new-impl", help="write an adapter skeleton NAME.py that passes check-impl")
    new.add_argument("name", help="module name (a Python identifier), e.g. mybroker_ktc")
    check = sub.add_parser("check-impl", help="check an adapter against the plug-in contract alone (seconds)")
    check.add_argument("spec", help="package.module:attribute (or a built-in name)")
    check.add_argument("--impl-timeout", type=float, default=60.0, metavar="SECONDS")


def histories(profile: str) -> list[History]:
    """Every operation kind, a refused produce, a LogAppendTime topic, a topic that does not exist."""
    every = (
        CreateTopic("t"),
        Produce("t", Batch((Record(NOW), Record(NOW - 1)))),
        Advance(5),
        StepClock(0, 1),
        ElectLeader("t", 0),
        RetentionPass("t"),
        ListOffsets("t", -1),
        ListOffsets("t", NOW),
        Fetch("t"),
        DescribeLog("t"),
    )
    refused = (CreateTopic("t", TopicConfig(after_max_ms=0)), Produce("t", Batch((Record(NOW + 10**9),))), Fetch("t"))
    lat = (CreateTopic("t", LAT), Produce("t", Batch((Record(-1),))), Fetch("t"), ListOffsets("t", -3))
    missing = (Produce("nope", Batch((Record(NOW),))), Fetch("nope"), DescribeLog("nope"))
    return [History(profile, ops, NOW) for ops in (every, refused, lat, missing)]


def cmd_check_impl(args) -> int:
    from ktc import implementations

    try:
        impl = implementations.load(args.spec)
    except implementations.ImplementationError as error:
        raise UsageError(str(error)) from None
    problems = identity_problems(impl) or run_problems(impl, args.impl_timeout)
    for line in problems:
        print(f"check-impl: {line}")
    kinds = ", ".join(sorted(k.__name__ for k in ANSWERS))
    print(f"check-impl: {impl.name}: {'contract broken' if problems else 'contract kept'} ({kinds})")
    return 1 if problems else 0


def identity_problems(impl) -> list[str]:
    from ktc.implementations.protocol import Capabilities

    caps = impl.capabilities()
    found = [] if isinstance(getattr(impl, "name", None), str) else ["name must be a str"]
    found += [] if isinstance(getattr(impl, "version", None), str) else ["version must be a str"]
    if not isinstance(caps, Capabilities) or not caps.profiles:
        found.append("capabilities() must return implementations.protocol.Capabilities with at least one profile")
    return found


def run_problems(impl, timeout_s: float) -> list[str]:
    profile = sorted(impl.capabilities().profiles)[0]
    cases = histories(profile)
    try:
        traces = call_with_timeout(impl.run, cases, timeout_s)
    except TimedOut as error:
        return [f"run() {error}"]
    except Exception as error:
        return [f"run() raised {type(error).__name__}: {error}"]
    problem = traces_problem(cases, traces)
    return [f"run() {problem}"] if problem else []


def cmd_new_impl(args) -> int:
    name = args.name.removesuffix(".py")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"new-impl {args.name!r}: expected a module name (letters, digits, _), e.g. mybroker_ktc")
    path = Path(f"{name}.py")
    if path.exists():
        raise UsageError(f"new-impl: {path} exists; choose another name or move it away (nothing was written)")
    cls = "".join(part.capitalize() for part in re.split(r"_+", name) if part) or "Adapter"
    path.write_text(SKELETON.format(cls=cls, name=name.replace("_", "-")))
    print(f"wrote {path}: check it with 'ktc check-impl {name}:{cls}', run it with 'ktc run --impl {name}:{cls}'")
    return 0


SKELETON = '''"""A ktc adapter: answers each operation of a history the way my broker does (README, "Plug in your
implementation": which result type answers which operation).  Every clause starts as unsupported;
remove a KIP from UNSUPPORTED once run() answers its operations for real."""
from ktc.implementations.protocol import Capabilities
from ktc.reference.types import (Ack, CreateTopicResult, DescribeLogResult, FetchResult, ListOffsetsResult,
                             ProduceResult, RetentionResult)

UNSUPPORTED = {{kip: "not implemented yet" for kip in ("KIP-32", "KIP-33", "KIP-228", "KIP-870", "KIP-937")}}
UNSUPPORTED_VERSION = 35  # Kafka's error code for an API a broker does not have


class {cls}:
    name, version = "{name}", "0.1"

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=frozenset({{"kafka-4"}}), unsupported=UNSUPPORTED)

    def run(self, histories):
        return [tuple(self.answer(op) for op in history.ops) for history in histories]

    def answer(self, op):
        """TODO: send op to the broker and translate its answer; these are placeholders of the right type."""
        kind = type(op).__name__
        if kind == "CreateTopic":
            return CreateTopicResult(0)
        if kind == "Produce":
            return ProduceResult(0, None, (), 0, -1)
        if kind == "Fetch":
            return FetchResult(())
        if kind == "ListOffsets":
            return ListOffsetsResult(-1, -1, UNSUPPORTED_VERSION)
        if kind == "RetentionPass":
            return RetentionResult((), -1, UNSUPPORTED_VERSION)
        if kind == "DescribeLog":
            return DescribeLogResult((), UNSUPPORTED_VERSION)
        return Ack()  # Advance, StepClock, ElectLeader
'''

COMMANDS = {"new-impl": cmd_new_impl, "check-impl": cmd_check_impl}
