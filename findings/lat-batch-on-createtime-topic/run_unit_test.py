"""Compile LogValidatorLogAppendTimeBatchTest.java with javac against a release's main jars and run it with JUnit 5.

    .venv/bin/python findings/lat-batch-on-createtime-topic/run_unit_test.py [VERSION[+fix] ...]
                                                          (default 4.4.0 3.6.0 3.5.2 3.6.0+fix)

The classpath is the release's jars as Maven Central serves them (kafka-storage, kafka-clients, kafka-server-common
and what they pull in; ktc's cache, fetched with Maven when missing) and JUnit's console launcher from Maven
Central; no Kafka test jar (Maven Central serves none for 4.4.0).  The test is written for 4.4.0; for a 3.x
release it is first rewritten to that branch's API, each rewrite listed below (the imports of 4.x's ``internal``
packages, CompressionType in place of Compression, RequestLocal in core, the MetadataVersion argument, and 3.5's
single ``timestampDiffMaxMs`` in place of before/after).  Each run's output: ``unit-test-on-<version>.txt``.

``VERSION+fix``: the same, with the proposed fix applied first: ``fix-3.6.0.patch`` on that release's
LogValidator.java (its sources jar from Maven Central, which serves it for 3.6.0 and not for 4.4.0), compiled
against its jars and put ahead of them on the classpath.  Output: ``unit-test-on-<version>-with-fix.txt``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ktc.kafka.processes.provision import cache_root, lib_dir, resolving

HERE = Path(__file__).resolve().parent
TEST = "LogValidatorLogAppendTimeBatchTest"
PACKAGE = "org.apache.kafka.storage.internals.log"
JUNIT = ("org.junit.platform", "junit-platform-console-standalone", "1.11.4")
RUNS = ("4.4.0", "3.6.0", "3.5.2", "3.6.0+fix")
FIX = HERE / "fix-3.6.0.patch"
VALIDATOR = "org/apache/kafka/storage/internals/log/LogValidator.java"
LAUNCHER = "org.junit.platform.console.ConsoleLauncher"

# (pattern, replacement): 4.4.0's source -> the 3.x branches' API
TO_3X = (
    (r"org\.apache\.kafka\.common\.record\.internal\.", "org.apache.kafka.common.record."),
    (r"org\.apache\.kafka\.common\.utils\.internals\.", "org.apache.kafka.common.utils."),
    (r"import org\.apache\.kafka\.common\.compress\.Compression;\n", ""),
    (r"\bCompression\.NONE\b", "CompressionType.NONE"),
    (r"import org\.apache\.kafka\.server\.common\.RequestLocal;",
     "import kafka.server.RequestLocal;\nimport org.apache.kafka.server.common.MetadataVersion;"),
    (r"AppendOrigin\.CLIENT\n", "AppendOrigin.CLIENT,\n                        MetadataVersion.latest()\n"),
)
TO_35 = (  # 3.5: one bound, message.timestamp.difference.max.ms, checked on abs(ts - now)
    (r"timestampBeforeMaxConfig,\n(\s+)timestampAfterMaxConfig,",
     r"Math.min(timestampBeforeMaxConfig, timestampAfterMaxConfig),"),
)


def source_for(version: str) -> str:
    text = (HERE / f"{TEST}.java").read_text()
    rewrites = () if int(version.split(".")[0]) >= 4 else TO_3X + (TO_35 if version.startswith("3.5.") else ())
    for pattern, replacement in rewrites:
        text, count = re.subn(pattern, replacement, text)
        if count == 0:
            sys.exit(f"the rewrite {pattern!r} for Kafka {version} matched nothing in {TEST}.java")
    return text


def maven_copy(artifact: str, folder: Path) -> None:
    with resolving():
        subprocess.run(["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={artifact}", f"-DoutputDirectory={folder}"],
                       check=True, timeout=600, capture_output=True)


def junit_jar() -> Path:
    group, artifact, version = JUNIT
    jar = cache_root() / "junit" / f"{artifact}-{version}.jar"
    if not jar.is_file():
        maven_copy(f"{group}:{artifact}:{version}", jar.parent)
    return jar


def fixed_validator(version: str, scratch: Path) -> Path:
    """That release's LogValidator.java with the proposed fix applied (``patch -p1``)."""
    sources = cache_root() / "kafka-sources" / f"kafka-storage-{version}-sources.jar"
    if not sources.is_file():
        maven_copy(f"org.apache.kafka:kafka-storage:{version}:jar:sources", sources.parent)
    tree = scratch / "fixed"
    target = tree / "storage/src/main/java" / VALIDATOR
    target.parent.mkdir(parents=True)
    with zipfile.ZipFile(sources) as jar:
        target.write_bytes(jar.read(VALIDATOR))
    subprocess.run(["patch", "-p1", "-s", "-i", str(FIX)], cwd=tree, check=True, timeout=60)
    return target


def javac(sources: list[Path], classes: Path, classpath: str) -> subprocess.CompletedProcess:
    return subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", classpath, *map(str, sources)],
                          capture_output=True, text=True, timeout=600)


def run(version: str, with_fix: bool) -> tuple[int, str]:
    lib, junit = lib_dir(version), junit_jar()
    with tempfile.TemporaryDirectory() as scratch:
        src = Path(scratch) / "src" / f"{TEST}.java"
        src.parent.mkdir()
        src.write_text(source_for(version))
        classes = Path(scratch) / "classes"
        sources = [src, fixed_validator(version, Path(scratch))] if with_fix else [src]
        done = javac(sources, classes, f"{lib}/*{os.pathsep}{junit}")
        fixed = f" and LogValidator.java with {FIX.name} applied" if with_fix else ""
        head = f"$ javac -d classes -cp '{lib}/*:{junit.name}' {TEST}.java{fixed}   (Kafka {version})\n"
        if done.returncode != 0:
            return done.returncode, head + done.stdout + done.stderr + f"javac exited {done.returncode}\n"
        test_cmd = ["java", "-cp", os.pathsep.join([str(classes), f"{lib}/*", str(junit)]), LAUNCHER, "execute",
                    "--disable-banner", "--disable-ansi-colors", "--details=tree",
                    "--select-class", f"{PACKAGE}.{TEST}"]
        done = subprocess.run(test_cmd, capture_output=True, text=True, timeout=600)
    head += (f"$ java -cp 'classes:{lib}/*:{junit.name}' {LAUNCHER} execute --details=tree "
             f"--select-class {PACKAGE}.{TEST}\n")
    return done.returncode, head + scrub(done.stdout + done.stderr, scratch) + f"JUnit exited {done.returncode}\n"


def scrub(text: str, scratch: str) -> str:
    """The output without the scratch directory's name (it changes every run) and terminal colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text.replace(scratch, "<scratch>"))


def main(argv: list[str]) -> int:
    if shutil.which("javac") is None:
        print("run_unit_test.py: javac is not on PATH (a JDK 17 or newer is needed)", file=sys.stderr)
        return 2
    for name in argv or RUNS:
        version, _, fix = name.partition("+")
        code, output = run(version, fix == "fix")
        (HERE / f"unit-test-on-{version}{'-with-fix' if fix else ''}.txt").write_text(output)
        print(f"Kafka {name}: {'passed' if code == 0 else f'failed (exit {code})'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
