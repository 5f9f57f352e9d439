"""The Java client's driver: kafka-clients at a version (and Jackson, for the JSON lines) resolved with Maven
from Maven Central, java/KtcDriver.java compiled against them with javac, run with java.

    <cache>/clients/kafka-clients/<version>/lib/*.jar      Maven's copy-dependencies (runtime scope)
    <cache>/clients/kafka-clients/<version>/classes/       javac's output

Maven runs under the cache's resolution lock (``ktc.cache.resolving``): Kafka's broker jars and Spark's Ivy use
the same ~/.m2.
"""

from __future__ import annotations

from pathlib import Path

from ktc.cache import resolving
from ktc.implementations.clients.drivers import build
from ktc.implementations.clients.library import Library

SOURCE = build.HERE / "java" / "KtcDriver.java"
JACKSON = "2.17.2"  # a JSON codec for the driver's lines; not the library under test
POM = """<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>ktc</groupId><artifactId>ktc-java-driver</artifactId><version>0</version><dependencies>
<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId><version>{version}</version>
</dependency><dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-databind</artifactId>
<version>{jackson}</version></dependency></dependencies></project>
"""
WHY = "install a JDK 11+ and Maven 3.8+ to judge the Java client"


def launch(library: Library, version: str) -> list[str]:
    java, javac, mvn = (build.tool(name, WHY) for name in ("java", "javac", "mvn"))
    target = build.build_dir(library.name, version)
    stamp = build.digest([SOURCE], version, JACKSON)
    build.ensure_built(target, stamp, lambda staging: _build(staging, version, javac, mvn))
    classpath = f"{target / 'classes'}:{target / 'lib'}/*"
    return [java, "-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classpath, "KtcDriver"]


def _build(staging: Path, version: str, javac: str, mvn: str) -> None:
    (staging / "pom.xml").write_text(POM.format(version=version, jackson=JACKSON))
    argv = [mvn, "-q", "-B", "-Dstyle.color=never", "dependency:copy-dependencies", "-DincludeScope=runtime"]
    with resolving():
        build.run([*argv, f"-DoutputDirectory={staging / 'lib'}"], staging, f"Maven resolving kafka-clients {version}")
    (staging / "classes").mkdir()
    classpath = f"{staging / 'lib'}/*"
    build.run([javac, "-nowarn", "-cp", classpath, "-d", "classes", str(SOURCE)], staging, "javac of KtcDriver.java")
