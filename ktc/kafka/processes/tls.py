"""A throwaway PKI and a SASL_SSL listener for a LocalBroker, so TLS and SASL can be tested on loopback.

``make_files(dir)`` runs the ``openssl`` CLI to make a CA, a server certificate for ``localhost``
and ``127.0.0.1`` and a client certificate, all signed by that CA (EC P-256 keys: a few ms each),
plus a second, unrelated CA that signed nothing (to see a wrong CA refused).

``listener_properties`` adds the listener to a broker's ``server.properties``: TLS from PEM
(KIP-651: the key and chain inline in ``ssl.keystore.key`` / ``ssl.keystore.certificate.chain``, so
the key needs no password; the truststore a PEM file), client certificates ``requested`` and checked
against the CA, and SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for one user.  SCRAM credentials
live in the KRaft metadata log, so they are written at format time: ``scram_arguments`` gives
``kafka-storage format --add-scram 'SCRAM-SHA-256=[name=...,password=...]'`` (accepted by
``kafka.tools.StorageTool`` of 3.9.2 and 4.3.1 alike; since 3.5).

Certificates are valid for 30 days from now by the host clock: a broker whose ``faketime_offset_s``
moves it outside that window would refuse the client certificate (``client_cert=True``).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the client side loads kafka-python: only when asked for
    from ..client.security import Security

LISTENER = "SASL_SSL"
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")
OPENSSL_TIMEOUT_S = 30.0


class TlsError(RuntimeError):
    """openssl could not make the throwaway certificates (the message carries its output)."""


@dataclass
class SecureListener:
    """The extra SASL_SSL listener of a LocalBroker: who may log in, and its port once chosen."""

    username: str = "ktc"
    password: str = field(default_factory=lambda: secrets.token_hex(12), repr=False)
    client_auth: str = "requested"  # ssl.client.auth: none | requested | required
    host: str = "localhost"  # advertised and used in bootstrap: the hostname check sees a name
    port: int = 0


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of the throwaway PKI (keys unencrypted)."""

    ca: Path
    ca_key: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a CA that signed nothing here


# ---- certificates ------------------------------------------------------------------------------

_CA_EXTENSIONS = (
    "basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\n"
)
_LEAF_EXTENSIONS = (
    "basicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature,keyEncipherment\n"
    "extendedKeyUsage = serverAuth,clientAuth\nsubjectKeyIdentifier = hash\n"
    "authorityKeyIdentifier = keyid\n"
)


def _openssl(*args: str) -> None:
    if shutil.which("openssl") is None:
        raise TlsError("openssl not found: install it (apt-get install openssl) to start a broker with TLS")
    done = subprocess.run(
        ["openssl", *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=OPENSSL_TIMEOUT_S
    )
    if done.returncode != 0:
        raise TlsError(f"openssl {args[0]} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")


def _config(path: Path, common_name: str, extensions: str) -> Path:
    path.write_text(f"[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = {common_name}\n[ext]\n{extensions}")
    return path


def make_ca(directory: Path, name: str, common_name: str) -> tuple[Path, Path]:
    """A self-signed CA: (certificate, key)."""
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    config = _config(directory / f"{name}.cnf", common_name, _CA_EXTENSIONS)
    _openssl(
        "req",
        "-x509",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        str(key),
        "-out",
        str(cert),
        "-days",
        "30",
        "-config",
        str(config),
        "-extensions",
        "ext",
    )
    return cert, key


def make_leaf(
    directory: Path, name: str, ca: tuple[Path, Path], common_name: str, alt_names: str | None = None
) -> tuple[Path, Path]:
    """A certificate signed by ``ca`` for ``common_name`` (and ``alt_names``, e.g. ``DNS:localhost``): (cert, key)."""
    cert, key, csr = directory / f"{name}.pem", directory / f"{name}.key", directory / f"{name}.csr"
    extensions = _LEAF_EXTENSIONS + (f"subjectAltName = {alt_names}\n" if alt_names else "")
    config = _config(directory / f"{name}.cnf", common_name, extensions)
    _openssl(
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        str(key),
        "-out",
        str(csr),
        "-config",
        str(config),
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca[0]),
        "-CAkey",
        str(ca[1]),
        "-set_serial",
        str(secrets.randbits(63)),
        "-days",
        "30",
        "-out",
        str(cert),
        "-extfile",
        str(config),
        "-extensions",
        "ext",
    )
    return cert, key


