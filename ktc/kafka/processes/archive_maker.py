"""A release's class archive (class_archive.py), made by a broker started for it.

A JVM writes the classes it loaded to an archive only as it exits cleanly (``-XX:ArchiveClassesAtExit``), and the
brokers ktc starts are otherwise SIGKILLed.  So a broker of the release is started with that flag (through
``JDK_JAVA_OPTIONS``, which the format's JVM reads too), given one topic, one produce and one ListOffsets (the
request paths every test takes), then stopped with SIGTERM.  The archive is written to a staging name, checked
(``class_archive.usable``: a damaged one could crash the JVM that maps it) and renamed into place.

    python -m ktc.kafka.processes.archive_maker 3.9 4 3.7.2     # what ./run setup runs, after the jars
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from ktc.cache import ProvisionError

from . import provision
from .broker import LocalBroker
from .class_archive import path, usable

STOP_S = 60.0  # for the broker to shut down and write the archive
TOPIC = "ktc-class-archive"


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


def _write(version: str, staging: Path) -> bool:
    """Start a broker whose JVM writes ``staging`` at exit, exercise it, stop it cleanly."""
    from ktc.reference.types import Batch, Record

    from ..client.security import PLAINTEXT  # lazy, as broker.py: the client loads kafka-python
    from ..client.wire import Client

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


def main(argv: list[str]) -> int:
    """One line per release (a version, or a line such as 3.9): its archive made, found, or why there is none."""
    for name in argv or list(provision.DEFAULT_VERSIONS):
        try:
            version = provision.release(name)
            print(make(version, provision.lib_dir(version)))
        except ProvisionError as error:
            print(f"archive_maker: {name}: {error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
