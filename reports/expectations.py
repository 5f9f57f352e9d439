"""Expected failures, as data per implementation (and version): WPT-style metadata.

A known bug in the implementation under test should not turn every CI run red, nor be silently
ignored: each entry names the clause, the profile, the verdict expected, why, and where the bug
is tracked.  Strict: an entry whose row passes is an *unexpected pass* and fails the run, so
fixed bugs get their entry removed instead of rotting.

```toml
schema_version = 1
implementation = "my-broker"
version = "1.2.3"            # optional; entries apply only to rows of this version

[[expect]]
clause = "KIP-937.bounds-inclusive"
profile = "kafka-4"
verdict = "fail"
reason = "off by one at after.max.ms"
source = "https://example.org/bugs/123"
```
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import cast

from .loading import InputError
from .schema import ExpectationsFile, Expected, Key, Row
from .verdicts import BAD

SCHEMA = 1
REQUIRED = ("clause", "profile", "verdict")
VERDICTS = ("fail", "error", "unknown", "unsupported")
TODO = "TODO: explain"


KEYS = {"clause", "profile", "verdict", "reason", "source"}
Known = tuple[Collection[str] | None, Collection[str] | None]  # the clauses and profiles an entry may name


def load(
    path: Path | str, clauses: Collection[str] | None = None, profiles: Collection[str] | None = None
) -> ExpectationsFile:
    """The parsed file, validated (with ``clauses``/``profiles``, every entry names a known one; no entry
    twice); ``InputError`` (one line, ``file:line``) otherwise."""
    path = Path(path)
    text = read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"expectations file {path} is not valid TOML: {error}") from None
    if data.get("schema_version") != SCHEMA or not isinstance(data.get("implementation"), str):
        raise InputError(f'expectations file {path}:1: needs schema_version = {SCHEMA} and implementation = "..."')
    check_entries(path, data.get("expect", []), entry_lines(text), (clauses, profiles))
    return cast(ExpectationsFile, data)  # its version, implementation and entries checked above


def read_text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise InputError(f"expectations file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read expectations file {path}: {type(error).__name__}") from None


def entry_lines(text: str) -> list[int]:
    """The line number of each ``[[expect]]`` table, in order."""
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith("[[expect]]")]


def check_entries(path: Path, entries: object, lines: list[int], known: Known) -> None:
    if not isinstance(entries, list):
        raise InputError(f"expectations file {path}: 'expect' must be a list of [[expect]] tables")
    seen: dict[tuple[str, str], int] = {}
    for i, entry in enumerate(entries):
        where = f"expectations file {path}:{lines[i] if i < len(lines) else 1}"
        problem = entry_problem(entry, *known)
        if problem:
            raise InputError(f"{where}: {problem}")
        key = (entry["clause"], entry["profile"])
        if key in seen:
            raise InputError(f"{where}: a second entry for {key[0]} under {key[1]} (the first is at line {seen[key]})")
        seen[key] = lines[i] if i < len(lines) else 1


def entry_problem(entry: object, clauses: Collection[str] | None, profiles: Collection[str] | None) -> str | None:
    if not isinstance(entry, dict):
        return "each [[expect]] entry must be a table"
    missing = [k for k in REQUIRED if not isinstance(entry.get(k), str) or not entry.get(k)]
    if missing:
        return f"entry lacks {', '.join(missing)} (each entry needs {', '.join(REQUIRED)})"
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        return f"unknown key {unknown[0]!r} (keys are {', '.join(sorted(KEYS))})"
    if entry["verdict"] not in VERDICTS:
        return f"verdict {entry['verdict']!r} is not one of {', '.join(VERDICTS)}"
    if clauses is not None and entry["clause"] not in clauses:
        return f"unknown clause {entry['clause']!r} (see 'ktc clauses')"
    if profiles is not None and entry["profile"] not in profiles:
        return f"unknown profile {entry['profile']!r} (one of {', '.join(profiles)})"
    return None


def index(files: list[ExpectationsFile], rows: list[Row], external: Iterable[str] = ()) -> dict[Key, Expected]:
    """(clause, implementation, profile) -> entry, for rows whose implementation (and version) match.  A
    file naming no implementation of the rows applies to the ``external`` ones (targets known only by
    address: the user's own broker, which the user says the file describes)."""
    versions = {(r["implementation"]): str(r.get("implementation_version")) for r in rows}
    out: dict[Key, Expected] = {}
    for data in files:
        impl, version = data["implementation"], data.get("version")
        if version is not None and impl in versions and versions[impl] != str(version):
            continue
        for name in [impl] if impl in versions else sorted(external) or [impl]:
            for entry in data.get("expect", []):
                out[(entry["clause"], name, entry["profile"])] = entry
    return out


def update(rows: list[Row], implementation: str, old: ExpectationsFile | None) -> str:
    """A new file: one entry per failing row of ``implementation``; reasons and sources kept from
    ``old`` where it has the same (clause, profile), else ``TODO: explain``."""
    previous = {(e["clause"], e["profile"]): e for e in (old or {}).get("expect", [])}
    mine = [r for r in rows if r["implementation"] == implementation and r["verdict"] in BAD]
    version = next((r.get("implementation_version") for r in mine), None) or (old or {}).get("version")
    lines = [f"schema_version = {SCHEMA}", f"implementation = {_s(implementation)}"]
    lines += [f"version = {_s(str(version))}"] if version is not None else []
    for row in sorted(mine, key=lambda r: (r["clause"], r["profile"])):
        prev = previous.get((row["clause"], row["profile"]), {})
        lines += [
            "",
            "[[expect]]",
            f"clause = {_s(row['clause'])}",
            f"profile = {_s(row['profile'])}",
            f"verdict = {_s(row['verdict'])}",
            f"reason = {_s(prev.get('reason') or TODO)}",
            f"source = {_s(prev.get('source') or '')}",
        ]
    return "\n".join(lines) + "\n"


def _s(text: str) -> str:
    """A TOML basic string (JSON's escaping is a valid subset of TOML's)."""
    return json.dumps(text, ensure_ascii=False)
