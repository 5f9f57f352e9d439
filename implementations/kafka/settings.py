"""What the environment sets for the brokers ktc starts: ``KTC_KAFKA_BROKER_CONFIG`` (their settings) and the
pipeline's tuning (``KTC_KAFKA_CHUNK``, ``_CONNECTIONS``, ``_DEPTH``, ``_READY_S``, ``_RECONNECT_S``); a malformed
value is a one-line ValueError naming the variable, raised when the implementation is built."""
from __future__ import annotations

import os

TUNING = {"chunk": int, "connections": int, "depth": int, "ready_s": float, "reconnect_s": float}


def tuned(impl, environ) -> None:
    """Apply ``KTC_KAFKA_CHUNK``, ``_CONNECTIONS``, ``_DEPTH``, ``_READY_S``, ``_RECONNECT_S`` where set;
    a value that is not a positive number is a one-line ValueError naming the variable."""
    for attr, kind in TUNING.items():
        name = f"KTC_KAFKA_{attr.upper()}"
        raw = environ.get(name, "").strip()
        if raw:
            setattr(impl, attr, positive(name, raw, kind))


def positive(name: str, raw: str, kind: type):
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or not value > 0:
        raise ValueError(f"{name}={raw!r}: expected a positive {'whole number' if kind is int else 'number'}")
    return value


def extra_broker_config() -> dict[str, str]:
    """``KTC_KAFKA_BROKER_CONFIG=key=value,key=value``: settings for the brokers ktc starts (e.g. a
    short ``connections.max.idle.ms`` to prove a long run survives idle reaping)."""
    pairs = [item.partition("=") for item in os.environ.get("KTC_KAFKA_BROKER_CONFIG", "").split(",") if item.strip()]
    wrong = next((key + sep + value for key, sep, value in pairs if not sep or not key.strip()), None)
    if wrong is not None:
        raise ValueError(f"KTC_KAFKA_BROKER_CONFIG: {wrong.strip()!r} is not key=value (settings: key=value,key=value)")
    return {key.strip(): value.strip() for key, _sep, value in pairs}
