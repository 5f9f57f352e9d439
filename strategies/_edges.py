"""Named timestamp edges, each with the reason it is worth generating.

Every value is a Java ``long`` of milliseconds since the epoch.  Strategies put these first so
that they are drawn often and so that failing examples shrink onto a value with a name.
"""

from __future__ import annotations

from ktc.reference.types import INT64_MAX, INT64_MIN, NO_TIMESTAMP

__all__ = [
    "INT64_MIN",
    "INT64_MAX",
    "NO_TIMESTAMP",
    "GREGORIAN_CUTOVER_MS",
    "YEAR_1_MS",
    "YEAR_9999_END_MS",
    "PANDAS_NS_MIN_MS",
    "PANDAS_NS_MAX_MS",
    "DAY_MS",
    "clamp",
    "wrap",
    "unit_mistakes",
]

# INT64_MIN: KIP-228's proposed NO_TIMESTAMP sentinel, and where `now - ts` overflows first.
# INT64_MAX: the "no limit" value of every timestamp config; `now + INT64_MAX` wraps negative.
# NO_TIMESTAMP: Kafka's -1 sentinel, exempt from validation and ambiguous with a real -1 ms.

# 1582-10-15T00:00Z: java.util.Date/GregorianCalendar switch calendars here; java.time does not.
GREGORIAN_CUTOVER_MS = -12_219_292_800_000
# 0001-01-01T00:00Z: the smallest instant many date libraries (Python datetime, .NET) can format.
YEAR_1_MS = -62_135_596_800_000
# 9999-12-31T23:59:59.999Z: the largest instant four-digit-year formatters and SQL DATETIME accept.
YEAR_9999_END_MS = 253_402_300_799_999
# pandas.Timestamp.min in ms: consumers storing nanoseconds in int64 overflow just below this.
PANDAS_NS_MIN_MS = -9_223_372_036_854
# pandas.Timestamp.max in ms: the ns-in-int64 overflow just above this.
PANDAS_NS_MAX_MS = 9_223_372_036_854
# One day: the natural unit of retention and rolling configs.
DAY_MS = 86_400_000

_SPAN = 2**64


def clamp(value: int) -> int:
    """``value`` saturated into the int64 range."""
    return max(INT64_MIN, min(INT64_MAX, value))


def wrap(value: int) -> int:
    """``value`` reduced to the int64 with the same low 64 bits, as Java ``long`` arithmetic does."""
    return (value - INT64_MIN) % _SPAN + INT64_MIN


def unit_mistakes(now: int) -> tuple[int, int, int]:
    """``now`` read in the wrong unit: as µs (x1000), as ns (x1e6) and as seconds (//1000).

    Producers that pass ``System.nanoTime()``-like or ``time.time()`` values send these; products
    are clamped into int64 so that they remain valid record timestamps.
    """
    return clamp(now * 1000), clamp(now * 1_000_000), now // 1000
