"""Which spark-sql-kafka-0-10 to load: the installed PySpark's own version when Maven Central has it,
else the newest release of the same major below it (said in the report: Maven Central had no
4.3.0 of the connector on 2026-11-25, and 4.2.0 reads topics on PySpark 4.3.0).

``jars(installed)`` is the connector and everything it pulls as local jars, for ``spark.jars``: resolved
once with Spark's own Ivy (Maven Central only: no ~/.m2, no spark-packages) into ktc's cache, under the
cache's resolution lock (``ktc.cache.resolving``), and copied into a stamped folder per PySpark version.
A session then starts with no Ivy at all: two pytest-xdist workers, or a test and its ``ktc audit``
child, once raced Ivy resolutions into one cache and lost jars.  ``./run`` resolves it during
setup (``python -m ktc.audit.connector --resolve``); a plain ``pip install`` resolves it on first use.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ktc.cache import cache_root, known_releases, resolving

ARTIFACT = "org.apache.spark:spark-sql-kafka-0-10_2.13"
METADATA = "https://repo.maven.apache.org/maven2/org/apache/spark/spark-sql-kafka-0-10_2.13/maven-metadata.xml"
CACHED_AS = "spark/connector-versions.json"
OVERRIDE = "KTC_SPARK_KAFKA_PACKAGE"  # a Maven coordinate to load instead of the chosen connector
STAMP = ".complete"  # in a finished folder of jars: {"coordinate", "why", "jars": [file names]}
RESOLVE_TIMEOUT_S = 900.0
IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="central"/>
  <resolvers><ibiblio name="central" m2compatible="true" root="https://repo.maven.apache.org/maven2/"/></resolvers>
</ivysettings>
"""


class ConnectorError(RuntimeError):
    """The connector's jars cannot be had here: one line, naming the log that holds Ivy's output."""


def key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def choose(installed: str, available: list[str]) -> tuple[str, str]:
    """(connector version, why): the installed one if listed, else the newest of its major below it."""
    found = re.match(r"\d+\.\d+\.\d+", installed)
    if found is None:
        raise ConnectorError(f"PySpark's version {installed!r} does not begin with x.y.z")
    base = found.group(0)
    if not available or base in available:
        return base, f"spark-sql-kafka-0-10 {base}, the installed PySpark's version"
    older = [v for v in available if v.split(".")[0] == base.split(".")[0] and key(v) < key(base)]
    if not older:
        return base, f"spark-sql-kafka-0-10 {base} (Maven Central lists no {base.split('.')[0]}.x below it)"
    return older[-1], (
        f"spark-sql-kafka-0-10 {older[-1]}: Maven Central has no {base} for the installed "
        f"PySpark {installed}; the newest {base.split('.')[0]}.x below it"
    )


def coordinate(installed: str) -> tuple[str, str]:
    """The connector's Maven coordinate, and why that version (Maven Central's list, cached a day by ktc.cache)."""
    version, why = choose(installed, known_releases(METADATA, CACHED_AS)[0])
    return f"{ARTIFACT}:{version}", why


def package(installed: str) -> tuple[str, str]:
    """The coordinate to resolve, and why: ``$KTC_SPARK_KAFKA_PACKAGE`` when set, else ``coordinate``."""
    given = os.environ.get(OVERRIDE)
    return (given, f"{given} (${OVERRIDE})") if given else coordinate(installed)


def folder(installed: str) -> Path:
    """Where the jars for PySpark ``installed`` (or for ``$KTC_SPARK_KAFKA_PACKAGE``) are kept."""
    given = os.environ.get(OVERRIDE)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", given) if given else f"pyspark-{installed}"
    return cache_root() / "spark" / "kafka-connector" / name


def jars(installed: str) -> tuple[list[str], str]:
    """The connector's jars (local paths) for PySpark ``installed``, and why that version; resolved first,
    under the lock, unless a finished folder exists (then no network, no Ivy, no lock)."""
    target = folder(installed)
    if not complete(target):
        with resolving():
            if not complete(target):
                resolve_into(target, *package(installed))
    stamp = json.loads((target / STAMP).read_text())
    return [str(target / name) for name in stamp["jars"]], stamp["why"]


def complete(target: Path) -> bool:
    """A finished folder: stamped, and every jar the stamp lists still there (a cleaned cache resolves again)."""
    try:
        return all((target / name).is_file() for name in json.loads((target / STAMP).read_text())["jars"])
    except (OSError, ValueError, KeyError):
        return False


