"""Benchmark: broker-tier scenarios/s and unknown verdicts, host clock vs a clock ktc controls, in the same run.

    python benchmarks/bench_clock.py [--version 3.9.2] [--scenarios 3000] [--rounds 3] [--seed 0]

Starts two local KRaft brokers of one version (jars from Maven Central, cached in ~/.cache/ktc):

  host        the host's wall clock: every operation judged over [request sent, response received]
              (how a broker ktc did not start is judged);
  controlled  libfaketime's MT build re-reading a timestamp file ktc writes
              (ktc/kafka/processes/clock.py): the clock frozen at an instant ktc set and
              verified by a LogAppendTime echo, every operation judged at that instant.

The same append scenarios (ktc/judge/bulk_intervals.py; no history moves a clock, so all of them
share one frozen instant) run on both, in ``--rounds`` alternating rounds so load drifts hit both
alike; a warm-up of each is not timed.  Prints each round, the totals, the unknown-verdict share
of each, the controlled/host throughput ratio and the clock's verification summary (settings,
failures, time for a setting to be seen).  Then the scenarios with a record exactly at an
inclusive bound (``ts == now - before`` or ``ts == now + after`` on the history's clock) are run
once more on each broker, and for every clause the number of those cases decided (pass or fail,
not unknown) is printed per clock.  Exit 1 when a scenario fails.  A script, not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ktc.checks.verdicts import Validity  # noqa: E402
from ktc.implementations.families.kafka import KAFKA  # noqa: E402
from ktc.implementations.kafka.adapter import BrokerAdapter  # noqa: E402
from ktc.implementations.kafka.settings import Started  # noqa: E402
from ktc.judge import bulk_intervals  # noqa: E402
from ktc.judge.harness import judge_one  # noqa: E402
from ktc.reference.configs import effective_limits  # noqa: E402
from ktc.reference.types import CreateTopic, History, Produce, TimestampType, clock_states  # noqa: E402
from ktc.specs.profiles import get as get_profile  # noqa: E402

WARMUP = 300
MODES = ("host", "controlled")


def options(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="3.9.2", help="Kafka version to start (default 3.9.2)")
    parser.add_argument("--scenarios", type=int, default=3000, help="scenarios per round (default 3000)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.scenarios, args.rounds) < 1:
        parser.error("--scenarios and --rounds must be at least 1")
    return args


def start(version: str, mode: str) -> BrokerAdapter:
    impl = BrokerAdapter(KAFKA, Started(version, clock=mode))
    impl.profile()
    impl.address()
    if mode == "controlled" and not impl.launcher.clock.exact:
        raise SystemExit(f"bench_clock: the controlled clock is unavailable: {impl.launcher.clock_reason}")
    return impl


def measure(impl, histories, clauses) -> bulk_intervals.IntervalReport:
    report = bulk_intervals.IntervalReport()
    found = bulk_intervals.check(impl, histories, clauses, report)
    if found is not None:
        print(f"  FAILED on {impl.settings.clock}: {found[1][0].clause} on {found[0]}")
    return report


def verdict_share(report: bulk_intervals.IntervalReport) -> str:
    total, unknown = sum(report.verdicts.values()), report.verdicts.get("unknown", 0)
    return f"{unknown}/{total} unknown ({100 * unknown / max(total, 1):.2f}%)"


def main(argv=None) -> int:
    args = options(argv)
    impls = {}
    try:
        for mode in MODES:
            impls[mode] = start(args.version, mode)
        profile = impls["host"].profile()
        clauses = bulk_intervals.clauses_for(impls["host"], profile)
        corpus = bulk_intervals.scenarios(profile, args.scenarios * args.rounds + WARMUP, args.seed)
        for impl in impls.values():
            impl.run(corpus[:WARMUP])
        print(f"Kafka {args.version} (profile {profile}); {os.cpu_count()} cores, 1-min load {os.getloadavg()[0]:.1f}")
        totals = {mode: [] for mode in MODES}
        for r in range(args.rounds):
            histories = corpus[WARMUP + r * args.scenarios : WARMUP + (r + 1) * args.scenarios]
            for mode in MODES if r % 2 == 0 else MODES[::-1]:
                report = measure(impls[mode], histories, clauses)
                totals[mode].append(report)
                print(
                    f"round {r + 1} {mode:<10} {report.scenarios:>6} scenarios {report.run_rate:>7.0f}/s on the "
                    f"broker {report.rate:>7.0f}/s judged; {verdict_share(report)}; {report.failed} failed"
                )
        code = summarise(totals, impls["controlled"])
        print_bound_cases([h for h in corpus[WARMUP:] if at_a_bound(h)], impls, clauses)
        return code
    finally:
        for impl in impls.values():
            impl.close()


def summarise(totals: dict, controlled: BrokerAdapter) -> int:
    merged = {mode: merge(reports) for mode, reports in totals.items()}
    for mode, report in merged.items():
        print(
            f"{mode:<10} {report.scenarios:>6} scenarios {report.run_rate:>7.0f}/s on the broker "
            f"{report.rate:>7.0f}/s judged; {verdict_share(report)}; {report.failed} failed"
        )
    host, ctl = merged["host"], merged["controlled"]
    print(
        f"controlled/host: {ctl.run_rate / host.run_rate:.2f}x on the broker, {ctl.rate / host.rate:.2f}x judged; "
        f"1-min load {os.getloadavg()[0]:.1f}"
    )
    print(f"clock: {controlled.target()['clock']}")
    return 1 if host.failed or ctl.failed else 0


def at_a_bound(history: History) -> bool:
    """Whether a CreateTime record of the history sits exactly at ``now - before`` or ``now + after``."""
    profile, configs = get_profile(history.profile), {}
    for op, state in zip(history.ops, clock_states(history)):
        if isinstance(op, CreateTopic):
            configs[op.topic] = op.config
        elif isinstance(op, Produce) and op.topic in configs and is_create_time(configs[op.topic], op):
            before, after = effective_limits(configs[op.topic], profile)
            now = state.leader_now(op.topic, op.partition)
            if any(r.timestamp in (now - before, now + after) for r in op.batch.records):
                return True
    return False


def is_create_time(config, op: Produce) -> bool:
    return config.timestamp_type is TimestampType.CREATE_TIME and op.batch.timestamp_type is TimestampType.CREATE_TIME


def print_bound_cases(histories: list[History], impls: dict, clauses: list[str]) -> None:
    """Per clause: how many exact-bound cases each clock decided (pass or fail), of how many judged."""
    decided = {mode: bound_verdicts(impl, histories, clauses) for mode, impl in impls.items()}
    print(f"{len(histories)} scenarios with a record exactly at an inclusive bound; cases decided per clause:")
    for clause in sorted(set().union(*(d.keys() for d in decided.values()))):
        cells = ", ".join(
            f"{mode} {decided[mode].get(clause, (0, 0))[0]}/{decided[mode].get(clause, (0, 0))[1]}" for mode in MODES
        )
        print(f"  {clause:<45} {cells}")


def bound_verdicts(impl, histories: list[History], clauses: list[str]) -> dict[str, tuple[int, int]]:
    counts: dict[str, list[int]] = {}
    for history, trace in zip(histories, impl.run(histories), strict=True):
        for verdict in judge_one(history, trace, tuple(clauses)):
            cell = counts.setdefault(verdict.clause, [0, 0])
            cell[0] += verdict.validity in (Validity.PASS, Validity.FAIL)
            cell[1] += 1
    return {clause: (a, b) for clause, (a, b) in counts.items()}


def merge(reports: list) -> bulk_intervals.IntervalReport:
    total = bulk_intervals.IntervalReport()
    for report in reports:
        total.scenarios, total.unknown, total.failed = (
            total.scenarios + report.scenarios,
            total.unknown + report.unknown,
            total.failed + report.failed,
        )
        total.run_seconds, total.judge_seconds = (
            total.run_seconds + report.run_seconds,
            total.judge_seconds + report.judge_seconds,
        )
        total.verdicts.update(report.verdicts)
    return total


if __name__ == "__main__":
    sys.exit(main())
