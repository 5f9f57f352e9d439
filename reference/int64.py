"""Java ``long`` arithmetic, explicitly.

Kafka computes ``now - ts`` and ``-1 * diff`` in 64-bit two's complement, which wraps on
overflow.  The KIP texts are written in exact arithmetic.  The model calls these helpers
through a profile's ``arithmetic`` switch so that the choice is visible at every use.
"""

from __future__ import annotations

from .types import INT64_MIN

_SPAN = 2**64


def wrap(x: int) -> int:
    """Reduce an exact integer to the Java ``long`` with the same low 64 bits."""
    return (x - INT64_MIN) % _SPAN + INT64_MIN


def sub(a: int, b: int, wrapping: bool) -> int:
    return wrap(a - b) if wrapping else a - b


def add(a: int, b: int, wrapping: bool) -> int:
    return wrap(a + b) if wrapping else a + b


def neg(a: int, wrapping: bool) -> int:
    return wrap(-a) if wrapping else -a
