"""Benchmark: broker-tier scenarios/s, one history at a time vs pipelined, in the same run.

    python benchmarks/bench_broker.py [--version 3.9.2] [--scenarios 3000] [--sequential 300]
                                      [--connections 4] [--depth 2] [--batch 128] [--seed 0]
    python benchmarks/bench_broker.py --against REV [--rounds 3] [--version 3.9.2] [--scenarios 3000]

Starts one local KRaft broker (jars from Maven Central, cached in ~/.cache/ktc; its data on tmpfs
unless KTC_KAFKA_DATA_DIR=disk, see ktc/kafka/processes/scratch.py), generates append
scenarios under the broker's profile (ktc/judge/bulk_intervals.py: CreateTopic, Produce, Fetch,
ListOffsets; one partition each) and runs them twice on the same broker:

  sequential  ``PipelineRuns.run_sequential``: one history after another, one blocking
              request at a time (no pipelining), on the first
              ``--sequential`` scenarios;
  pipelined   ``BrokerAdapter.run``: CreateTopics per batch, histories in flight together on
              ``--connections`` connections with up to ``--depth`` operations each.

Both are judged the same way (every clause the broker supports, at both ends of every operation's
clock interval).  A warm-up of both (the JVM compiles the request path) is not timed.  Prints
scenarios/s run on the broker and run + judged, unknown and failed scenario counts, and the
pipelined/sequential ratio.  Exit 1 when a scenario fails.  A script, not a test: the figures
depend on load.

``--against REV``: the bulk agreement test's own measurement (suites/broker/test_bulk_agreement.py: 300
scenarios of warm-up, then ``--scenarios`` in chunks of that tree's test's ``CHUNK``, scenarios/s run and
judged) of this tree and of commit REV's, in alternating order for ``--rounds`` rounds, each in a fresh
interpreter with its own broker (tree_baseline.py); prints every sample, the medians with their spread, this
tree's over REV's, and the 1-min load.  Exit 1 when a scenario fails in either tree.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ktc.checks.verdicts import render_mismatch  # noqa: E402
from ktc.implementations.families.kafka import KAFKA  # noqa: E402
from ktc.implementations.kafka.adapter import BrokerAdapter  # noqa: E402
from ktc.implementations.kafka.settings import Started, Tuning  # noqa: E402
from ktc.judge import bulk_intervals  # noqa: E402

WARMUP = 300
# What the bulk agreement test measures, as one interpreter of either tree runs it: only names both trees have.
BULK_RUN = r"""
import json, os, re, sys, time
from ktc.implementations.families.kafka import KAFKA
from ktc.implementations.kafka.adapter import BrokerAdapter
from ktc.implementations.kafka.settings import Started
from ktc.judge import bulk_intervals
version, total, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
test = open(os.path.join("ktc", "suites", "broker", "test_bulk_agreement.py")).read()
chunk = int(re.search(r"^CHUNK = (\d+)", test, re.M)[1])  # this tree's test's own chunk
def cpu_s(pid=None):
    if pid is None:
        return sum(os.times()[:2])
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
impl = BrokerAdapter(KAFKA, Started(version))
try:
    profile = impl.profile()
    started = time.monotonic()
    histories = bulk_intervals.scenarios(profile, total + 300, seed)
    drawn = time.monotonic() - started
    clauses = bulk_intervals.clauses_for(impl, profile)
    impl.run(histories[:300])
    jvm = impl.launcher.broker.process.pid
    before = cpu_s(), cpu_s(jvm)
    report = bulk_intervals.run_intervals(impl, histories[300:], clauses, chunk)
    used = cpu_s() - before[0], cpu_s(jvm) - before[1]
finally:
    impl.close()
print(json.dumps(dict(rate=report.rate, run_rate=report.run_rate, judge_s=report.judge_seconds, drawn_s=drawn,
                      scenarios=report.scenarios, unknown=report.unknown, failed=report.failed,
                      python_ms=1000 * used[0] / report.scenarios, jvm_ms=1000 * used[1] / report.scenarios,
                      load=os.getloadavg()[0])))
