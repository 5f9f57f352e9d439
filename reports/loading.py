"""Read results.json and counterexample files back, refusing anything we would misread.

Every consumer (report, diff, baseline gate, expectations, replay) goes through here, so a
corrupt file, a file of another schema version or a missing file is one clear ``InputError``
(the CLI prints it on one line and exits 2) instead of a traceback or, worse, a silent
comparison against garbage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from .schema import READABLE, Counterexample, Document

COUNTEREXAMPLE_SCHEMA = 1
ROW_KEYS = {"clause", "implementation", "profile", "verdict"}


class InputError(ValueError):
    """A file given to ktc that cannot be used; the message is one line and names the file."""


def read_json(path: Path | str, what: str) -> dict[str, object]:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read {what} {path}: {type(error).__name__}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"{what} {path} is not valid JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); is it truncated?"
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{what} {path} is not a JSON object")
    return data


def load_results(path: Path | str) -> Document:
    """A results document of a schema version this ktc reads (2 or 3), with well-formed rows.  A schema 2
    file lacks the clause texts, timelines and replay commands: ``ktc report`` joins them in
    (ktc/plugin/artifacts.py: attach); the other readers need only the rows."""
    doc = read_json(path, "results file")
    version = doc.get("schema_version")
    if version not in READABLE:
        raise InputError(
            f"results file {path} has schema_version {version!r}; this ktc reads "
            f"{' or '.join(map(str, READABLE))} (re-run 'ktc run' to regenerate it)"
        )
    rows = doc.get("rows")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and ROW_KEYS <= r.keys() for r in rows):
        raise InputError(f"results file {path} has malformed rows (each needs {', '.join(sorted(ROW_KEYS))})")
    return cast(Document, doc)  # its version and rows checked above; the rest is read with fallbacks


def load_counterexample(path: Path | str) -> Counterexample:
    """A counterexample file (see reports/README.md), checked for the fields replay needs."""
    data = read_json(path, "counterexample file")
    if data.get("schema_version") != COUNTEREXAMPLE_SCHEMA:
        raise InputError(
            f"counterexample file {path} has schema_version {data.get('schema_version')!r}; "
            f"this ktc reads {COUNTEREXAMPLE_SCHEMA}"
        )
    missing = {"clause", "implementation", "profile", "history", "mismatch"} - data.keys()
    if missing:
        raise InputError(f"counterexample file {path} lacks {', '.join(sorted(missing))}")
    return cast(Counterexample, data)  # its version and the fields replay needs checked above
