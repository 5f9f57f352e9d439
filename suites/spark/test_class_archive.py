"""Spark's class archive (ktc/spark/class_archive.py): a session's driver JVM maps it, and a damaged one is never
kept.

The archive is what ``./run setup`` makes (implementations/spark/class_archive.py); here it is made (or found),
a session started in a process of its own must have it mapped, and a truncated copy -- which would crash a JVM
that maps it -- must fail the check that stands between a written archive and the cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="needs the spark extra (pip install 'ktc[spark]')")

from ktc.implementations.spark import class_archive as maker  # noqa: E402
from ktc.spark import class_archive, session  # noqa: E402

pytestmark = pytest.mark.xdist_group("spark")
needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="needs Java 17 on PATH")
SESSION = """
import json
from pathlib import Path
from pyspark import SparkContext
from ktc.spark import session
session.get()
pid = SparkContext._gateway.proc.pid
print(json.dumps({"command": Path(f"/proc/{pid}/cmdline").read_text().split("\\0"),
                  "maps": Path(f"/proc/{pid}/maps").read_text()}))
"""


@pytest.fixture(scope="module")
def archived() -> Path:
    """This machine's archive, made if missing (./run setup has made it; ./run tests makes it beside the tests,
    and a maker waits for the one at work), in a child: the maker's session must not be this worker's."""
    done = subprocess.run([sys.executable, "-m", maker.__name__], capture_output=True, text=True, timeout=900)
    archive = class_archive.path()
    if archive is None or not archive.exists():
        pytest.fail(f"no Spark class archive after making it: {done.stdout.strip()} {done.stderr.strip()[-500:]}")
    return archive


@pytest.fixture(scope="module")
def started(archived) -> dict:
    """The command line and memory maps of a session's driver JVM, started in a child after the archive."""
    env = {key: value for key, value in os.environ.items() if key not in ("KTC_SPARK_CONF", class_archive.SWITCH)}
    done = subprocess.run([sys.executable, "-c", SESSION], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_java
def test_a_session_started_after_the_archive_is_made_maps_it(archived, started):
    assert f"-XX:SharedArchiveFile={archived}" in started["command"]
    assert str(archived) in started["maps"], "the driver's JVM did not map Spark's class archive"


@needs_java
def test_a_truncated_archive_fails_the_check_before_the_cache(archived, started, tmp_path):
    java, options = started["command"][0], class_archive.jvm_options(started["command"])
    options = [word for word in options if not word.startswith("-XX:SharedArchiveFile=")]
    assert class_archive.usable(java, options, archived)
    truncated = tmp_path / archived.name
    with open(archived, "rb") as whole, open(truncated, "wb") as part:
        part.write(whole.read(archived.stat().st_size // 10))
    assert not class_archive.usable(java, options, truncated)


def test_a_drivers_options_are_those_before_spark_s_main_class_without_a_class_list():
    command = [
        "java",
        "-cp",
        "a:b/*",
        "-Xmx2g",
        "-XX:DumpLoadedClassList=/x",
        class_archive.MAIN_CLASS,
        "--conf",
        "k=v",
    ]
    assert class_archive.jvm_options(command) == ["-cp", "a:b/*", "-Xmx2g"]


def test_without_an_archive_or_with_the_switch_off_a_session_gets_no_flag(tmp_path, monkeypatch):
    monkeypatch.setenv("KTC_CACHE", str(tmp_path))
    monkeypatch.delenv(class_archive.SWITCH, raising=False)
    assert class_archive.flags() == ()
    archive = class_archive.path()
    if archive is None:
        pytest.skip("no java on PATH: no archive path to stand in for")
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"")
    flag = f"-XX:SharedArchiveFile={archive}"
    assert class_archive.flags() == (flag,)
    assert session.settings()[session.JAVA_OPTIONS] == f"-Duser.timezone=UTC {flag}"
    monkeypatch.setitem(session._overrides, session.JAVA_OPTIONS, "-Xss4m")
    assert session.settings()[session.JAVA_OPTIONS] == f"-Xss4m {flag}", "an override keeps the archive's flag"
    monkeypatch.setenv(class_archive.SWITCH, "off")
    assert class_archive.flags() == ()
