"""``ktc hunt``: its options (every one checked before any work: one line and exit 2 when wrong), and the
command: load the target, run the engine until the budget is spent, a finding, or Ctrl-C / SIGTERM; stop
what the target started; write the report; print the table and the findings."""

from __future__ import annotations

import os
import re
import secrets
import signal
import sys
import time
from pathlib import Path

from ktc.usage import UsageError, report_root

DATABASE = "hypothesis-db"
BUDGET = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h)?$")
UNITS = {"s": 1, "m": 60, "h": 3600, None: 1}


def add_parser(sub) -> None:
    hunt = sub.add_parser("hunt", help="a long, budgeted search for failures nothing explains, against one target")
    hunt.add_argument("--impl", required=True, help="one target, as ktc run takes it")
    hunt.add_argument("--budget", default="30m", type=budget, help="how long to search: 90s, 30m, 2h (default 30m)")
    hunt.add_argument("--resume", action="store_true", help="continue the hunt in --report from its example database")
    hunt.add_argument("--seed", type=seed, help="Hypothesis seed of the first round (default: random, recorded)")
    hunt.add_argument("--report", metavar="DIR", help="where the hunt writes (default ktc-hunt/<target>)")
    hunt.add_argument(
        "--expectations",
        action="append",
        default=[],
        metavar="FILE",
        help="more known deviations (expectations/*.toml format; the target's own are read too)",
    )
    hunt.add_argument(
        "--profile",
        help="comma-separated profiles to draw histories under (default: the target's "
        "own, those it is judged under on generated histories)",
    )
    hunt.add_argument(
        "--brokers",
        type=count("--brokers", 1, 3),
        default=1,
        help="brokers per history, 2-3 adds leader changes (default 1; a target on fixed clocks, "
        "such as kafka-cluster, draws histories on its own brokers with one leader change)",
    )
    hunt.add_argument("--max-ops", type=count("--max-ops", 1, 200), default=16, help="ops per history (default 16)")
    hunt.add_argument("--kafka-version", help="for --impl kafka: the Apache Kafka version to fetch and start")
    hunt.add_argument(
        "--kafka-bootstrap",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS"),
        metavar="HOST:PORT",
        help="for --impl kafka: an existing broker (default $KAFKA_BOOTSTRAP_SERVERS)",
    )


def budget(value: str) -> float:
    match = BUDGET.match(value.strip())
    if not match or float(match.group(1)) <= 0:
        raise UsageError(f"--budget {value!r}: expected a positive duration such as 90s, 30m or 2h")
    return float(match.group(1)) * UNITS[match.group(2)]


def seed(value: str) -> int:
    if not value.isdigit():
        raise UsageError(f"--seed {value!r}: expected a whole number >= 0")
    return int(value)


def count(flag: str, low: int, high: int):
    def parse(value: str) -> int:
        if not value.isdigit() or not low <= int(value) <= high:
            raise UsageError(f"{flag} {value!r}: expected a whole number from {low} to {high}")
        return int(value)

    return parse


def report_dir(args) -> Path:
    """The hunt's directory: a new one, or with --resume the one holding an earlier hunt."""
    name = re.sub(r"[^\w.-]+", "_", args.impl)
    directory = report_root(args.report or str(Path("ktc-hunt") / name))
    earlier = (directory / DATABASE).exists()
    if args.resume and not earlier:
        raise UsageError(f"--resume: {directory} holds no earlier hunt (no {DATABASE}/); drop --resume to start one")
    if earlier and not args.resume:
        raise UsageError(
            f"--report {directory} holds an earlier hunt: pass --resume to continue it, or give another --report"
        )
    return directory


def load_target(args):
    """The target, as ``ktc run`` checks it: a bootstrap reachable, a Kafka version Maven Central knows."""
    from ktc import implementations

    values = {"kafka_bootstrap": args.kafka_bootstrap, "kafka_version": args.kafka_version}
    try:  # the families' own checks, as ktc run makes them (implementations/families/): reachable, known release
        implementations.check(values, [args.impl], getattr(args, "profile", None) or "own")
    except implementations.SettingError as error:
        raise UsageError(str(error)) from None
    try:
        impl = implementations.load(args.impl, values)
    except implementations.ImplementationError as error:
        raise UsageError(str(error)) from None
    from ktc.judge.context import RunContext, UnderTest

    why = UnderTest(impl, RunContext()).unavailable()
    if why:
        raise UsageError(f"--impl {args.impl}: {why}")
    return impl