"""


class Sequential:
    """The implementation with ``run`` as it was: one history at a time."""

    def __init__(self, impl: BrokerAdapter):
        self.run = impl.executor.run_sequential


def options(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="3.9.2", help="Kafka version to start (default 3.9.2)")
    parser.add_argument("--scenarios", type=int, default=3000, help="pipelined scenarios (default 3000)")
    parser.add_argument("--sequential", type=int, default=300, help="sequential scenarios (default 300)")
    parser.add_argument("--connections", type=int, default=Tuning.connections)
    parser.add_argument("--depth", type=int, default=Tuning.depth)
    parser.add_argument("--batch", type=int, default=Tuning.chunk, help="histories per CreateTopics")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", metavar="REV", help="this tree's bulk agreement figure beside commit REV's")
    parser.add_argument("--rounds", type=int, default=3, help="with --against: samples of each tree (default 3)")
    args = parser.parse_args(argv)
    if min(args.scenarios, args.sequential, args.connections, args.depth, args.batch, args.rounds) < 1:
        parser.error("every count must be at least 1")
    return args


def measure(label: str, runner, histories: list, clauses: list) -> bulk_intervals.IntervalReport:
    report = bulk_intervals.IntervalReport()
    found = bulk_intervals.check(runner, histories, clauses, report)
    print(
        f"{label:<11} {report.scenarios:>9,} {report.run_seconds:>8.2f} {report.run_rate:>10.0f} "
        f"{report.rate:>12.0f} {report.unknown:>8} {report.failed:>7}",
        flush=True,
    )
    if found is not None:
        print(f"  FAILED: {found[1][0].clause}: {render_mismatch(found[1][0].mismatch)}\n  on {found[0]}")
    return report


def against(args) -> int:
    """This tree's and REV's bulk agreement figures, alternating, with medians and the ratio."""
    import tree_baseline

    trees = {
        "this tree": tree_baseline.layout(ROOT),
        args.against: tree_baseline.layout(tree_baseline.checkout(args.against)),
    }
    print(
        f"bulk agreement on Kafka {args.version}, {args.scenarios} scenarios a sample, seed {args.seed}, "
        f"{args.rounds} rounds; {os.cpu_count()} cores, 1-min load {os.getloadavg()[0]:.1f}"
    )
    samples: dict[str, list[dict]] = {name: [] for name in trees}
    for round_ in range(args.rounds):
        for name in list(trees)[:: 1 if round_ % 2 == 0 else -1]:
            got = tree_baseline.run(trees[name], BULK_RUN, [args.version, str(args.scenarios), str(args.seed)])
            samples[name].append(got)
            print(
                f"  round {round_ + 1} {name:<10} {got['rate']:>6.0f} scenarios/s judged ({got['run_rate']:.0f}/s run, "
                f"judging {got['judge_s']:.1f} s, drawing {got['drawn_s']:.1f} s; CPU a scenario: Python "
                f"{got['python_ms']:.1f} ms, broker {got['jvm_ms']:.1f} ms), {got['unknown']} unknown, "
                f"{got['failed']} failed; 1-min load {got['load']:.1f}",
                flush=True,
            )
    for figure, what in (
        ("rate", "scenarios/s judged"),
        ("python_ms", "Python CPU ms a scenario"),
        ("jvm_ms", "broker CPU ms a scenario"),
    ):
        mine, base = ([s[figure] for s in samples[name]] for name in trees)
        print(
            f"{what}, median (min-max): this tree {tree_baseline.spread(mine)}, {args.against} "
            f"{tree_baseline.spread(base)}: {statistics.median(mine) / statistics.median(base):.2f}x"
        )
    print(f"1-min load {os.getloadavg()[0]:.1f}")
    return 1 if any(s["failed"] for runs in samples.values() for s in runs) else 0


def main(argv=None) -> int:
    args = options(argv)
    if args.against:
        return against(args)
    tuning = Tuning(chunk=args.batch, connections=args.connections, depth=args.depth)
    impl = BrokerAdapter(KAFKA, Started(args.version, tuning=tuning))
    try:
        started = time.monotonic()
        profile = impl.profile()
        where = impl.launcher.data or "the broker's temp dir (KTC_KAFKA_DATA_DIR=disk or no tmpfs)"
        print(
            f"Kafka {args.version} (profile {profile}) started in {time.monotonic() - started:.1f} s, data in {where}; "
            f"{os.cpu_count()} cores, Python {platform.python_version()}, 1-min load {os.getloadavg()[0]:.1f}; "
            f"{args.connections} connections x depth {args.depth}, {args.batch} histories per CreateTopics"
        )
        histories = bulk_intervals.scenarios(profile, max(args.scenarios, args.sequential) + WARMUP, args.seed)
        warmup, histories = histories[:WARMUP], histories[WARMUP:]
        clauses = bulk_intervals.clauses_for(impl, profile)
        impl.run(warmup)
        impl.executor.run_sequential(warmup[:30])
        print(
            f"{'mode':<11} {'scenarios':>9} {'run s':>8} {'run/s':>10} {'run+judge/s':>12} {'unknown':>8} {'failed':>7}"
        )
        sequential = measure("sequential", Sequential(impl), histories[: args.sequential], clauses)
        pipelined = measure("pipelined", impl, histories[: args.scenarios], clauses)
        print(
            f"pipelined/sequential: {pipelined.run_rate / sequential.run_rate:.1f}x on the broker, "
            f"{pipelined.rate / sequential.rate:.1f}x run and judged; 1-min load {os.getloadavg()[0]:.1f}"
        )
        return 1 if sequential.failed or pipelined.failed else 0
    finally:
        impl.close()


if __name__ == "__main__":
    sys.exit(main())
