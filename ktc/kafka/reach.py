"""Is there a Kafka broker at this address?  A TCP accept is not a broker: it must answer ApiVersions."""

from __future__ import annotations

import socket


class Unreachable(Exception):
    """No broker answers at the address (the message says why, in one line)."""


def reachable(address: str, timeout_s: float = 10.0) -> None:
    """Raises ``Unreachable`` within about ``timeout_s`` unless a broker answers ApiVersions at ``address``."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise Unreachable(f"--kafka-bootstrap {address!r}: expected HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as error:
        raise Unreachable(
            f"cannot reach Kafka at {address} ({error.strerror or error}); is the broker running?"
        ) from None
    answers_api_versions(address, timeout_s)


def answers_api_versions(address: str, timeout_s: float) -> None:
    from .client import wire
    from .client.security import AuthenticationError

    try:
        with wire.Client(address, timeout_s=timeout_s) as client:
            client.api_versions()
    except OSError as error:
        raise Unreachable(
            f"cannot reach Kafka at {address} ({error.strerror or error}); is the broker running?"
        ) from None
    except AuthenticationError as error:
        raise Unreachable(f"{address} refused ktc's login or certificate ({error}); check --kafka-config") from None
    except Exception as error:  # WireError, a protocol mismatch, a timeout inside the client
        raise Unreachable(f"{address} did not answer as a Kafka broker ({type(error).__name__}: {error})") from None
