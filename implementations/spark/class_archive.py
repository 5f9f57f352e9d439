"""Spark's class archive (ktc/spark/class_archive.py), made by a session that does what ktc's tests do.

The session's JVM lists every class it loads (``-XX:DumpLoadedClassList``) while the Spark implementation judges
histories of every kind (appends and whole histories with segments, retention and reads, under three profiles);
the session stops, ``java -Xshare:dump`` writes the list for the driver's own class path, the archive is checked
(``-Xshare:on``: a damaged one must never reach a session) and renamed into place.

    python -m ktc.implementations.spark.class_archive      # what ./run setup runs (once; about half a minute)
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from ktc.cache import holding
from ktc.spark import class_archive, session

PROFILES = ("kip", "kafka-3.5", "kafka-4")
PER_PROFILE = 30  # histories of each kind and profile: enough to reach every operator of the plan
SEED = 0


def workload() -> list:
    """Histories for the Spark implementation: appends and whole histories of each profile, fixed by SEED."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    from ktc.strategies import append_histories, histories

    drawn: list = []
    for profile in PROFILES:
        for strategy in (append_histories(profile=profile), histories(profile=profile, brokers=3, max_ops=10)):

            @fixed_seed(SEED)
            @settings(
                max_examples=PER_PROFILE,
                database=None,
                deadline=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(strategy)
            def collect(history) -> None:
                drawn.append(history)

            collect()
    return drawn


def listed(class_list: Path) -> list[str]:
    """Judge the workload on a session that lists its classes into ``class_list``; the driver JVM's command."""
    from pyspark import SparkContext

    from . import SparkImplementation

    listing = f"{session.DEFAULTS[session.JAVA_OPTIONS]} -XX:DumpLoadedClassList={class_list}"
    session.configure(**{session.JAVA_OPTIONS: listing})
    implementation = SparkImplementation()
    implementation.prepare()
    gateway = SparkContext._gateway
    assert gateway is not None and gateway.proc is not None
    command = Path(f"/proc/{gateway.proc.pid}/cmdline").read_text().split("\0")
    implementation.run(workload())
    session.stop()
    return command


def make() -> str:
    """The archive, made unless there; one line saying what was done."""
    archive = class_archive.path()
    if archive is None:
        return "spark: no java or PySpark, no class archive"
    if archive.exists():
        return f"spark: class archive {archive.name}"
    with holding(archive.with_name(".make.lock")):  # one maker at a time; a second finds the first one's archive
        return made(archive)


def made(archive: Path) -> str:
    """``make``'s work, under its lock."""
    if archive.exists():
        return f"spark: class archive {archive.name}"
    class_list, staging = (archive.with_name(f"{archive.stem}.{os.getpid()}.{end}") for end in ("classlist", "tmp"))
    print("spark: writing a class archive of Spark's driver JVM (once)", file=sys.stderr)  # the silent half minute
    try:
        command = listed(class_list)
        options = class_archive.jvm_options(command)
        class_archive.dump(command[0], options, class_list, staging)
        if not class_archive.usable(command[0], options, staging):
            return "spark: no class archive (the one written cannot be mapped); sessions load their classes as usual"
        staging.rename(archive)  # whole or absent: a session never maps half an archive
        return f"spark: class archive {archive.name} ({archive.stat().st_size / 1e6:.0f} MB)"
    finally:
        class_list.unlink(missing_ok=True)
        staging.unlink(missing_ok=True)


def main() -> int:
    # stopped with ./run (SIGTERM to its group): the staging files go in ``made``'s finally, not left in the cache
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        print(make())
    except Exception as error:  # the archive is an optimisation: whatever stops it, sessions start without
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        print(f"spark: no class archive ({type(error).__name__}: {first[:200]})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
