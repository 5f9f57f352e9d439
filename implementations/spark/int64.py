"""Java ``long`` arithmetic as Spark SQL expressions (text), exact under ANSI mode.

Kafka computes ``now - ts`` and ``-1 * diff`` in wrapping 64-bit arithmetic; Spark with ANSI on
raises ARITHMETIC_OVERFLOW instead.  Computing in decimal(38,0) and reducing with ``pmod``
reproduces Java's result exactly (research note A7).  Results stay decimal(38,0) so that the
exact (``kip`` profile) and wrapped values share one type.  Arguments are SQL expressions: a
column name, or any expression; ``wrapping`` a boolean one, folded where it is TRUE or FALSE.
"""

from __future__ import annotations

from .sql import case, negated

DEC = "DECIMAL(38,0)"
_SPAN = f"CAST('18446744073709551616' AS {DEC})"
_HALF = f"CAST('9223372036854775808' AS {DEC})"


def dec(expression: str) -> str:
    return f"CAST({expression} AS {DEC})"


def wrap(exact: str) -> str:
    """The Java long with the same low 64 bits as an exact decimal value."""
    return f"CAST(pmod({exact} + {_HALF}, {_SPAN}) - {_HALF} AS {DEC})"


def maybe_wrap(exact: str, wrapping: str) -> str:
    return case((wrapping, wrap(exact)), otherwise=exact)


def sub(a: str, b: str, wrapping: str) -> str:
    return maybe_wrap(f"({dec(a)} - {dec(b)})", wrapping)


def add(a: str, b: str, wrapping: str) -> str:
    return maybe_wrap(f"({dec(a)} + {dec(b)})", wrapping)


# -- fast paths: plain long arithmetic, decimal only on the rows where it overflows --------------
LONG_MIN = -(2**63)
_LONG_MIN = "CAST(-9223372036854775808 AS BIGINT)"


def sub_long(a: str, b: str, wrapping: str) -> str:
    """Java ``a - b`` as a long where it fits; on overflow the wrapped long (wrapping) or NULL (exact)."""
    fast = f"try_subtract({a}, {b})"
    return case((f"{fast} IS NOT NULL", fast), (wrapping, f"CAST({wrap(f'({dec(a)} - {dec(b)})')} AS BIGINT)"))


def exceeds(diff: str, limit: str) -> str:
    """``diff > limit`` where a NULL diff (exact arithmetic overflowed) exceeds every long limit."""
    return case((f"({diff}) IS NULL", "true"), otherwise=f"({diff}) > {limit}")


def negated_exceeds(diff: str, limit: str, wrapping: str) -> str:
    """``-diff > limit``: -Long.MIN_VALUE is Long.MIN_VALUE when wrapping and 2^63 when exact."""
    return case(
        (f"({diff}) IS NULL", "false"), (f"({diff}) = {_LONG_MIN}", negated(wrapping)), otherwise=f"-({diff}) > {limit}"
    )


def abs_exceeds(diff: str, limit: str, wrapping: str) -> str:
    """``Math.abs(diff) > limit``: Math.abs(Long.MIN_VALUE) is negative in Java."""
    return case(
        (f"({diff}) IS NULL", "true"),
        (f"({diff}) = {_LONG_MIN}", negated(wrapping)),
        otherwise=f"abs({diff}) > {limit}",
    )