def make_files(directory: Path) -> TlsFiles:
    """The CA, server and client certificates (and an unrelated CA) in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = make_ca(directory, "ca", "ktc throwaway CA")
    server = make_leaf(directory, "server", ca, "localhost", "DNS:localhost,IP:127.0.0.1")
    client = make_leaf(directory, "client", ca, "ktc-client")
    other = make_ca(directory, "other-ca", "ktc unrelated CA")
    return TlsFiles(ca[0], ca[1], server[0], server[1], client[0], client[1], other[0])


# ---- the broker's side ---------------------------------------------------------------------------


def _inline(path: Path) -> str:
    """A PEM file as one ``server.properties`` value (newlines as ``\\n`` escapes)."""
    return path.read_text().strip().replace("\n", "\\n")


def listener_properties(
    props: dict[str, object], listener: SecureListener, files: TlsFiles, bind: str = "127.0.0.1"
) -> dict[str, object]:
    """``props`` with the SASL_SSL listener added to ``listeners``, ``advertised.listeners`` and the
    protocol map, and the listener's TLS and SASL settings."""
    prefix = f"listener.name.{LISTENER.lower()}."
    user, password = listener.username, listener.password
    scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    plain = f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{user}="{password}";'
    out = dict(props)
    out["listeners"] = f"{props['listeners']},{LISTENER}://{bind}:{listener.port}"
    out["advertised.listeners"] = f"{props['advertised.listeners']},{LISTENER}://{listener.host}:{listener.port}"
    out["listener.security.protocol.map"] = f"{props['listener.security.protocol.map']},{LISTENER}:SASL_SSL"
    out.update(
        {
            prefix + "ssl.keystore.type": "PEM",
            prefix + "ssl.keystore.key": _inline(files.server_key),
            prefix + "ssl.keystore.certificate.chain": _inline(files.server_cert),
            prefix + "ssl.truststore.type": "PEM",
            prefix + "ssl.truststore.location": files.ca,
            prefix + "ssl.client.auth": listener.client_auth,
            prefix + "sasl.enabled.mechanisms": ",".join(MECHANISMS),
            prefix + "plain.sasl.jaas.config": plain,
            prefix + "scram-sha-256.sasl.jaas.config": scram,
            prefix + "scram-sha-512.sasl.jaas.config": scram,
        }
    )
    return out


def scram_arguments(listener: SecureListener) -> list[str]:
    """``kafka-storage format`` arguments that create the SCRAM user for both hash functions."""
    return [
        arg
        for mechanism in SCRAM
        for arg in ("--add-scram", f"{mechanism}=[name={listener.username},password={listener.password}]")
    ]


# ---- the client's side ---------------------------------------------------------------------------


def client_security(
    listener: SecureListener, files: TlsFiles, mechanism: str = "SCRAM-SHA-256", *, client_cert: bool = False
) -> Security:
    """Settings that log in to the listener with ``mechanism`` over TLS, checking the hostname
    against the throwaway CA (and presenting the client certificate if ``client_cert``)."""
    from ..client.security import Security

    return Security(
        protocol="SASL_SSL",
        mechanism=mechanism,
        username=listener.username,
        password=listener.password,
        ca_location=str(files.ca),
        certificate_location=str(files.client_cert) if client_cert else None,
        key_location=str(files.client_key) if client_cert else None,
    )
