"""The report files' schema version and the one way they are written (atomically: a reader never sees half)."""
from __future__ import annotations

import os
from pathlib import Path

SCHEMA_VERSION = 2  # 2: rows gained seed, duration, signature, signatures; provenance gained config


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
