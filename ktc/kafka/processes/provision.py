"""Apache Kafka broker jars from Maven Central, resolved with Maven into a local cache.

``lib_dir(version)`` returns ``<cache>/kafka/<version>/lib`` holding ``kafka_2.13-<version>.jar``,
everything it pulls transitively, and the logging jars the POM leaves out (the tarball's
``libs/`` ships them; see specs/texts/kafka-semantics.md section 6):

* 3.x: ``ch.qos.reload4j:reload4j`` + ``org.slf4j:slf4j-reload4j`` (log4j 1.x API; ``Log4jController`` needs it);
* 4.x: ``log4j-api`` + ``log4j-core`` + ``log4j-slf4j-impl`` (Kafka 4 still uses slf4j 1.7).

Resolution writes a throwaway ``pom.xml`` into a temp dir and runs
``mvn -q -B dependency:copy-dependencies``; a ``.complete`` stamp marks a finished cache so a
second call costs one ``stat``.  The cache is ktc's (ktc/cache.py: ``$KTC_CACHE``, default ``~/.cache/ktc``).
Maven runs under the cache's one resolution lock (``ktc.cache.resolving``; Spark's Ivy takes it too): two
pytest-xdist workers, or two runs on one machine, never write one local repository at once.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ktc import cache
from ktc.cache import ProvisionError, cache_root, resolving

DEFAULT_VERSIONS = (
    "3.9.2",
    "4.4.0",
)  # the last known newest 3.9.x and 4.x: what ``newest`` answers when Maven Central cannot be asked
RELEASES_CACHE = "kafka/releases.json"  # Maven Central's list of releases, as last read
MAVEN_METADATA = "https://repo.maven.apache.org/maven2/org/apache/kafka/kafka_2.13/maven-metadata.xml"
STAMP = ".complete"
_VERSION = re.compile(r"^\d+\.\d+\.\d+([.-][A-Za-z0-9.-]+)?$")

LOGGING = {
    3: [("ch.qos.reload4j", "reload4j", "1.2.25"), ("org.slf4j", "slf4j-reload4j", "1.7.36")],
    4: [
        ("org.apache.logging.log4j", "log4j-api", "2.24.3"),
        ("org.apache.logging.log4j", "log4j-core", "2.24.3"),
        ("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3"),
    ],
}


def major(version: str) -> int:
    return int(version.split(".", 1)[0])


def logging_family(version: str) -> str:
    """``reload4j`` (log4j 1.x properties) for 3.x, ``log4j2`` for 4.x and later."""
    return "reload4j" if major(version) < 4 else "log4j2"


def lib_dir(version: str, *, quiet: bool = True, timeout_s: float = 900) -> Path:
    """The directory of jars for ``version``, resolving it first (under the resolution lock) if it is not
    cached yet; a process that waited for the lock finds another's finished cache and uses it."""
    if not _VERSION.match(version):
        raise ProvisionError(f"not a Kafka version: {version!r} (expected e.g. {DEFAULT_VERSIONS[0]})")
    lib = cache_root() / "kafka" / version / "lib"
    if cached(version):
        return lib
    if shutil.which("mvn") is None:
        raise ProvisionError(
            "Maven (mvn) is not on PATH: install Maven 3.8+ to fetch Kafka "
            f"{version} from Maven Central, or point --kafka-bootstrap at a running broker"
        )
    with resolving():
        if not (lib / STAMP).exists():
            fetch(version, lib, quiet, timeout_s)
    return lib


def cached(version: str) -> bool:
    """Whether Kafka ``version``'s jars are in ktc's cache already."""
    return (cache_root() / "kafka" / version / "lib" / STAMP).exists()


def fetch(version: str, lib: Path, quiet: bool, timeout_s: float) -> None:
    """Resolve ``version`` with Maven into a staging directory, then rename it to ``lib`` (stamped)."""
    lib.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"lib-{version}-", dir=lib.parent))
    try:
        run_maven(version, staging, quiet, timeout_s)
        if not (staging / f"kafka_2.13-{version}.jar").exists():
            raise ProvisionError(f"Maven finished but kafka_2.13-{version}.jar is missing from {staging}")
        (staging / STAMP).write_text(version + "\n")
        if lib.exists():  # a half-finished earlier attempt (no stamp)
            shutil.rmtree(lib, ignore_errors=True)
        staging.rename(lib)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        try:
            lib.parent.rmdir()  # only succeeds when a failed attempt left the version dir empty
        except OSError:
            pass


