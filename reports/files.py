"""The report files' schema version and the one way they are written (atomically: a reader never sees half)."""

from __future__ import annotations

import os
from pathlib import Path

SCHEMA_VERSION = 3  # 2: rows gained seed, duration, signature, signatures; provenance gained config
#                    3: "clauses" (registry texts), rows' timeline and replay (reports/README.md)


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
