"""ktc's Spark implementation where users run it: on a Spark standalone master and worker.

Starts a real master and one worker (1 core, 1g) from the installed PySpark distribution on loopback
(suites/spark/standalone.py: the classes start-master.sh / start-worker.sh would run, through
bin/spark-class), then runs ``ktc run --impl spark --spark-master spark://127.0.0.1:<port>`` on a
small selection in a child process (ktc's Spark session is one per process, and this process may
already hold a local one).  The child's ``assert_conforms`` tests judge Spark's answers against the
reference; here we require ktc run's exit 0, clause rows that pass (``unknown`` allowed: no example of
the fixed seed drew that clause; never fail or error), at least one pass, and proof that the work ran
on the cluster: the master lists the finished application, and the worker's executor ran tasks, some
of them in Python (ktc's applyInArrow code, imported on the executor).

Runs only when --impl includes spark (the Spark tier); once per run, not once per implementation.
"""

import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ktc.judge.declined import unsupported
from ktc.plugin.state import split
from ktc.suites._support import SMALL_JVM, SMALL_SPARK_CHILD
from ktc.suites.spark.standalone import ClusterError, StandaloneCluster, tail, with_repo_on_path

# the append path (KIP-937 validation) and the segment path (KIP-33 ListOffsets: applyInArrow, Python on the
# executors); a fixed seed, so that a clause row's pass/unknown does not come and go between runs
SELECTION = [
    "suites/kip937/test_validation.py",
    "suites/kip33/test_list_offsets.py",
    "--hypothesis-seed=0",
    "-k",
    "generated_batches_are_validated or first_offset_at_or_after",
]
CHILD_TIMEOUT_S = 300.0
APP_NAME = "ktc"  # ktc/spark/session.py's appName
FINISHED_TASK = "Finished task"  # the executor's INFO line per task
PYTHON_TASK = "Starting Python task execution"  # applyInArrow (segments.py) run by the executor's Python


def require_spark_tier(config: pytest.Config) -> None:
    if "spark" not in split(config.getoption("impl") or []):
        raise unsupported("the standalone-cluster run is the Spark tier's (--impl spark)")
    pytest.importorskip("pyspark", reason="the Spark tier needs the [spark] extra (pip install -e '.[spark]')")
    home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (home and Path(home, "bin", "java").exists()):
        pytest.fail("the Spark standalone master and worker need a Java 17+ runtime: no java on PATH or in JAVA_HOME")


def child_env() -> dict[str, str]:
    """A run of its own (none of this pytest's xdist or ktc run identity), on loopback, with the repository
    importable by the driver and by the executors' Python workers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "KTC_RUN_ID"}
    small = SMALL_SPARK_CHILD["KTC_SPARK_CONF"] + f"\nspark.executor.extraJavaOptions={SMALL_JVM}"
    return with_repo_on_path({**env, "SPARK_LOCAL_IP": "127.0.0.1", "KTC_SPARK_CONF": small})


def ktc_run(master_url: str, report: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ktc",
        "run",
        "--impl",
        "spark",
        "--spark-master",
        master_url,
        "--profile",
        "kafka-4",
        "--hypothesis-profile",
        "dev",
        "--workers",
        "0",
        "--report",
        str(report),
        "--",
        *SELECTION,
    ]


def verdicts(report: Path) -> list[str]:
    results = report / "latest" / "results.json"
    return [row["verdict"] for row in json.loads(results.read_text())["rows"]] if results.exists() else []


def run_on_a_cluster(tmp_path: Path) -> dict:
    """Start the cluster, run ktc on it, and gather what the master and the worker saw before they go."""
    started = time.monotonic()
    with StandaloneCluster(cores=1, memory="1g", parent=tmp_path) as cluster:
        up = time.monotonic()
        code = cluster.run(
            ktc_run(cluster.master_url, tmp_path / "report"), child_env(), tmp_path / "ktc-run.log", CHILD_TIMEOUT_S
        )
        return {
            "url": cluster.master_url,
            "code": code,
            "apps": cluster.completed_apps(APP_NAME),
            "executors": len(cluster.executor_logs()),
            "tasks": cluster.executor_log_count(FINISHED_TASK),
            "python_tasks": cluster.executor_log_count(PYTHON_TASK),
            "timing": f"cluster up in {up - started:.1f} s, ktc run {time.monotonic() - up:.1f} s",
        }


@pytest.mark.xdist_group("spark")  # beside the other Spark tests: one worker, JVMs never side by side
def test_spark_implementation_agrees_with_the_reference_on_a_standalone_master_and_worker(pytestconfig, tmp_path):
    require_spark_tier(pytestconfig)
    try:
        seen = run_on_a_cluster(tmp_path)
    except ClusterError as error:
        pytest.fail(f"the standalone cluster did not come up: {error}")
    said, rows, url = tail(tmp_path / "ktc-run.log", 40), verdicts(tmp_path / "report"), seen["url"]
    print(
        f"\nktc standalone: {url}: {len(seen['apps'])} completed application(s) named {APP_NAME!r}; "
        f"{seen['executors']} executor(s) finished {seen['tasks']} tasks ({seen['python_tasks']} in Python); "
        f"{len(rows)} clause rows {dict(Counter(rows))}; {seen['timing']}"
    )
    assert seen["code"] == 0, f"ktc run --spark-master {url} exited {seen['code']} (None: timed out):\n{said}"
    assert "pass" in rows and set(rows) <= {"pass", "unknown"}, f"clause rows {rows}:\n{said}"  # unknown: not drawn
    assert seen["apps"] and seen["executors"] and seen["tasks"] and seen["python_tasks"], (
        f"no sign that the work ran on {url}: {seen}"
    )
