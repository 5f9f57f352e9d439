"""mypy over ktc as it is installed, run from the clone: ``python -m ktc.suites.selftest.typecheck [mypy options]``.

Each of ktc's packages has one import name (``ktc.specs`` is the clone's ``specs/`` folder: pyproject.toml's
``package-dir``), and mypy finds a module only by its path.  So mypy reads a tree of symlinks laid out as the
wheel lays ktc out (``<tree>/ktc/specs -> <clone>/specs``, ``<tree>/ktc/audit -> <clone>/ktc/audit``), built
once per clone in ktc's cache beside mypy's incremental cache, and its report names the clone's files again.

What mypy checks and how strictly is pyproject.toml's ``[tool.mypy]``; which packages it checks is every
package of ktc but those of ``NOT_YET`` below, each with the reason it waits.  suites/selftest/test_types.py
holds the checked packages to zero errors.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from ktc.kafka.processes.provision import cache_root

ROOT = Path(__file__).resolve().parents[2]

# Packages not checked yet, each with the reason it waits (reports/ is strict in [tool.mypy] and checked).
# mutation/ and benchmarks/ are tools of the clone, not packages of ktc, and are not checked.
NOT_YET = {
    "ktc.plugin": "carries the verdict flow's rows; checked with it",
    "ktc.cli": "takes the targets' typed settings; checked with them",
    "ktc.implementations": "becomes targets declared as plug-ins; checked with them",
    "ktc.suites": "the tests read answers of a kind they know out of the Result union (trace[i].offset) and pass "
    "wrong types on purpose (bad-input tests): checking them needs narrowing helpers first",
}


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """Each package of ktc's ``package-dir`` with its folder in the clone (``ktc.specs`` -> ``<root>/specs``)."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    return {name: root / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


def links(root: Path = ROOT) -> dict[str, Path]:
    """The entries of the installed ``ktc/`` folder (relative name -> the clone's file or folder)."""
    dirs = package_dirs(root)
    entries = {p.name: p for p in dirs["ktc"].iterdir() if p.name != "__pycache__" and not p.name.startswith(".")}
    entries.update({name.removeprefix("ktc."): path for name, path in dirs.items() if name != "ktc"})
    return dict(sorted(entries.items()))


def tree(root: Path = ROOT) -> Path:
    """The symlink tree holding ``ktc/`` as installed; a new layout gets a new tree, made aside and renamed."""
    entries = links(root)
    digest = hashlib.sha256(repr(sorted((k, str(v)) for k, v in entries.items())).encode()).hexdigest()[:16]
    home = workdir(root) / f"tree-{digest}"
    if not home.is_dir():
        scratch = Path(tempfile.mkdtemp(dir=home.parent, prefix="tree-new-"))
        (scratch / "ktc").mkdir()
        for name, target in entries.items():
            (scratch / "ktc" / name).symlink_to(target)
        try:
            scratch.rename(home)
        except OSError:  # another run made it first: the same links
            shutil.rmtree(scratch)
    return home


def workdir(root: Path = ROOT) -> Path:
    """This clone's folder in ktc's cache: the symlink trees and mypy's incremental cache."""
    folder = cache_root() / "mypy" / hashlib.sha256(str(root).encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def targets(home: Path) -> list[str]:
    """mypy's ``-p``/``-m`` arguments: every package and module of ktc outside ``NOT_YET``."""
    args = ["-m", "ktc"]
    for entry in sorted((home / "ktc").iterdir()):
        name = f"ktc.{entry.name.removesuffix('.py')}"
        if name in NOT_YET or entry.name == "__init__.py":
            continue
        if (entry / "__init__.py").is_file():
            args += ["-p", name]
        elif entry.suffix == ".py":
            args += ["-m", name]
    return args


def run(options: list[str] | None = None, root: Path = ROOT) -> tuple[int, str]:
    """mypy's exit code and report (the clone's paths) over the checked packages."""
    return mypy([*(options or []), *targets(tree(root))], root)


def mypy(argv: list[str], root: Path = ROOT) -> tuple[int, str]:
    """mypy's exit code and report (the clone's paths) for ``argv``, with pyproject's settings and ktc's names."""
    home = tree(root)
    config = ["--config-file", str(root / "pyproject.toml"), "--cache-dir", str(workdir(root) / "cache")]
    env = {**os.environ, "MYPYPATH": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *config, *argv], cwd=workdir(root), env=env, capture_output=True, text=True
    )
    return done.returncode, readable(done.stdout + done.stderr, home, root)


def readable(report: str, home: Path, root: Path = ROOT) -> str:
    """mypy's report with each path in the tree replaced by the clone's path of the same file."""
    here = f"{Path.cwd()}/"
    pairs = sorted(((f"{home.name}/ktc/{name}", str(path)) for name, path in links(root).items()), reverse=True)
    for link, real in pairs:  # mypy names a file in its working directory, the tree's parent, by a relative path
        report = report.replace(f"{home.parent}/{link}", link).replace(link, real.removeprefix(here))
    return report


def main(argv: list[str] | None = None) -> int:
    code, report = run(sys.argv[1:] if argv is None else argv)
    print(report, end="")
    return code


if __name__ == "__main__":
    sys.exit(main())
