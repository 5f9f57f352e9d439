"""Benchmark: broker-tier scenarios/s, one history at a time vs pipelined, in the same run.

    python benchmarks/bench_broker.py [--version 3.9.2] [--scenarios 3000] [--sequential 300]
                                      [--connections 4] [--depth 2] [--batch 128] [--seed 0]

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
"""

from __future__ import annotations

import argparse
import os
import platform
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
    args = parser.parse_args(argv)
    if min(args.scenarios, args.sequential, args.connections, args.depth, args.batch) < 1:
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


def main(argv=None) -> int:
    args = options(argv)
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
