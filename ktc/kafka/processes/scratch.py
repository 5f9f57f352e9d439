"""The local broker's data directory in RAM (tmpfs), where there is one with room.

Every history gets topics of its own, and creating a partition costs Kafka several fsyncs (its
partition.metadata file, the leader-epoch checkpoint, the directory): about 6 ms per partition
on this repository's virtual disk, about 1 ms on tmpfs.  Creation, not appends, bounds how many
scenarios per second a broker runs, so its data lives in /dev/shm.  Nothing observable through
the protocol depends on the disk (segment mtimes matter only to retention, which is not run).

Removed when the implementation closes and at interpreter exit; a directory left behind by a
process that died without either (its pid in the name is gone) is removed the next time one is
made.  ``KTC_KAFKA_DATA_DIR=disk`` keeps the data in the broker's own temp dir.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

TMPFS = Path("/dev/shm")
PREFIX = "ktc-kafka-data-"
MIN_FREE_BYTES = 1 << 30
_MADE: set[Path] = set()


def make(root: Path = TMPFS) -> Path | None:
    """A fresh data directory on tmpfs, or None (no tmpfs, too little room, or KTC_KAFKA_DATA_DIR=disk)."""
    if os.environ.get("KTC_KAFKA_DATA_DIR", "") == "disk" or not usable(root):
        return None
    sweep(root)
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root))
    _MADE.add(path)
    return path


def usable(root: Path) -> bool:
    try:
        return root.is_dir() and os.access(root, os.W_OK) and shutil.disk_usage(root).free >= MIN_FREE_BYTES
    except OSError:
        return False


def remove(path: Path | None) -> None:
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
        _MADE.discard(path)


def sweep(root: Path) -> None:
    """Remove the data directories of processes that no longer exist."""
    for path in root.glob(PREFIX + "*"):
        pid = path.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@atexit.register
def _remove_all() -> None:
    for path in list(_MADE):
        remove(path)
