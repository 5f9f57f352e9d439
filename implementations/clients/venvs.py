"""Python client libraries: each driver in a venv of its own in ktc's cache, at its pinned version.

    <cache>/clients/python/<library>-<version>/       a venv with the library (pip from PyPI, once)

The venv is made with uv when ktc's cache has it (what ``./run`` fetched), else with the venv module and pip;
it is built under a temporary name and renamed, under a lock, so two workers never share a half-made one.  A
venv or a package that cannot be had (no network, an index that refuses the version) raises ``Unavailable``
with pip's last line: the library's rows are then ``not run`` with that reason.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ktc.cache import cache_root, holding
from ktc.implementations.clients.library import Library, Unavailable

DRIVERS = Path(__file__).resolve().parent / "python_drivers"
INSTALL_TIMEOUT_S = 600
# what each library's venv holds beyond the library: the codecs its compressed batches need
PACKAGES = {
    "kafka-python": ("kafka-python=={version}", "lz4", "python-snappy", "zstandard", "crc32c"),
    "aiokafka": ("aiokafka[lz4,snappy,zstd]=={version}",),
    "confluent-kafka": ("confluent-kafka=={version}",),
}
SCRIPTS = {
    "kafka-python": "kafka_python_driver.py",
    "aiokafka": "aiokafka_driver.py",
    "confluent-kafka": "confluent_kafka_driver.py",
}


def launch(library: Library, version: str) -> list[str]:
    """The argv of the library's driver, its venv made first if it is not in the cache yet."""
    venv = cache_root() / "clients" / "python" / f"{library.name}-{version}"
    python = venv / "bin" / "python"
    if not python.exists():
        build(venv, [p.format(version=version) for p in PACKAGES[library.name]])
    return [str(python), str(DRIVERS / SCRIPTS[library.name])]


def build(venv: Path, packages: list[str]) -> None:
    venv.parent.mkdir(parents=True, exist_ok=True)
    with holding(venv.parent / f".{venv.name}.lock"):
        if (venv / "bin" / "python").exists():
            return
        partial = Path(tempfile.mkdtemp(prefix=f".{venv.name}.", dir=venv.parent))
        try:
            install(partial, packages)
            partial.rename(venv)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise


def install(venv: Path, packages: list[str]) -> None:
    uv = cache_root() / "uv" / "bin" / "uv"
    if uv.exists():
        steps = [
            [str(uv), "venv", "--quiet", "--python", sys.executable, str(venv)],
            [str(uv), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *packages],
        ]
    else:
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *packages],
        ]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise Unavailable(f"cannot install {' '.join(packages)}: {error}") from None
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            raise Unavailable(f"cannot install {' '.join(packages)} from PyPI: {said}")
