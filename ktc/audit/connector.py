"""Which spark-sql-kafka-0-10 to load: the installed PySpark's own version when Maven Central has it,
else the newest release of the same major below it (said in the report: Maven Central had no
4.3.0 of the connector on 2026-11-25, and 4.2.0 reads topics on PySpark 4.3.0)."""
from __future__ import annotations

import re
from pathlib import Path

ARTIFACT = "org.apache.spark:spark-sql-kafka-0-10_2.13"
METADATA = "https://repo.maven.apache.org/maven2/org/apache/spark/spark-sql-kafka-0-10_2.13/maven-metadata.xml"
CACHED_AS = "spark/connector-versions.json"


def key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def choose(installed: str, available: list[str]) -> tuple[str, str]:
    """(connector version, why): the installed one if listed, else the newest of its major below it."""
    base = re.match(r"\d+\.\d+\.\d+", installed).group(0)
    if not available or base in available:
        return base, f"spark-sql-kafka-0-10 {base}, the installed PySpark's version"
    older = [v for v in available if v.split(".")[0] == base.split(".")[0] and key(v) < key(base)]
    if not older:
        return base, f"spark-sql-kafka-0-10 {base} (Maven Central lists no {base.split('.')[0]}.x below it)"
    return older[-1], (f"spark-sql-kafka-0-10 {older[-1]}: Maven Central has no {base} for the installed "
                       f"PySpark {installed}; the newest {base.split('.')[0]}.x below it")


def coordinate(installed: str) -> tuple[str, str]:
    """The connector's Maven coordinate, and why that version (Maven Central's list, cached a day by provision)."""
    from implementations.kafka.processes.provision import known_releases
    version, why = choose(installed, known_releases(METADATA, CACHED_AS)[0])
    return f"{ARTIFACT}:{version}", why


LOGIN_MODULES = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
                 "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
                 "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


def kafka_options(security) -> dict[str, str]:
    """ktc's client security (implementations/kafka/client/security.py) as the Kafka source's ``kafka.*``
    options: the Java client reads PEM files directly, and SASL logs in through a JAAS line."""
    out = {"kafka.security.protocol": security.protocol}
    if security.mechanism:
        out["kafka.sasl.mechanism"] = security.mechanism
        out["kafka.sasl.jaas.config"] = (f'{LOGIN_MODULES[security.mechanism]} required '
                                         f'username="{security.username}" password="{security.password}";')
    if security.ca_location:
        out |= {"kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": security.ca_location}
    if security.certificate_location and security.key_location:
        out |= {"kafka.ssl.keystore.type": "PEM",
                "kafka.ssl.keystore.certificate.chain": Path(security.certificate_location).read_text(),
                "kafka.ssl.keystore.key": Path(security.key_location).read_text()}
        if security.key_password:
            out["kafka.ssl.key.password"] = security.key_password
    if security.protocol.endswith("SSL"):
        out["kafka.ssl.endpoint.identification.algorithm"] = "" if security.endpoint_identification == "none" \
            else security.endpoint_identification
    return out
