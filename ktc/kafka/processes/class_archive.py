"""A class-data sharing archive per Kafka release: the classes a broker loads, mapped instead of loaded.

A broker ktc starts spends most of its first seconds loading and verifying a few thousand classes, and a run
starts dozens (every release, every restart, every cluster node, StorageTool's format before each).  The JVM can
write the classes it loaded to an archive as it exits (``-XX:ArchiveClassesAtExit``, Java 13+) and map them
from it at the next start (``-XX:SharedArchiveFile``).  Measured on 3.9.2 (2-core VM, the broker's flags):
start to answering, 2.1 -> 1.2 CPU-s and 3.7-5.3 -> 1.1-2.1 s; StorageTool format 0.58 -> 0.36 CPU-s.

The archive is made once per release and Java runtime, by ``make``: a broker started for it, given one topic,
one produce and one ListOffsets (the request paths every test takes), then stopped with SIGTERM, since a JVM
writes the archive only on a clean exit (ktc's brokers are otherwise SIGKILLed).  ``./run setup`` makes it for
the releases it fetches (provision.py).  Without one a broker starts as before: ``flags`` is empty.  A JVM that
cannot use an archive (another runtime, changed jars) says so in its log and loads its classes as usual.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

STOP_S = 60.0  # for the broker to shut down and write the archive
TOPIC = "ktc-class-archive"
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


def make(version: str, lib: Path) -> str:
    """The archive of ``version`` (jars in ``lib``), made unless there; one line saying what was done."""
    archive = path(lib)
    if archive is None:
        return f"{version}: no java on PATH, no class archive"
    if archive.exists():
        return f"{version}: class archive {archive.name}"
    staging = archive.with_name(f"{archive.stem}.{os.getpid()}.tmp")
    try:
        try:
            written = _write(version, staging) and usable(staging, lib)
        except Exception as error:  # the archive is an optimisation: whatever stops it, brokers start without
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            return f"{version}: no class archive ({type(error).__name__}: {first[:200]}); brokers load their classes"
        if not written:
            return f"{version}: no class archive (none written, or unusable); brokers load their classes as usual"
        staging.rename(archive)  # whole or absent: a reader never maps half an archive
        return f"{version}: class archive {archive.name} ({archive.stat().st_size / 1e6:.0f} MB)"
    finally:
        staging.unlink(missing_ok=True)


def usable(archive: Path, lib: Path) -> bool:
    """Whether a JVM maps ``archive`` with ``lib``'s jars (``-Xshare:on`` makes any failure an exit code: a
    damaged archive must never reach a broker, which it could crash)."""
    java = ["java", "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", str(lib / "*")]
    with tempfile.TemporaryDirectory(prefix="ktc-class-archive-") as scratch:  # a crashed JVM's hs_err file
        done = subprocess.run(
            [*java, "kafka.tools.StorageTool", "random-uuid"], capture_output=True, timeout=STOP_S, cwd=scratch
        )
    return done.returncode == 0


def _write(version: str, staging: Path) -> bool:
    """Start a broker whose JVM writes ``staging`` at exit, exercise it, stop it cleanly."""
    from ktc.reference.types import Batch, Record

    from ..client.security import PLAINTEXT
    from ..client.wire import Client
    from .broker import LocalBroker

    saved = os.environ.get("JDK_JAVA_OPTIONS")
    os.environ["JDK_JAVA_OPTIONS"] = f"-XX:ArchiveClassesAtExit={staging}"  # read by the java launcher
    try:
        with LocalBroker(version) as broker:
            with Client(broker.bootstrap, security=PLAINTEXT) as client:
                client.create_topic(TOPIC)
                client.produce(TOPIC, Batch((Record(0),)))
                client.list_offsets(TOPIC, -1)
            assert broker.process is not None
            broker.process.send_signal(signal.SIGTERM)
            try:
                broker.process.wait(STOP_S)
            except subprocess.TimeoutExpired:
                return False
    finally:
        if saved is None:
            os.environ.pop("JDK_JAVA_OPTIONS", None)
        else:
            os.environ["JDK_JAVA_OPTIONS"] = saved
    return staging.exists() and staging.stat().st_size > 0
