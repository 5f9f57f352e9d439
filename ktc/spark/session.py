"""The single home of Spark configuration: one lazily built, reused session per process.

Settings measured on this machine kind (research note A2): UI off, loopback, UTC, ANSI on,
Arrow on with no silent fallback, few shuffle partitions, no Python call sites captured per Column.
``--spark-master`` and any ``spark.*`` option pass through ``configure()`` before the first use,
so the same code runs on a cluster.  The session is stopped at interpreter exit (normal exit, failure, Ctrl-C).
The JVM's own output goes to a log file, unlinked once the session is up (nothing is left behind, however
the process ends); a session that cannot start raises ``SparkStartError``: one line with the root cause
and that log, kept (never a py4j traceback).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from ktc.cache import resolving
from ktc.spark import class_archive

DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    # A test's input is small (a hundred histories): Spark's fixed cost per query decides, so few shuffle
    # partitions, no adaptive re-planning (13 jobs per call -> 8) and no automatic broadcasts
    # (benchmarks/bench_spark_small.py; the throughput bench, benchmarks/bench_append.py, turns AQE back on)
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    "spark.driver.memory": "2g",
    # PySpark's DataFrame debugging records the Python call site of every Column function: about five
    # py4j round trips each, 4,800 of the 6,700 an evaluation's plan costs (benchmarks/README.md)
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}
JAVA_OPTIONS = "spark.driver.extraJavaOptions"
_master = os.environ.get("KTC_SPARK_MASTER", "local[*]")
_overrides: dict[str, str] = dict(
    line.split("=", 1) for line in os.environ.get("KTC_SPARK_CONF", "").splitlines() if "=" in line
)
_session = None
_starting = threading.Lock()


def configure(master: str | None = None, **settings: str) -> None:
    """Set the master and extra ``spark.*`` settings; only before the session exists."""
    global _master
    if _session is not None:
        raise RuntimeError("the Spark session already exists; configure() must come first")
    _master = master or _master
    _overrides.update(settings)


class SparkStartError(RuntimeError):
    """Spark could not start: the root cause and the log holding the JVM's whole output, in one line."""


def get():
    """The shared SparkSession (built on first use, by one thread at a time); ``SparkStartError`` when it
    cannot start."""
    with _starting:
        return _get()


def _get():
    global _session
    if _session is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        _session = started(settings())
        _session.sparkContext.setLogLevel("ERROR")
        atexit.register(stop)
    return _session


def settings() -> dict[str, str]:
    """Every setting of the session: master, name, the defaults, a fresh warehouse, then the overrides; the driver
    JVM maps this machine's class archive of Spark when there is one (class_archive.py)."""
    warehouse = tempfile.mkdtemp(prefix="ktc-spark-warehouse-")
    atexit.register(shutil.rmtree, warehouse, True)  # registered before stop(), so it runs after it
    conf = {
        "spark.master": _master,
        "spark.app.name": "ktc",
        **DEFAULTS,
        "spark.sql.warehouse.dir": warehouse,
        **_overrides,
    }
    java = " ".join([conf.get(JAVA_OPTIONS, ""), *class_archive.flags()]).strip()
    return {**conf, JAVA_OPTIONS: java} if java else conf


def started(conf: dict[str, str]):
    """A session on a JVM whose output goes to a log file (PySpark's ``popen_kwargs``), so a JVM that
    exits at once (no Java, a bad option, an unresolvable package) is named by its own words."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    fd, log = tempfile.mkstemp(prefix="ktc-spark-", suffix=".log")
    spark_conf = SparkConf(loadDefaults=False).setAll(list(conf.items()))
    try:
        with os.fdopen(fd, "ab") as out:
            gateway = SparkContext._gateway or launched(spark_conf, out)
        SparkContext(conf=spark_conf, gateway=gateway)
        spark = SparkSession.builder.config(map=dict(conf)).getOrCreate()
    except Exception as error:
        abandon()
        raise SparkStartError(f"Spark could not start: {why_not(error, log)}; see {log}") from None
    remove(log)  # the JVM writes on to the unlinked file; a log is kept only when the start failed
    return spark


def launched(spark_conf, out):
    """PySpark's JVM gateway with its stdout and stderr in ``out``; a ``spark.jars.packages`` resolution
    (Ivy, at JVM start) waits for ktc's resolution lock: two Ivy runs never share a cache at once."""
    from pyspark.java_gateway import launch_gateway

    if not spark_conf.contains("spark.jars.packages"):
        return launch_gateway(spark_conf, popen_kwargs={"stdout": out, "stderr": out})
    with resolving():
        return launch_gateway(spark_conf, popen_kwargs={"stdout": out, "stderr": out})


def abandon() -> None:
    """After a failed start: stop the JVM if one came up, so nothing outlives the error."""
    from pyspark import SparkContext

    gateway, SparkContext._gateway, SparkContext._jvm = SparkContext._gateway, None, None
    SparkContext._active_spark_context = None
    if gateway is not None:
        with contextlib.suppress(Exception):  # a JVM that died mid-start: nothing to say goodbye to
            gateway.shutdown()
        if gateway.proc is not None:
            gateway.proc.kill()
            gateway.proc.wait()


def why_not(error: Exception, log: str) -> str:
    """The root cause: the JVM's output when it exited before answering, else the error's own text."""
    text = str(error)
    if "JAVA_GATEWAY_EXITED" in text:
        text = Path(log).read_text(errors="replace") or text
    return root_cause(text)


def root_cause(text: str) -> str:
    """The line of a JVM's output that says why: its last exception (``Caused by:``, ``Exception in
    thread``), else the first line (a shell's ``.../java: No such file or directory``)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    thrown = [line for line in lines if line.startswith(("Caused by:", "Exception in thread"))]
    line = thrown[-1] if thrown else (lines[0] if lines else "no output")
    return re.sub(r'^(Caused by: |Exception in thread "[^"]*" )', "", line)[:300]


def remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def stop() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None
