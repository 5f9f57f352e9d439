"""Two trees of ktc measured in one run, in alternation: this clone's and another commit's.

A baseline measured in the same minutes as the figure beside it, so that a loaded machine slows both alike.
``checkout(rev)`` writes a commit's files to a temporary folder (``git archive``; nothing registered in the
repository), and ``layout(root)`` lays a tree out as installed: a ``ktc/`` of symlinks, as pyproject.toml's
``package-dir`` maps the clone's folders (``ktc.specs`` -> ``specs/``).  ``run(layout, code, args)`` runs
Python code in a fresh interpreter that imports ``ktc`` from that layout and prints one JSON object last.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout(rev: str) -> Path:
    """The files of commit ``rev`` in a new temporary folder."""
    where = Path(tempfile.mkdtemp(prefix="ktc-baseline-"))
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"git archive {rev}: {archive.stderr.decode().strip()}")
    tar = where / "tree.tar"
    tar.write_bytes(archive.stdout)
    with tarfile.open(tar) as files:
        files.extractall(where / "tree", filter="data")
    tar.unlink()
    return where / "tree"


def layout(root: Path) -> Path:
    """A folder holding ``ktc/`` as installed from ``root``: the core's entries and each mapped package."""
    dirs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    home = Path(tempfile.mkdtemp(prefix="ktc-layout-"))
    (home / "ktc").mkdir()
    core = root / dirs["ktc"]
    for entry in core.iterdir():
        if entry.name != "__pycache__":
            (home / "ktc" / entry.name).symlink_to(entry)
    for name, folder in dirs.items():
        if name != "ktc":
            (home / "ktc" / name.removeprefix("ktc.")).symlink_to(root / folder)
    return home


def run(home: Path, code: str, args: list[str]) -> dict:
    """``code`` run by this interpreter with ``home`` first on its path; the last line it prints, as JSON."""
    env = {**os.environ, "PYTHONPATH": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=home, env=env, capture_output=True, text=True, timeout=1800
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise SystemExit(f"the run in {home} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def spread(values: list[float]) -> str:
    """``median (min-max)`` of a figure's samples."""
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"
