"""The single home of Spark configuration: one lazily built, reused session per process.

Settings measured on this machine kind (research note A2): UI off, loopback, UTC, ANSI on,
Arrow on with no silent fallback, few shuffle partitions, no Python call sites captured per Column.
``--spark-master`` and any ``spark.*`` option pass through ``configure()`` before the first use,
so the same code runs on a cluster.  The session is stopped at interpreter exit (normal exit, failure, Ctrl-C).
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.shuffle.partitions": "4",
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
_master = os.environ.get("KTC_SPARK_MASTER", "local[*]")
_overrides: dict[str, str] = dict(
    line.split("=", 1) for line in os.environ.get("KTC_SPARK_CONF", "").splitlines() if "=" in line)
_session = None


def configure(master: str | None = None, **settings: str) -> None:
    """Set the master and extra ``spark.*`` settings; only before the session exists."""
    global _master
    if _session is not None:
        raise RuntimeError("the Spark session already exists; configure() must come first")
    _master = master or _master
    _overrides.update(settings)


def get():
    """The shared SparkSession (built on first use)."""
    global _session
    if _session is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession
        builder = SparkSession.builder.master(_master).appName("ktc")
        warehouse = tempfile.mkdtemp(prefix="ktc-spark-warehouse-")
        atexit.register(shutil.rmtree, warehouse, True)  # registered before stop(), so it runs after it
        for key, value in {**DEFAULTS, "spark.sql.warehouse.dir": warehouse, **_overrides}.items():
            builder = builder.config(key, value)
        _session = builder.getOrCreate()
        _session.sparkContext.setLogLevel("ERROR")
        atexit.register(stop)
    return _session


def stop() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None
