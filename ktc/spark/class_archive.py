"""A class-data sharing archive for Spark's driver JVM: the classes a session loads, mapped instead of loaded.

A session's JVM spends its first seconds loading and verifying some 15,000 classes (Spark SQL, Catalyst, Janino,
Netty, Arrow), and a run starts a dozen sessions (``ktc run``'s Spark target, every ``ktc audit``, a standalone
cluster's driver).  Java maps them from an archive instead (``-XX:SharedArchiveFile``).  A PySpark driver JVM never
exits cleanly, so the archive is not written at exit (``-XX:ArchiveClassesAtExit``, what the brokers' archives use)
but in two steps: a session doing the work ktc's tests do lists the classes as it loads them
(``-XX:DumpLoadedClassList``), then ``java -Xshare:dump`` writes that list for the same class path
(``ktc.implementations.spark.class_archive``, run by ``./run setup``).  A session's start and a small query,
JVM CPU: 13.0 -> 8.3 s (benchmarks/README.md).

The archive belongs to one PySpark install and one Java runtime (its name hashes both); without one, or with
``KTC_SPARK_CLASS_ARCHIVE=off``, a session starts as before.  A JVM that cannot map it (a changed class path)
loads its classes as usual.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ktc.cache import cache_root

SWITCH = "KTC_SPARK_CLASS_ARCHIVE"
MAIN_CLASS = "org.apache.spark.deploy.SparkSubmit"  # where a driver's JVM options end on its command line
CHECK_S = 60.0


def path() -> Path | None:
    """Where this machine's archive for the installed PySpark and ``java`` lives; None without either."""
    java = shutil.which("java")
    try:
        import pyspark
    except ImportError:
        return None
    if java is None or pyspark.__file__ is None:
        return None
    real, jars = Path(java).resolve(), Path(pyspark.__file__).parent / "jars"
    if not jars.is_dir():
        return None
    words = [str(real), str(real.stat().st_mtime_ns), pyspark.__version__, str(jars), *sorted(os.listdir(jars))]
    key = hashlib.sha256("\0".join(words).encode()).hexdigest()[:12]
    return cache_root() / "spark" / f"classes-{key}.jsa"


def flags() -> tuple[str, ...]:
    """The driver JVM's flag that maps the archive, when there is one and the switch is not ``off``."""
    if os.environ.get(SWITCH, "").lower() == "off":
        return ()
    archive = path()
    return (f"-XX:SharedArchiveFile={archive}",) if archive is not None and archive.exists() else ()


def jvm_options(command: list[str]) -> list[str]:
    """A driver JVM's options (class path included) from its command line: between ``java`` and Spark's main
    class, without a class list being written."""
    end = command.index(MAIN_CLASS)
    return [word for word in command[1:end] if not word.startswith("-XX:DumpLoadedClassList=")]


def dump(java: str, options: list[str], class_list: Path, archive: Path) -> None:
    """Write ``archive`` from ``class_list`` for the class path in ``options``; RuntimeError with Java's last line."""
    command = [
        java,
        *options,
        "-Xshare:dump",
        f"-XX:SharedClassListFile={class_list}",
        f"-XX:SharedArchiveFile={archive}",
    ]
    with tempfile.TemporaryDirectory(prefix="ktc-spark-archive-") as scratch:  # a crashed JVM's hs_err file
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=scratch)
    if done.returncode != 0 or not archive.exists():
        said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise RuntimeError(f"java -Xshare:dump failed (exit {done.returncode}): {said}")


def usable(java: str, options: list[str], archive: Path) -> bool:
    """Whether a JVM with these options maps ``archive`` (``-Xshare:on`` makes any mismatch an exit code)."""
    command = [java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", *options, "-version"]
    done = subprocess.run(command, capture_output=True, timeout=CHECK_S)
    return done.returncode == 0
