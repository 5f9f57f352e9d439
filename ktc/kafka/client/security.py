"""How ktc opens a connection to a broker: plaintext, TLS, SASL (PLAIN, SCRAM-SHA-256/512), or both.

Every connection ktc makes (the blocking ``wire.Client`` and the pipelined ``connection.Connection``)
goes through ``open_socket``, so a security setting applies to all of them alike.

Settings use librdkafka's property names, read from a Java-style properties file::

    security.protocol=SASL_SSL
    sasl.mechanism=SCRAM-SHA-512
    sasl.username=alice
    sasl.password=alice-secret
    ssl.ca.location=/etc/kafka/ca.pem

``Security.from_env()`` reads the file named by ``$KTC_KAFKA_CONFIG`` (plaintext when unset).
The SASL mechanisms themselves are kafka-python's (``kafka.net.sasl``); this module only frames
their tokens in SaslHandshake v1 / SaslAuthenticate v1 requests, once, right after connecting.
KIP-368 re-authentication is not done: a broker with ``connections.max.reauth.ms`` closes the
connection when the session expires, and the caller reopens it like any other broken connection.
"""

from __future__ import annotations

import functools
import os
import socket
import ssl
import struct
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from .properties import parse_properties
from .records import WireError

with warnings.catch_warnings():  # kafka-python's schema loader uses deprecated importlib.resources calls
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.net.sasl import get_sasl_mechanism
    from kafka.protocol.sasl import (
        SaslAuthenticateRequest,
        SaslAuthenticateResponse,
        SaslHandshakeRequest,
        SaslHandshakeResponse,
    )

ENV_VARIABLE = "KTC_KAFKA_CONFIG"
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
ENDPOINT_CHECKS = {"https": True, "none": False, "": False}  # "" is Java's spelling of none
# property name -> Security field; librdkafka's names ("sasl.mechanisms" is its name, "sasl.mechanism" the alias)
PROPERTIES = {
    "security.protocol": "protocol",
    "sasl.mechanism": "mechanism",
    "sasl.mechanisms": "mechanism",
    "sasl.username": "username",
    "sasl.password": "password",
    "ssl.ca.location": "ca_location",
    "ssl.certificate.location": "certificate_location",
    "ssl.key.location": "key_location",
    "ssl.key.password": "key_password",
    "ssl.endpoint.identification.algorithm": "endpoint_identification",
}
_PATHS = ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location")
_CLIENT_ID = "ktc-auth"


SECURITY_NAMESPACES = ("ssl.", "sasl.", "security.")


class SecurityError(ValueError):
    """A security setting ktc cannot use; the message is one line naming the property and its file."""


class AuthenticationError(WireError):
    """The broker refused our login, or we refused its certificate: trying again will not help."""


