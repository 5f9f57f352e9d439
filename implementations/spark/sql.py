"""Plans as SQL text: expressions are strings, a stage is one query.

Built with PySpark's Column functions, each node of an expression is a py4j round trip to the JVM (the
append path's plan took about 2,500, a fixed 0.3-1 s of the driver's time per query: benchmarks/README.md).
As SQL text, an expression costs nothing until the query that holds it is parsed, in the JVM, and a whole
query costs a handful of round trips.  Expressions here are SQL fragments (a column name is one), composed
by the functions of append.py and int64.py the way Columns would be.
"""

from __future__ import annotations

import re


def literal(value) -> str:
    """A Python value as a SQL literal of the type ``F.lit`` would give it (int up to 2^31 an INT, else a BIGINT;
    bytes a BINARY, a list an ARRAY)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -(2**31) <= value < 2**31 else f"{value}L"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, list):
        return f"array({', '.join(literal(v) for v in value)})"
    raise TypeError(f"no SQL literal for {value!r}")


def typed(value, kind: str) -> str:
    """A Python value as a literal of the Spark SQL type ``kind`` (``bigint``, ``array<bigint>``, ...)."""
    return f"CAST({literal(value)} AS {kind})"


INTEGER = re.compile(r"-?\d+L?")


def same(a: str, b: str) -> str:
    """``a = b``, TRUE or FALSE when both are integer literals."""
    if INTEGER.fullmatch(a) and INTEGER.fullmatch(b):
        return TRUE if int(a.rstrip("L")) == int(b.rstrip("L")) else FALSE
    return f"{a} = {b}"


TRUE, FALSE = "true", "false"


def case(*branches: tuple[str, str], otherwise: str | None = None) -> str:
    """``CASE WHEN c1 THEN v1 ... [ELSE otherwise] END`` (NULL where no branch holds, as ``F.when``), folded
    where a condition is the literal TRUE or FALSE: a branch that never holds is left out, one that always
    holds ends the CASE (its value alone when it comes first)."""
    kept = []
    for condition, value in branches:
        if condition == TRUE:
            if not kept:
                return value
            otherwise = value
            break
        if condition != FALSE:
            kept.append((condition, value))
    if not kept:  # no branch can hold: the ELSE, or a NULL of the first branch's type
        return otherwise if otherwise is not None else f"CASE WHEN false THEN {branches[0][1]} END"
    whens = " ".join(f"WHEN {condition} THEN {value}" for condition, value in kept)
    return f"CASE {whens}{'' if otherwise is None else f' ELSE {otherwise}'} END"


def both(*conditions: str) -> str:
    """``c1 AND c2 ...``, folded: FALSE if one is FALSE, the TRUE ones left out (exact under SQL's NULLs)."""
    if FALSE in conditions:
        return FALSE
    kept = [c for c in conditions if c != TRUE]
    return f"({' AND '.join(kept)})" if kept else TRUE


def either(*conditions: str) -> str:
    """``c1 OR c2 ...``, folded: TRUE if one is TRUE, the FALSE ones left out."""
    if TRUE in conditions:
        return TRUE
    kept = [c for c in conditions if c != FALSE]
    return f"({' OR '.join(kept)})" if kept else FALSE


def negated(condition: str) -> str:
    return {TRUE: FALSE, FALSE: TRUE}.get(condition, f"(NOT {condition})")


class Switches:
    """A profile's switches as the append path reads them, and the input columns known to hold one value on
    every row.  Known values (one profile, and a caller's known topic config: api.evaluate) are folded into the
    text, so Spark parses, analyses, optimizes and compiles only the branches they take; without values (many
    profiles in one run: pipeline.py) each switch is a column of the same name.  ``literals`` gives a known
    value its literal where the bare one would have another type (a known input column: its column's type)."""

    def __init__(self, values: dict | None = None, literals: dict[str, str] | None = None):
        self.values = dict(values or {})
        self.literals = dict(literals or {})

    def __getitem__(self, name: str) -> str:
        """The switch as an expression: its literal, or its column."""
        if name in self.literals:
            return self.literals[name]
        return literal(self.values[name]) if name in self.values else name

    def known(self, name: str) -> bool:
        return name in self.values

    def equals(self, name: str, value) -> str:
        """``switch = value``: TRUE or FALSE when known."""
        if name in self.values:
            return TRUE if self.values[name] == value else FALSE
        return f"{name} = {literal(value)}"

    def holds(self, name: str) -> str:
        """A boolean switch: TRUE or FALSE when known, else its column."""
        return (TRUE if self.values[name] else FALSE) if name in self.values else name


def aliased(columns: dict[str, str]) -> str:
    """``expression AS name, ...``: a select list."""
    return ", ".join(f"{expression} AS {name}" for name, expression in columns.items())


def adding(relation: str, *steps: dict[str, str], selected: list[str] | None = None, private=()) -> str:
    """A relation adding each step's columns (name -> expression over the previous step's) to ``relation``'s, one
    projection per step as chained ``withColumns`` would: ``(SELECT *, ... FROM (SELECT *, ... FROM relation))``.

    A column whose expression is a constant or another column's name (a known switch folds many to that) is no
    projection of its own: the later steps read its expression in its place, and the last step adds it.  Spark's
    analyser resolves about one query level per pass over the whole plan, so a level less is a pass less.
    So is a column named in ``private`` (no reader of the relation reads it) that one later expression reads: it is
    read in place there, and not added.  With ``selected``, the last projection returns those columns alone, in
    that order."""
    inlined: dict[str, str] = {}
    for n, step in enumerate(steps):
        step = {name: substituted(expression, inlined) for name, expression in step.items()}
        if n < len(steps) - 1:
            once = read_once([e for later in steps[n + 1 :] for e in later.values()], private)
            inlined.update((name, e) for name, e in step.items() if TRIVIAL.fullmatch(e) or name in once)
            step = {name: e for name, e in step.items() if name not in inlined}
        else:
            step = {**{name: e for name, e in inlined.items() if name not in private}, **step}
        if selected is not None and n == len(steps) - 1:
            return f"(SELECT {', '.join(f'{step[c]} AS {c}' if c in step else c for c in selected)} FROM {relation})"
        if step:
            relation = f"(SELECT *, {aliased(step)} FROM {relation})"
    return relation


TRIVIAL = re.compile(r"[A-Za-z_]\w*|-?\d+L?|'[^'\\]*'|CAST\((NULL|-?\d+L?|true|false|'[^'\\]*') AS \w+\)")
NAME = re.compile(r"'(?:[^'\\]|\\.)*'|(?<![.\w])[A-Za-z_]\w*")


def read_once(expressions: list[str], names) -> set[str]:
    """The ``names`` that occur once in ``expressions``, all taken together."""
    found = [m[0] for e in expressions for m in NAME.finditer(e) if m[0] in names]
    return {name for name in names if found.count(name) == 1}


def substituted(expression: str, names: dict[str, str]) -> str:
    """``expression`` with each column of ``names`` read as its expression (quoted text and struct fields kept)."""
    if not names:
        return expression
    return NAME.sub(lambda m: f"({names[m[0]]})" if m[0] in names else m[0], expression)


def statement(relation: str) -> str:
    """A parenthesized relation as a statement: its query without the parentheses (and without a level of
    ``SELECT * FROM``, which Spark would analyse like any other)."""
    return relation[1:-1] if relation.startswith("(") and relation.endswith(")") else f"SELECT * FROM {relation}"


def query(spark, text: str, **frames):
    """The DataFrame of ``text``, each ``{name}`` in it the DataFrame ``frames[name]`` (a temporary view while
    the query is analysed, PySpark's own formatter): a stage in a few py4j round trips."""
    return spark.sql(text, **frames)
