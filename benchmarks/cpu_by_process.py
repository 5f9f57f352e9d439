"""Where a run's CPU goes, by kind of process: Kafka's JVMs, Spark's, pytest's workers, `ktc` children, ...

Runs a command and samples every process of the machine once a second (``/proc/<pid>/stat``), keeping the CPU
each used while the command ran (for a process that was there before, only what it used since); prints the
command's wall time and, per kind, the CPU seconds and the number of processes, the largest first.  A process
that lives less than a sample interval is missed, so the kinds add up to a little less than the machine spent.
`time` cannot say this: a JVM ktc starts is not waited for by the shell, so its CPU is not in `time`'s user+sys.

    .venv/bin/python benchmarks/cpu_by_process.py -- ./run conformance
    .venv/bin/python benchmarks/cpu_by_process.py --top 15 -- env CI=true bash .ci/run
    .venv/bin/python benchmarks/cpu_by_process.py --by-test --top 40 -- env CI=true bash .ci/run

``--by-test`` splits each kind by the test file that started the process (``PYTEST_CURRENT_TEST`` in its
environment, which a JVM or a ``ktc`` child inherits from the test or fixture that started it): which tests
start the brokers, Spark sessions and commands that cost the most.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
KINDS = (  # (kind, every word its command line holds), the first that matches
    ("kafka JVM", ("java", "kafka.Kafka")),
    ("Spark JVM", ("java", "org.apache.spark")),
    ("Spark JVM", ("spark-class",)),
    ("PySpark worker", ("pyspark.daemon",)),
    ("other JVM", ("java",)),
    ("pytest-xdist worker", ("python", "exec(eval(sys.stdin.readline()))")),
    ("ktc run's pytest", ("python", "--ktc-run-options")),
    ("ktc command", ("python", "-m ktc")),
    ("ktc command", ("bin/ktc",)),
    ("pytest", ("python", "pytest")),
    ("other Python", ("python",)),
)


def kind(command: str) -> str:
    for name, words in KINDS:
        if all(word in command for word in words):
            return name
    return (command.split(" ", 1)[0].rsplit("/", 1)[-1] or "(kernel or gone)")[:40]


def cpu_and_start(pid: str) -> tuple[float, str]:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICK, fields[19]


def started_by(pid: str) -> str:
    """The test file whose test (or fixture) was running when the process started, or "" (not under pytest)."""
    for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
        if entry.startswith(b"PYTEST_CURRENT_TEST="):
            return entry.split(b"=", 1)[1].decode(errors="replace").split("::", 1)[0]
    return ""


def command_of(pid: str) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()


class Sampler:
    """Every process's CPU since the sampler started: ``used[(pid, start)] = [kind, CPU first seen, CPU last seen,
    when first seen, seconds alive since]``."""

    def __init__(self, by_test: bool = False) -> None:
        self.by_test = by_test
        self.used: dict[tuple[str, str], list] = {}
        self.stop = threading.Event()
        self.sample(before=True)

    def sample(self, before: bool = False) -> None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cpu, start = cpu_and_start(pid)
                seen = self.used.get((pid, start))
                if seen is None:
                    self.used[(pid, start)] = [self.label(pid), cpu if before else 0.0, cpu, time.monotonic(), 0.0]
                else:
                    seen[2], seen[4] = cpu, time.monotonic() - seen[3]
            except (OSError, ValueError, IndexError):  # gone between listing and reading
                continue

    def label(self, pid: str) -> str:
        name = kind(command_of(pid))
        test = started_by(pid) if self.by_test else ""
        return f"{name}  <- {test}" if test else name

    def run(self) -> None:
        while not self.stop.wait(1.0):
            self.sample()

    def by_kind(self) -> tuple[Counter, Counter, Counter]:
        """CPU seconds, processes and seconds alive (summed over the processes), by kind."""
        seconds, count, alive = Counter(), Counter(), Counter()
        for name, first, last, _since, lived in self.used.values():
            if last - first > 0.05:
                seconds[name] += last - first
                count[name] += 1
                alive[name] += lived
        return seconds, count, alive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=12, help="kinds shown (default 12)")
    parser.add_argument("--by-test", action="store_true", help="split each kind by the test file that started it")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    sampler = Sampler(args.by_test)
    thread = threading.Thread(target=sampler.run, daemon=True)
    thread.start()
    started = time.monotonic()
    code = subprocess.run(command).returncode
    wall = time.monotonic() - started
    sampler.stop.set()
    thread.join()
    sampler.sample()
    seconds, count, alive = sampler.by_kind()
    total = sum(seconds.values())
    print(f"\n{' '.join(command)}: exit {code}, {wall:.0f} s wall, {total:.0f} CPU-s seen ({total / wall:.2f} cores)")
    for name, spent in seconds.most_common(args.top):
        print(f"{spent:8.1f} CPU-s {count[name]:5d} processes {alive[name]:7.0f} s alive  {name}")
    return code


if __name__ == "__main__":
    sys.exit(main())