@dataclass(frozen=True)
class Security:
    """Client security settings (librdkafka property names); the default is plaintext.

    Checked when made: a bad combination raises ``SecurityError``.  ``source`` (the properties
    file, if any) only feeds error messages.
    """

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_location: str | None = None
    certificate_location: str | None = None
    key_location: str | None = None
    key_password: str | None = field(default=None, repr=False)
    endpoint_identification: str = "https"
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check(self)

    # -- making one
    @classmethod
    def from_properties(cls, path: str | os.PathLike[str]) -> Security:
        """Settings from a Java-style properties file with the keys of ``PROPERTIES``."""
        path = os.path.abspath(os.fspath(path))
        try:
            with open(path, encoding="utf-8") as f:
                properties = parse_properties(f.read())
        except OSError as error:
            raise SecurityError(f"cannot read Kafka client config {path}: {error.strerror}") from None
        except ValueError as error:  # a broken \\uXXXX escape
            raise SecurityError(f"cannot parse Kafka client config {path}: {error}") from None
        return cls.from_mapping(properties, source=path)

    @classmethod
    def from_mapping(cls, properties: Mapping[str, str], *, source: str | None = None) -> Security:
        """Settings from property name -> value; paths made absolute.  An unknown ``ssl.``/``sasl.``/
        ``security.`` name is an error (a typo must not silently mean plaintext); other client settings
        a downloaded client.properties carries (``bootstrap.servers``, ``session.timeout.ms``) are ignored."""
        where = source or "the Kafka client config"
        values: dict[str, str] = {}
        for key, value in properties.items():
            if key not in PROPERTIES and not key.startswith(SECURITY_NAMESPACES):
                continue
            if key not in PROPERTIES:
                raise SecurityError(
                    f"unknown property {key!r} in {where}: ktc understands only "
                    + ", ".join(k for k in PROPERTIES if k != "sasl.mechanisms")
                )
            values[PROPERTIES[key]] = os.path.abspath(value) if key in _PATHS and value else value
        if "protocol" in values:
            values["protocol"] = values["protocol"].upper()
        if values.get("mechanism"):
            values["mechanism"] = values["mechanism"].upper()
        return cls(**{k: v for k, v in values.items() if v != "" or k == "endpoint_identification"}, source=source)

    @classmethod
    def from_env(cls) -> Security:
        """Settings from the file named by ``$KTC_KAFKA_CONFIG``; ``PLAINTEXT`` when it is unset or empty."""
        path = os.environ.get(ENV_VARIABLE, "")
        if not path:
            return PLAINTEXT
        try:
            stamp = os.stat(path).st_mtime_ns
        except OSError as error:
            raise SecurityError(
                f"cannot read Kafka client config {path} (from ${ENV_VARIABLE}): {error.strerror}"
            ) from None
        return _from_file(os.path.abspath(path), stamp)

    # -- reading one
    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def check_hostname(self) -> bool:
        return ENDPOINT_CHECKS[self.endpoint_identification]

    def describe(self) -> str:
        """One line saying what a connection will do, without any secret."""
        parts = [self.protocol]
        if self.sasl:
            parts.append(f"{self.mechanism} as {self.username!r}")
        if self.tls:
            parts.append(f"CA {self.ca_location or 'system trust store'}")
            parts.append("hostname checked" if self.check_hostname else "hostname NOT checked")
            if self.certificate_location:
                parts.append(f"client cert {self.certificate_location}")
        if self.source:
            parts.append(f"from {self.source}")
        return ", ".join(parts)

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context of these settings (built once per settings; ``SecurityError`` if a file is unusable)."""
        return _context(self)


def _check(s: Security) -> None:
    """Raise SecurityError (one line naming the property and the file) for settings that cannot work."""
    where = s.source or "the Kafka client config"

    def bad(key: str, problem: str) -> SecurityError:
        return SecurityError(f"{key} in {where}: {problem}")

    if s.protocol not in PROTOCOLS:
        raise bad("security.protocol", f"{s.protocol!r} is not one of {', '.join(PROTOCOLS)}")
    if s.endpoint_identification not in ENDPOINT_CHECKS:
        raise bad("ssl.endpoint.identification.algorithm", f"{s.endpoint_identification!r} is not https or none")
    if s.sasl:
        if s.mechanism not in MECHANISMS:
            problem = f"{s.mechanism!r} is not" if s.mechanism else f"missing: security.protocol={s.protocol} needs"
            raise bad("sasl.mechanism", f"{problem} one of {', '.join(MECHANISMS)}")
        if not s.username:
            raise bad("sasl.username", f"missing: security.protocol={s.protocol} needs a SASL user name")
        if s.password is None:
            raise bad("sasl.password", f"missing: SASL {s.mechanism} needs the password of {s.username!r}")
    elif s.mechanism or s.username:
        key = "sasl.mechanism" if s.mechanism else "sasl.username"
        raise bad(key, f"set, but security.protocol={s.protocol} does not use SASL (did you mean SASL_SSL?)")
    tls_only = [key for key in (*_PATHS, "ssl.key.password") if getattr(s, PROPERTIES[key])]
    if tls_only and not s.tls:
        raise bad(tls_only[0], f"set, but security.protocol={s.protocol} does not use TLS (did you mean SASL_SSL?)")
    if s.key_location and not s.certificate_location:
        raise bad("ssl.key.location", "set without ssl.certificate.location (the client certificate)")
    for key in _PATHS:
        path = getattr(s, PROPERTIES[key])
        if path and not os.path.exists(path):
            raise bad(key, f"no such file: {path}")


PLAINTEXT = Security()


@functools.lru_cache(maxsize=16)
def _from_file(path: str, stamp: int) -> Security:  # stamp: re-read when the file changes
    return Security.from_properties(path)


@functools.lru_cache(maxsize=16)
def _context(s: Security) -> ssl.SSLContext:
    """TLS 1.2+, the CA file (or directory, or the system store), the client certificate if any."""
    where = s.source or "the Kafka client config"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = s.check_hostname
    try:
        if not s.ca_location:
            context.load_default_certs()
        elif os.path.isdir(s.ca_location):
            context.load_verify_locations(capath=s.ca_location)
        else:
            context.load_verify_locations(cafile=s.ca_location)
    except (ssl.SSLError, OSError) as error:
        raise SecurityError(
            f"ssl.ca.location in {where}: {s.ca_location} holds no usable CA certificate ({_one_line(error)})"
        ) from None
    if s.certificate_location:
        try:
            context.load_cert_chain(s.certificate_location, s.key_location, s.key_password)
        except (ssl.SSLError, OSError) as error:
            raise SecurityError(
                f"ssl.certificate.location / ssl.key.location in {where}: cannot load the client "
                f"certificate and key (wrong ssl.key.password?): {_one_line(error)}"
            ) from None
    return context


# ---- opening a connection ----------------------------------------------------------------------


def open_socket(address: tuple[str, int], timeout_s: float, security: Security | None = None) -> socket.socket:
    """A connected, blocking socket to ``address``, ready for Kafka requests.

    ``security`` None means ``Security.from_env()``; pass ``PLAINTEXT`` for a plaintext connection
    whatever the environment says.  With TLS the socket is an ``ssl.SSLSocket`` whose handshake is
    done (certificate checked against ``ssl.ca.location``, the hostname too unless
    ``ssl.endpoint.identification.algorithm=none``); with SASL the authentication is done.  A
    caller that then sets it non-blocking must treat ``ssl.SSLWantReadError`` /
    ``ssl.SSLWantWriteError`` like ``BlockingIOError`` and, after a ``recv``, read
    ``sock.pending()`` more bytes: TLS may hold decrypted bytes that ``select`` does not see.
    Failures raise ``WireError`` with one line; ``AuthenticationError`` (a ``WireError``) when the
    broker refused the login (with its own message) or its certificate was refused, which no retry mends.
    """
    security = Security.from_env() if security is None else security
    name = f"{address[0]}:{address[1]}"
    try:
        sock = socket.create_connection(address, timeout=timeout_s)
    except OSError as error:
        raise WireError(f"cannot connect to {name}: {error}") from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        if security.tls:
            sock = _tls(sock, address, security)
        if security.sasl:
            _authenticate(sock, name, security)
    except BaseException:
        sock.close()
        raise
    return sock


def _tls(sock: socket.socket, address: tuple[str, int], security: Security) -> ssl.SSLSocket:
    """Wrap ``sock`` in TLS (SNI = the host of ``address``) and finish the handshake."""
    name = f"{address[0]}:{address[1]}"
    where = f" in {security.source}" if security.source else ""
    try:
        return security.ssl_context().wrap_socket(sock, server_hostname=address[0])
    except ssl.SSLCertVerificationError as error:
        hint = (
            "the certificate does not name this host: check the bootstrap address or "
            "ssl.endpoint.identification.algorithm"
            if error.verify_code in (62, 64)
            else "check ssl.ca.location"
        )
        raise AuthenticationError(
            f"TLS to {name}: the broker's certificate was refused: {error.verify_message} ({hint}{where})"
        ) from None
    except (ssl.SSLError, OSError) as error:
        raise WireError(
            f"TLS handshake with {name} failed: {_one_line(error)} "
            f"(is it a TLS listener? security.protocol={security.protocol}{where})"
        ) from None


def _authenticate(sock: socket.socket, name: str, security: Security) -> None:
    """SaslHandshake v1, then SaslAuthenticate v1 rounds driven by kafka-python's mechanism."""
    handshake = _exchange(
        sock, name, security, SaslHandshakeRequest, SaslHandshakeResponse, 1, mechanism=security.mechanism
    )
    if handshake.error_code != 0:
        enabled = (
            f"the listener enables only {', '.join(handshake.mechanisms)}"
            if handshake.mechanisms
            else "the listener does not use SASL: check security.protocol"
        )
        raise AuthenticationError(
            f"SASL {security.mechanism} refused by {name} (error {handshake.error_code}): {enabled}"
        )
    mechanism = get_sasl_mechanism(security.mechanism)(
        sasl_mechanism=security.mechanism,
        sasl_plain_username=security.username,
        sasl_plain_password=security.password,
        security_protocol=security.protocol,
        host=name.rsplit(":", 1)[0],
    )
    correlation = 1
    while not mechanism.is_done():
        correlation += 1
        answer = _exchange(
            sock,
            name,
            security,
            SaslAuthenticateRequest,
            SaslAuthenticateResponse,
            correlation,
            auth_bytes=mechanism.auth_bytes(),
        )
        if answer.error_code != 0:
            raise AuthenticationError(
                f"SASL {security.mechanism} login as {security.username!r} to {name} failed "
                f"(error {answer.error_code}): {_one_line(answer.error_message or 'no message')}"
            )
        try:
            mechanism.receive(answer.auth_bytes)
        except (ValueError, KeyError) as error:
            raise WireError(f"SASL {security.mechanism} answer from {name} is wrong: {_one_line(error)}") from None
    if not mechanism.is_authenticated():
        raise AuthenticationError(f"SASL {security.mechanism} login as {security.username!r} to {name} failed")


