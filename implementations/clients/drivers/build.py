"""What every driver's launcher shares: where a built driver lives in ktc's cache, the lock that makes one
build of it at a time (pytest-xdist workers and concurrent runs wait for each other, then find the finished
build), a stamp of the sources it was built from, and running a toolchain with its failure as ``Unavailable``.

A driver of library ``L`` at ``V`` is built into ``<cache>/clients/L/V/``; a ``.complete`` stamp holding the
digest of the driver's sources marks a finished build, so an edited driver is rebuilt and a current one costs a
``stat`` and a hash of a few small files.  The staging directory is renamed into place: a reader never sees half
a build.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from ktc.cache import cache_root, holding
from ktc.implementations.clients.library import Unavailable

HERE = Path(__file__).resolve().parent  # package data: the wheel carries the drivers' sources
STAMP = ".complete"
BUILD_TIMEOUT_S = 900.0


def build_dir(library: str, version: str) -> Path:
    return cache_root() / "clients" / library / version


def digest(files: list[Path], *extra: str) -> str:
    """sha256 of the sources (and of ``extra`` words such as the toolchain's version)."""
    hashed = hashlib.sha256()
    for path in files:
        hashed.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for word in extra:
        hashed.update(word.encode() + b"\0")
    return hashed.hexdigest()


def locked(target: Path):
    """Hold ``<target>.lock`` while ``target`` is built."""
    return holding(target.with_name(target.name + ".lock"))


def ensure_built(target: Path, stamp: str, make: Callable[[Path], None]) -> Path:
    """``target`` built by ``make(staging)`` unless a build stamped ``stamp`` is there already."""
    if _current(target, stamp):
        return target
    with locked(target):
        if _current(target, stamp):  # another worker built it while we waited
            return target
        staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
        try:
            make(staging)
            (staging / STAMP).write_text(stamp + "\n")
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _current(target: Path, stamp: str) -> bool:
    path = target / STAMP
    return path.exists() and path.read_text().strip() == stamp


def tool(name: str, why: str) -> str:
    """The toolchain program ``name`` on PATH, or ``Unavailable`` saying what to install."""
    found = shutil.which(name)
    if found is None:
        raise Unavailable(f"{name} is not on PATH: {why}")
    return found


def run(argv: list[str], cwd: Path, what: str, env: Mapping[str, str] | None = None) -> str:
    """Run one build step; ``Unavailable`` with the tail of its output when it fails or hangs."""
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired:
        raise Unavailable(
            f"{what} did not finish within {BUILD_TIMEOUT_S:.0f} s (is its registry reachable?)"
        ) from None
    except OSError as error:
        raise Unavailable(f"{what}: cannot run {argv[0]}: {error}") from None
    if done.returncode != 0:
        raise Unavailable(f"{what} failed (exit {done.returncode}): {tail(done.stdout + done.stderr)}")
    return done.stdout


def tail(output: str, lines: int = 3) -> str:
    """The last ``lines`` non-empty lines of ``output`` on one line."""
    kept = [line.strip() for line in output.splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "no output"
