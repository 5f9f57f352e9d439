"""TLS/SASL client settings from a librdkafka-style properties file (client/security.py), no broker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ktc.kafka.client.properties import parse_properties
from ktc.kafka.client.security import PLAINTEXT, Security, SecurityError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "client.properties"
    path.write_text(text)
    return path


# ---- the properties file -----------------------------------------------------------------------


def test_a_librdkafka_properties_file_becomes_security_settings(tmp_path):
    (tmp_path / "ca.pem").write_text("not read until a connection is made")
    path = write(
        tmp_path,
        "# a comment\nsecurity.protocol = sasl_ssl\nsasl.mechanisms: scram-sha-512\n"
        "sasl.username=alice\nsasl.password=s3cr=t\\\n  !\nssl.ca.location=ca.pem\n"
        "ssl.endpoint.identification.algorithm=none\n",
    )
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        got = Security.from_properties(path)
    finally:
        os.chdir(cwd)
    assert (got.protocol, got.mechanism, got.username) == ("SASL_SSL", "SCRAM-SHA-512", "alice")
    assert got.password == "s3cr=t!"  # "=" inside a value, a continuation, and "!" that is no comment there
    assert got.ca_location == str(tmp_path / "ca.pem") and got.check_hostname is False
    assert "s3cr" not in got.describe() and "s3cr" not in repr(got)
    assert got.describe() == (
        f"SASL_SSL, SCRAM-SHA-512 as 'alice', CA {tmp_path / 'ca.pem'}, hostname NOT checked, from {path}"
    )


@pytest.mark.parametrize(
    "text,key",
    [
        ("sasl.pasword=typo\n", "sasl.pasword"),
        ("security.protocol=TLS\n", "security.protocol"),
        ("security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.username=a\nsasl.password=b\n", "sasl.mechanism"),
        ("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n", "sasl.username"),
        ("security.protocol=SSL\nssl.ca.location=/no/such/ca.pem\n", "ssl.ca.location"),
        ("security.protocol=SSL\nssl.endpoint.identification.algorithm=yes\n", "ssl.endpoint.identification.algorithm"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_key_and_the_file(tmp_path, text, key):
    path = write(tmp_path, text)
    with pytest.raises(SecurityError) as caught:
        Security.from_properties(path)
    message = str(caught.value)
    assert key in message and str(path) in message and "\n" not in message, message


def test_the_environment_names_the_file_and_unset_means_plaintext(tmp_path, monkeypatch):
    monkeypatch.delenv("KTC_KAFKA_CONFIG", raising=False)
    assert Security.from_env() is PLAINTEXT
    path = write(tmp_path, "security.protocol=SSL\n")
    monkeypatch.setenv("KTC_KAFKA_CONFIG", str(path))
    assert Security.from_env().protocol == "SSL"
    monkeypatch.setenv("KTC_KAFKA_CONFIG", str(tmp_path / "missing.properties"))
    with pytest.raises(SecurityError, match="missing.properties.*KTC_KAFKA_CONFIG"):
        Security.from_env()


def test_java_properties_escapes_and_continuations_are_read_as_java_reads_them():
    text = "a=1\n  b : 2\nc 3\nd=long\\\n    value\ne=x\\\\\nf=\\u0041\\tz\n! bang comment\ng=\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "longvalue", "e": "x\\", "f": "A\tz", "g": ""}


def test_client_settings_outside_security_are_ignored_so_a_downloaded_file_works(tmp_path):
    path = write(
        tmp_path,
        "bootstrap.servers=pkc.example:9092\nsession.timeout.ms=45000\nacks=all\n"
        "security.protocol=SASL_SSL\nsasl.mechanisms=PLAIN\nsasl.username=k\nsasl.password=s\n",
    )
    got = Security.from_properties(path)
    assert (got.protocol, got.mechanism, got.username) == ("SASL_SSL", "PLAIN", "k")
