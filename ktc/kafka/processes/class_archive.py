"""A class-data sharing archive per Kafka release: the classes a broker loads, mapped instead of loaded.

A broker ktc starts spends most of its first seconds loading and verifying a few thousand classes, and a run
starts dozens (every release, every restart, every cluster node, StorageTool's format before each).  The JVM can
write the classes it loaded to an archive as it exits (``-XX:ArchiveClassesAtExit``, Java 13+) and map them
from it at the next start (``-XX:SharedArchiveFile``).  A 3.9.2 broker's start, StorageTool's format included, to
answering: 2.06 -> 1.25 s and 2.50 -> 1.60 CPU-s (benchmarks/bench_broker_start.py, medians of 5 alternated).

The archive is made once per release and Java runtime (archive_maker.py: a broker exercised, then stopped
cleanly); ``./run setup`` makes it for the releases it fetches.  Without one a broker starts as before: ``flags``
is empty.  A JVM that cannot use an archive (another runtime, changed jars) says so in its log and loads its
classes as usual.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

CHECK_S = 60.0  # for the JVM that checks an archive
SWITCH = "KTC_KAFKA_CLASS_ARCHIVE"


def path(lib: Path) -> Path | None:
    """Where the archive of the jars in ``lib`` (as fetched: its stamp's time) for this machine's ``java`` lives;
    None without a ``java``."""
    java = shutil.which("java")
    if java is None:
        return None
    real, stamp = Path(java).resolve(), lib / ".complete"
    fetched = stamp.stat().st_mtime_ns if stamp.exists() else 0
    key = hashlib.sha256(f"{real}\0{real.stat().st_mtime_ns}\0{fetched}".encode()).hexdigest()[:12]
    return lib.parent / f"classes-{key}.jsa"


def flags(lib: Path) -> tuple[str, ...]:
    """The JVM flag that maps the release's archive, when there is one (and KTC_KAFKA_CLASS_ARCHIVE is not
    ``off``: the baseline of benchmarks/bench_broker_start.py)."""
    if os.environ.get(SWITCH, "").lower() == "off":
        return ()
    archive = path(lib)
    return (f"-XX:SharedArchiveFile={archive}",) if archive is not None and archive.exists() else ()


def usable(archive: Path, lib: Path) -> bool:
    """Whether a JVM maps ``archive`` with ``lib``'s jars (``-Xshare:on`` makes any failure an exit code: a
    damaged archive must never reach a broker, which it could crash)."""
    java = ["java", "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", str(lib / "*")]
    with tempfile.TemporaryDirectory(prefix="ktc-class-archive-") as scratch:  # a crashed JVM's hs_err file
        done = subprocess.run(
            [*java, "kafka.tools.StorageTool", "random-uuid"], capture_output=True, timeout=CHECK_S, cwd=scratch
        )
    return done.returncode == 0