def _exchange(
    sock: socket.socket, name: str, security: Security, request_cls, response_cls, correlation: int, **fields
):
    """Send one SASL request (v1) on a blocking socket and decode its response."""
    version = 1
    request = request_cls[version](**fields)
    request.with_header(correlation_id=correlation, client_id=_CLIENT_ID)
    try:
        sock.sendall(request.encode(header=True, framed=True))
        size = struct.unpack(">i", _recv_exactly(sock, 4))[0]
        response = response_cls[version].decode(_recv_exactly(sock, size), header=True)
    except TimeoutError:
        raise WireError(f"no answer to {request_cls.__name__} from {name}") from None
    except EOFError:
        hint = "" if security.tls else " (a TLS listener? then security.protocol=SASL_SSL)"
        raise WireError(f"{name} closed the connection during SASL authentication{hint}") from None
    except OSError as error:
        raise WireError(f"connection to {name} broke during SASL: {_one_line(error)}") from None
    except (struct.error, ValueError, IndexError, TypeError) as error:
        raise WireError(f"unreadable {response_cls.__name__} from {name}: {_one_line(error)}") from None
    if response.header.correlation_id != correlation:
        raise WireError(f"{name} answered correlation id {response.header.correlation_id}, expected {correlation}")
    return response


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    """``n`` bytes from a blocking socket; EOFError if it closes first."""
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _one_line(error: object) -> str:
    return " ".join(str(error).split())
