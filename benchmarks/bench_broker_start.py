"""Benchmark: a local broker's start with its release's class archive against without, in alternation.

What a test waits for and what the machine pays each time ktc starts a broker: StorageTool's format, then the
broker until it answers ApiVersions (``LocalBroker.start``), the wall time and the JVMs' CPU (the format's and
the broker's, read from ``/proc`` before the broker is stopped).  The baseline is the same start with
``KTC_KAFKA_CLASS_ARCHIVE=off`` (class_archive.py), measured in the same minutes (A, B, A, B, ...).  Prints
each start, then per setting the median and spread of both figures, and the ratios of the medians.

    .venv/bin/python benchmarks/bench_broker_start.py                    # 3.9.2, five starts each
    .venv/bin/python benchmarks/bench_broker_start.py --version 4.4.0 --rounds 8
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
from pathlib import Path

from ktc.kafka.processes import archive_maker, class_archive, provision
from ktc.kafka.processes.broker import LocalBroker

TICK = os.sysconf("SC_CLK_TCK")


def jvm_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def reaped_children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_start(version: str, archive: bool) -> tuple[float, float]:
    """(seconds to answering, CPU seconds of the format's and the broker's JVMs)."""
    if archive:
        os.environ.pop(class_archive.SWITCH, None)
    else:
        os.environ[class_archive.SWITCH] = "off"
    formats_before = reaped_children_cpu_s()
    with LocalBroker(version) as broker:
        assert broker.pid is not None and broker.startup_s is not None
        broker_cpu = jvm_cpu_s(broker.pid)
        format_cpu = reaped_children_cpu_s() - formats_before  # the format JVM, waited for by start()
        return broker.startup_s, broker_cpu + format_cpu


def spread(values: list[float], unit: str) -> str:
    return f"median {statistics.median(values):.2f} {unit} ({min(values):.2f}-{max(values):.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=provision.DEFAULT_VERSIONS[0], help="the Kafka release (default 3.9.2)")
    parser.add_argument("--rounds", type=int, default=5, help="starts of each setting (default 5)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    lib = provision.lib_dir(args.version)
    print(archive_maker.make(args.version, lib))
    if not class_archive.flags(lib):
        print(f"bench_broker_start: no class archive for {args.version} here; nothing to compare", file=sys.stderr)
        return 2
    runs: dict[str, list[tuple[float, float]]] = {"archive": [], "no archive": []}
    for round_ in range(args.rounds):
        for name in runs:
            wall, cpu = one_start(args.version, name == "archive")
            runs[name].append((wall, cpu))
            print(f"  round {round_ + 1} {name:<10} {wall:5.2f} s to answering, {cpu:5.2f} CPU-s", flush=True)
    os.environ.pop(class_archive.SWITCH, None)
    medians = {}
    for name, got in runs.items():
        walls, cpus = [w for w, _ in got], [c for _, c in got]
        medians[name] = (statistics.median(walls), statistics.median(cpus))
        print(f"{name:<10} start {spread(walls, 's')}, JVM CPU {spread(cpus, 'CPU-s')}")
    (wall_a, cpu_a), (wall_b, cpu_b) = medians["archive"], medians["no archive"]
    print(f"Kafka {args.version}, archive against none: start {wall_a / wall_b:.2f}x, JVM CPU {cpu_a / cpu_b:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