def run_maven(version: str, output: Path, quiet: bool, timeout_s: float) -> None:
    """``mvn dependency:copy-dependencies`` of a throwaway POM naming ``version`` into ``output``."""
    with tempfile.TemporaryDirectory(prefix="ktc-mvn-") as work:
        Path(work, "pom.xml").write_text(pom(version))
        cmd = [
            "mvn",
            "-B",
            "-Dstyle.color=never",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={output}",
        ]
        if quiet:
            cmd.insert(1, "-q")
        try:
            done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ProvisionError(
                f"Maven did not resolve Kafka {version} within {timeout_s:.0f} s: "
                "check access to https://repo.maven.apache.org"
            ) from None
    if done.returncode != 0:
        raise ProvisionError(
            f"Maven could not resolve org.apache.kafka:kafka_2.13:{version}: "
            f"{_first_error(done.stdout + done.stderr)} "
            f"(is {version} on Maven Central? is repo.maven.apache.org reachable?)"
        )


def cache_size_bytes(version: str) -> int:
    lib = cache_root() / "kafka" / version / "lib"
    return sum(p.stat().st_size for p in lib.glob("*.jar"))


def known_releases() -> tuple[list[str], str]:
    """Every Kafka release Maven Central lists, and where the list came from (``cache.known_releases``: asked
    at most once a day)."""
    return cache.known_releases(MAVEN_METADATA, RELEASES_CACHE)


def newest(line: str) -> str:
    """The newest release of ``line`` ("3.9", or "4" for any 4.x) Maven Central lists; the last known
    (``DEFAULT_VERSIONS``) when no list can be had."""
    fallback = next(v for v in DEFAULT_VERSIONS if v.startswith(line + "."))
    found = [v for v in known_releases()[0] if v.startswith(line + ".") and re.fullmatch(r"\d+\.\d+\.\d+", v)]
    return max(found, key=lambda v: tuple(int(x) for x in v.split(".")), default=fallback)


def check_release(version: str) -> None:
    """A version ktc can fetch: already cached, or a release Maven Central lists (one request, 10 s)."""
    if (cache_root() / "kafka" / version / "lib").is_dir():
        return
    known = cache.releases(MAVEN_METADATA)
    if version not in known:
        near = [v for v in known if v.split(".")[:1] == version.split(".")[:1]][-3:] or known[-3:]
        raise ProvisionError(
            f"Kafka {version} is not a release on Maven Central; the newest near it: {', '.join(near)}"
        )


def pom(version: str) -> str:
    deps = [("org.apache.kafka", "kafka_2.13", version), *LOGGING[3 if major(version) < 4 else 4]]
    body = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in deps
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>ktc</groupId>
  <artifactId>kafka-broker-{version}</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
{body}
  </dependencies>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId>
    <artifactId>maven-dependency-plugin</artifactId>
    <version>3.6.1</version>
  </plugin></plugins></build>
</project>
"""


def _first_error(output: str) -> str:
    """The reason in Maven's first [ERROR] line, without colour codes or the project preamble."""
    output = re.sub(r"\x1b\[[0-9;]*m", "", output)
    for line in output.splitlines():
        if "[ERROR]" in line and line.replace("[ERROR]", "").strip():
            text = line.replace("[ERROR]", "").strip()
            text = re.sub(r"^.*?Could not resolve dependencies for project [^:]+:[^:]+:[^:]+:[^:]+: ", "", text)
            return re.sub(r"\s*-> \[Help 1\]$", "", text)[:300]
    return (output.strip().splitlines() or ["no output"])[-1][:300]


def release(name: str) -> str:
    """A version as given ("3.7.2"), or a release line's newest ("3.9", "4": what ``kafka-3.9`` runs)."""
    return name if _VERSION.match(name) else newest(name)


if __name__ == "__main__":  # python -m ktc.kafka.processes.provision [VERSION | LINE ...]
    import sys

    wanted = [release(name) for name in sys.argv[1:] or DEFAULT_VERSIONS]
    if missing := [v for v in wanted if not cached(v)]:  # a newcomer's terminal says what the silent minute is
        print(f"provision: fetching Kafka {', '.join(missing)} from Maven Central (once)", file=sys.stderr)
    for v in wanted:
        t0 = time.monotonic()
        try:
            path = lib_dir(v, quiet=False)
        except ProvisionError as error:
            sys.exit(f"provision: {error}")
        print(f"{v}: {path} ({cache_size_bytes(v) / 1e6:.1f} MB, {time.monotonic() - t0:.1f} s)")
