"""One installed namespace: the design card's top-level folders are installed as subpackages of ``ktc``.

pyproject.toml lists every package (setuptools cannot find packages across several mapped folders), so a
package added to the tree and not to the list would be missing from the wheel; and a module imported under a
second name (``suites.kip32`` beside ``ktc.suites.kip32``) would run twice, with two copies of its state.
The wheel's side (exactly one top-level name in site-packages) is test_installed_wheel.py's.
"""

from __future__ import annotations

import sys
import tomllib
from collections import Counter
from pathlib import Path

from ktc import paths

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def packages_in_the_tree() -> set[str]:
    found = set()
    for name, folder in PYPROJECT["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *rel)))
    return found


def test_pyproject_lists_every_package_of_the_tree_and_no_other():
    listed = set(PYPROJECT["packages"])
    assert listed == packages_in_the_tree(), (
        f"missing from pyproject.toml: {sorted(packages_in_the_tree() - listed)}; "
        f"listed but absent: {sorted(listed - packages_in_the_tree())}"
    )


def test_every_mapped_folder_is_a_top_level_folder_of_the_clone_installed_under_ktc():
    mapped = PYPROJECT["package-dir"]
    assert all(name == "ktc" or name == f"ktc.{folder}" for name, folder in mapped.items()), mapped
    assert paths.suites_dir() == (ROOT / "suites").resolve()


def test_no_module_of_this_run_is_loaded_under_two_names():
    """The suites this process collected, and everything they import, are each in sys.modules once."""
    files = Counter(
        Path(m.__file__).resolve()
        for m in list(sys.modules.values())
        if getattr(m, "__file__", None)
        and Path(m.__file__).resolve().is_relative_to(ROOT)
        and ".venv" not in Path(m.__file__).parts
    )
    twice = sorted(str(f.relative_to(ROOT)) for f, n in files.items() if n > 1)
    assert not twice, f"loaded under two names: {twice}"
    assert "ktc.suites.selftest.test_namespace" in sys.modules and "suites" not in sys.modules