def resolve_into(target: Path, coordinate: str, why: str) -> None:
    """Resolve ``coordinate`` with Spark's Ivy into the cache's Ivy folder, copy the jars it names into a
    staging folder, stamp it and rename it to ``target``.  The caller holds the resolution lock."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}-", dir=target.parent))
    try:
        found = resolved(coordinate, target.parent / f"{target.name}.log")
        for jar in found:
            shutil.copy2(jar, staging)
        names = sorted(Path(jar).name for jar in found)
        (staging / STAMP).write_text(json.dumps({"coordinate": coordinate, "why": why, "jars": names}))
        shutil.rmtree(target, ignore_errors=True)  # a half-finished earlier attempt (no stamp)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def resolved(coordinate: str, log: Path) -> list[str]:
    """The jar files Spark's Ivy resolves for ``coordinate``: asked of a child process (``--ivy-child``),
    its whole output in ``log``, killed with its JVM after RESOLVE_TIMEOUT_S."""
    ivy = log.parent.parent / "ivy"
    settings = log.parent / "ivysettings.xml"
    settings.write_text(IVY_SETTINGS)
    cmd = [sys.executable, "-m", "ktc.audit.connector", "--ivy-child", coordinate, str(ivy), str(settings)]
    with open(log, "w") as out:
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=out, text=True, start_new_session=True)
        printed = finished(child)
    if printed is None:
        raise ConnectorError(
            f"Spark's Ivy did not resolve {coordinate} within {RESOLVE_TIMEOUT_S:.0f} s "
            f"(is repo.maven.apache.org reachable?); see {log}"
        )
    if child.returncode != 0:
        from ktc.spark.session import root_cause

        raise ConnectorError(f"Spark's Ivy could not resolve {coordinate}: {root_cause(log.read_text())}; see {log}")
    found = [url.removeprefix("file://") for url in json.loads(printed.splitlines()[-1]) if url]
    if not found:
        raise ConnectorError(f"Spark's Ivy resolved {coordinate} to no jars; see {log}")
    return found


def finished(child: subprocess.Popen) -> str | None:
    """What ``child`` printed, or None after RESOLVE_TIMEOUT_S; its group (the child and its JVM) is killed
    on a timeout or an interrupt, so no JVM outlives the resolution."""
    try:
        return child.communicate(timeout=RESOLVE_TIMEOUT_S)[0]
    except subprocess.TimeoutExpired:
        return None
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def ivy_child(coordinate: str, ivy: str, settings: str) -> None:
    """In the child: start PySpark's JVM gateway with ``spark.jars.packages`` (Spark resolves it before
    the gateway answers), print the jars it put on ``spark.jars`` as JSON, and let the JVM go."""
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False).setAll(
        [("spark.jars.packages", coordinate), ("spark.jars.ivy", ivy), ("spark.jars.ivySettings", settings)]
    )
    gateway = launch_gateway(conf, popen_kwargs={"stdout": sys.stderr})  # stdout carries the answer alone
    try:
        print(json.dumps(gateway.jvm.System.getProperty("spark.jars").split(",")), flush=True)
    finally:
        gateway.shutdown()
        gateway.proc.stdin.close()  # PySpark's gateway server exits at the end of its input
        gateway.proc.wait(60)


LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


def kafka_options(security) -> dict[str, str]:
    """ktc's client security (ktc/kafka/client/security.py) as the Kafka source's ``kafka.*``
    options: the Java client reads PEM files directly, and SASL logs in through a JAAS line."""
    out = {"kafka.security.protocol": security.protocol}
    if security.mechanism:
        out["kafka.sasl.mechanism"] = security.mechanism
        out["kafka.sasl.jaas.config"] = (
            f"{LOGIN_MODULES[security.mechanism]} required "
            f'username="{security.username}" password="{security.password}";'
        )
    if security.ca_location:
        out |= {"kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": security.ca_location}
    if security.certificate_location and security.key_location:
        out |= {
            "kafka.ssl.keystore.type": "PEM",
            "kafka.ssl.keystore.certificate.chain": Path(security.certificate_location).read_text(),
            "kafka.ssl.keystore.key": Path(security.key_location).read_text(),
        }
        if security.key_password:
            out["kafka.ssl.key.password"] = security.key_password
    if security.protocol.endswith("SSL"):
        out["kafka.ssl.endpoint.identification.algorithm"] = (
            "" if security.endpoint_identification == "none" else security.endpoint_identification
        )
    return out


def main(argv: list[str]) -> int:
    """``--resolve``: the connector for the installed PySpark, once (./run's setup); one line either way."""
    if argv[:1] == ["--ivy-child"] and len(argv) == 4:
        ivy_child(*argv[1:])
        return 0
    if argv != ["--resolve"]:
        print("usage: python -m ktc.audit.connector --resolve", file=sys.stderr)
        return 2
    import pyspark

    started = time.monotonic()
    if not complete(folder(pyspark.__version__)):  # a newcomer's terminal says what the silent minute is
        print("connector: resolving Spark's Kafka connector (spark-sql-kafka-0-10) with Ivy (once)", file=sys.stderr)
    try:
        found, why = jars(pyspark.__version__)
    except ConnectorError as error:
        print(f"ktc: error: {error}", file=sys.stderr)
        return 2
    print(f"{why}: {len(found)} jars in {Path(found[0]).parent} ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