def profiles(args, impl) -> tuple[str, ...]:
    from ktc.specs.profiles import ProfileError, get

    caps = impl.capabilities()
    own = sorted(caps.profiles - caps.pinned_only) or sorted(caps.profiles)
    if not args.profile:
        return tuple(own)
    chosen = [name.strip() for name in args.profile.split(",") if name.strip()]
    for name in chosen:
        try:
            get(name)
        except ProfileError as error:
            raise UsageError(f"--profile: {error}") from None
        if name not in caps.profiles:
            raise UsageError(f"--profile {name}: {impl.name} does not implement it (it implements {', '.join(own)})")
    return tuple(chosen)


def explainer(args, impl):
    from ktc.hunt.explain import explainer as build
    from ktc.reports.loading import InputError

    for path in args.expectations:
        if not Path(path).is_file():
            raise UsageError(f"--expectations {path}: no such file")
    try:
        return build(impl, args.expectations)
    except InputError as error:
        raise UsageError(f"--expectations: {error}") from None


def stop_on_sigterm() -> None:
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def cmd_hunt(args) -> int:
    from hypothesis.database import DirectoryBasedExampleDatabase

    from ktc.hunt import engine

    directory = report_dir(args)
    impl = load_target(args)
    chosen, explains = profiles(args, impl), explainer(args, impl)
    directory.mkdir(parents=True, exist_ok=True)
    first_seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    started = time.monotonic()
    hunt = engine.Hunt(
        impl,
        chosen,
        explains,
        started + args.budget,
        first_seed,
        DirectoryBasedExampleDatabase(str(directory / DATABASE)),
        args.brokers,
        args.max_ops,
    )
    print(
        f"ktc hunt: {args.impl} under {', '.join(chosen)} for {args.budget:g} s (seed {first_seed}); "
        f"report in {directory}",
        file=sys.stderr,
        flush=True,
    )
    stop_on_sigterm()
    try:
        outcome = engine.run(hunt)
    except KeyboardInterrupt:
        outcome = engine.Outcome(stopped="interrupted")
    return finish(directory, hunt, outcome, time.monotonic() - started, args.impl)


def finish(directory: Path, hunt, outcome, seconds: float, spec: str) -> int:
    """Findings written (their reproducers need one more run of the target), the target stopped, the
    report written and shown."""
    from ktc.hunt import report
    from ktc.judge.context import UnderTest

    finding_doc = None
    try:
        if outcome.finding is not None:
            finding_doc = report.write_finding(directory, hunt, outcome.finding, observed(hunt, outcome.finding), spec)
    except KeyboardInterrupt:
        outcome.stopped += "; interrupted while writing the finding"
    finally:
        UnderTest(hunt.impl, hunt.context).close()
    results = report.write(directory, hunt, outcome, finding_doc, seconds, spec)
    show(results, directory)
    if outcome.stopped.startswith("interrupted"):
        return 130
    return 2 if outcome.idle else 1 if outcome.finding is not None else 0


def observed(hunt, finding):
    """The target's answers to the minimal history (what the script compares a broker's answers with)."""
    from ktc.judge.harness import ImplementationCrash, own_copy, run_checked

    try:
        return run_checked(hunt.impl, [own_copy(finding.history)], hunt.context)[0]
    except ImplementationCrash:
        return None


def show(results: Path, directory: Path) -> None:
    import json
    import shutil

    from ktc.hunt.report import lines
    from ktc.reports import loading, render
    from ktc.reports.registry import Context

    doc = loading.load_results(results)
    width = shutil.get_terminal_size((120, 40)).columns
    print(render.render("terminal", doc, Context(report_dir=str(directory), width=width, max_lines=30)).rstrip("\n"))
    print("\n".join(lines(json.loads((directory / "hunt.json").read_text()))))


COMMANDS = {"hunt": cmd_hunt}
