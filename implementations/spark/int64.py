"""Java ``long`` arithmetic as Spark Columns, exact under ANSI mode.

Kafka computes ``now - ts`` and ``-1 * diff`` in wrapping 64-bit arithmetic; Spark with ANSI on
raises ARITHMETIC_OVERFLOW instead.  Computing in decimal(38,0) and reducing with ``pmod``
reproduces Java's result exactly (research note A7).  Results stay decimal(38,0) so that the
exact (``kip`` profile) and wrapped values share one type; compare them with ``lit`` decimals.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

DEC = "decimal(38,0)"
_SPAN = "18446744073709551616"
_HALF = "9223372036854775808"


def dec(column) -> Column:
    return (F.col(column) if isinstance(column, str) else column).cast(DEC)


def wrap(exact: Column) -> Column:
    """The Java long with the same low 64 bits as an exact decimal value."""
    return (F.pmod(exact + F.lit(_HALF).cast(DEC), F.lit(_SPAN).cast(DEC)) - F.lit(_HALF).cast(DEC)).cast(DEC)


def maybe_wrap(exact: Column, wrapping: Column) -> Column:
    return F.when(wrapping, wrap(exact)).otherwise(exact)


def sub(a, b, wrapping: Column) -> Column:
    return maybe_wrap(dec(a) - dec(b), wrapping)


def add(a, b, wrapping: Column) -> Column:
    return maybe_wrap(dec(a) + dec(b), wrapping)


# -- fast paths: plain long arithmetic, decimal only on the rows where it overflows --------------
LONG_MIN = -(2**63)


def sub_long(a: str, b: str, wrapping: Column) -> Column:
    """Java ``a - b`` as a long where it fits; on overflow the wrapped long (wrapping) or NULL (exact)."""
    fast = F.try_subtract(F.col(a), F.col(b))
    return F.when(fast.isNotNull(), fast).when(wrapping, wrap(dec(a) - dec(b)).cast("bigint"))


def exceeds(diff: Column, limit: str) -> Column:
    """``diff > limit`` where a NULL diff (exact arithmetic overflowed) exceeds every long limit."""
    return F.when(diff.isNull(), F.lit(True)).otherwise(diff > F.col(limit))


def negated_exceeds(diff: Column, limit: str, wrapping: Column) -> Column:
    """``-diff > limit``: -Long.MIN_VALUE is Long.MIN_VALUE when wrapping and 2^63 when exact."""
    return F.when(diff.isNull(), F.lit(False)).when(diff == F.lit(LONG_MIN), ~wrapping).otherwise(-diff > F.col(limit))


def abs_exceeds(diff: Column, limit: str, wrapping: Column) -> Column:
    """``Math.abs(diff) > limit``: Math.abs(Long.MIN_VALUE) is negative in Java."""
    return (
        F.when(diff.isNull(), F.lit(True))
        .when(diff == F.lit(LONG_MIN), ~wrapping)
        .otherwise(F.abs(diff) > F.col(limit))
    )
