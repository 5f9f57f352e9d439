"""ktc's clock preload (clock_c/ktcclock.c), compiled once with the C compiler into the cache.

``build`` returns ``<cache>/ktcclock/<source digest>/ktcclock.so`` (``$KTC_CACHE``, default
``~/.cache/ktc``), compiling it with ``cc`` first unless a current one is cached; the build is
atomic (compile to a temporary name, rename), so concurrent runs never load half a library.
``ShimError`` says why it cannot be had (no compiler, a failed build), in one line.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import provision

SOURCE = Path(__file__).resolve().parent / "clock_c" / "ktcclock.c"
COMPILERS = ("cc", "gcc", "clang")
BUILD_TIMEOUT_S = 120.0


class ShimError(RuntimeError):
    """The clock preload cannot be built here."""


def library_path(source: Path = SOURCE) -> Path:
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    return provision.cache_root() / "ktcclock" / digest / "ktcclock.so"


def build(source: Path = SOURCE) -> Path:
    """The compiled preload, built first when the cache has no current one."""
    target = library_path(source)
    if target.exists():
        return target
    compiler = next((found for name in COMPILERS if (found := shutil.which(name))), None)
    if compiler is None:
        raise ShimError("no C compiler (cc, gcc or clang) on PATH to build ktc's clock preload (apt-get install gcc)")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkstemp(prefix="ktcclock-", suffix=".so", dir=target.parent)[1])
    try:
        compile_into(compiler, source, partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def compile_into(compiler: str, source: Path, output: Path) -> None:
    cmd = [compiler, "-O2", "-shared", "-fPIC", "-o", str(output), str(source), "-ldl"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ShimError(f"could not compile ktc's clock preload with {compiler}: {error}") from None
    if done.returncode != 0:
        tail = " | ".join(line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip())[-300:]
        raise ShimError(f"{compiler} could not compile {source.name} (exit {done.returncode}): {tail}")
