"""What every ``ktc`` subcommand shares: the one-line usage error (exit 2), the parser that raises it,
and the reachability check of a bootstrap address."""
from __future__ import annotations

import argparse

EXIT_USAGE = 2


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that never guesses (no abbreviations: a typo is an error, not another flag) and whose
    errors are one line."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})

    def error(self, message: str):  # one line, exit 2, no usage dump
        hint = STRAY if message.startswith("unrecognized arguments") else ""
        where = f"ktc {self.prog.split()[-1]}" if " " in self.prog else "ktc"
        raise UsageError(f"{message}{hint} (see '{where} --help')")


STRAY = "; ktc's options go before '--' and pytest's after it (an implementation is --impl NAME)"


def reachable(address: str, timeout_s: float = 10.0) -> None:
    """An unreachable bootstrap address is a usage error, reported in one line within the timeout."""
    import socket

    from implementations.kafka.client.security import AuthenticationError
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--kafka-bootstrap {address!r}: expected HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
        from implementations.kafka.client import (
            wire,  # a TCP accept is not a broker: ask it ApiVersions
        )
        with wire.Client(address, timeout_s=timeout_s) as client:
            client.api_versions()
    except OSError as error:
        raise UsageError(
            f"cannot reach Kafka at {address} ({error.strerror or error}); is the broker running?"
        ) from None
    except AuthenticationError as error:
        raise UsageError(f"{address} refused ktc's login or certificate ({error}); check --kafka-config") from None
    except Exception as error:  # WireError, a protocol mismatch, a timeout inside the client
        raise UsageError(f"{address} did not answer as a Kafka broker ({type(error).__name__}: {error})") from None
